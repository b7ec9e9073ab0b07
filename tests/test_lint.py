"""Style and architecture are part of the test run: ruff; the import contracts in pyproject.toml
(no core package imports Django or Celery; the apps depend one way; indexer imports none of the
other apps; ranking.core's stages depend one way; and the rest listed there); the sizes a
newcomer can hold in mind (modules, functions, package folders); no import cycle between the
product's modules; and imports inside functions only with a comment saying why."""

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    path = BIN / name
    return str(path) if path.exists() else (shutil.which(name) or name)


def test_ruff():
    result = subprocess.run([tool("ruff"), "check", "."], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts():
    result = subprocess.run([tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 9 kept, 0 broken" in result.stdout, result.stdout


# what a newcomer can hold in mind: the limits of issue 17 ("modules under 600 lines, functions
# under 80"), over every engine, benchmark and script module (migrations and tests excepted)
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def engine_modules() -> list[Path]:
    skip = {".venv", "migrations", "tests", "var", "node_modules"}
    return [path for path in sorted(ROOT.rglob("*.py"))
            if not skip.intersection(path.relative_to(ROOT).parts)]


def test_modules_stay_small():
    long = {str(path.relative_to(ROOT)): lines for path in engine_modules()
            if (lines := path.read_text(encoding="utf-8").count("\n")) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_functions_stay_short():
    long = []
    for path in engine_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines})")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_engine_cites_only_what_the_repository_holds():
    """Docstrings cite the seed documents by title or docs/architecture.md, never files that
    sit outside the repository."""
    outside = ("../shared", "yioop-notes", "ARCHITECTURE.md", "STYLE.md")
    found = [f"{path.relative_to(ROOT)}: {word}" for path in engine_modules()
             if path.relative_to(ROOT).parts[0] not in ("bench", "scripts")
             for word in outside if word in path.read_text(encoding="utf-8")]
    assert not found, found


# issue 32: rooms a newcomer can read. A package folder holds at most 20 modules directly, the
# product's modules import one another without cycles, and an import inside a function is kept
# only for an optional dependency or Django's loading order, with a comment saying why.
MAX_PACKAGE_MODULES = 20


def product_packages() -> list[str]:
    """The apps the import contracts cover (pyproject's ``root_packages``)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["root_packages"])


def product_modules() -> list[Path]:
    return [path for path in engine_modules()
            if path.relative_to(ROOT).parts[0] in product_packages()]


def test_package_folders_stay_small():
    crowded = {}
    for init in ROOT.rglob("__init__.py"):
        folder = init.parent
        parts = folder.relative_to(ROOT).parts
        if {".venv", "migrations", "tests", "var", "node_modules"}.intersection(parts):
            continue
        modules = len(list(folder.glob("*.py")))
        if modules > MAX_PACKAGE_MODULES:
            crowded[str(folder.relative_to(ROOT))] = modules
    assert not crowded, f"package folders over {MAX_PACKAGE_MODULES} modules: {crowded}"


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, with an
    explicit stack so deep import chains cannot overflow Python's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(
                        graph.find_modules_directly_imported_by(target)))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_import_cycles():
    graph = grimp.build_graph(*product_packages(), include_external_packages=False)
    cycles = import_cycles(graph)
    assert not cycles, f"modules that import each other, directly or round a loop: {cycles}"


def test_import_cycle_check_finds_a_loop():
    graph = grimp.ImportGraph()
    for module in ("a", "a.one", "a.two", "a.three", "a.lone"):
        graph.add_module(module)
    graph.add_import(importer="a.one", imported="a.two")
    graph.add_import(importer="a.two", imported="a.three")
    graph.add_import(importer="a.three", imported="a.one")
    graph.add_import(importer="a.lone", imported="a.one")
    assert import_cycles(graph) == [["a.one", "a.three", "a.two"]]


def function_imports(path: Path) -> list[tuple[int, str]]:
    """(line, source line) of each import statement inside a function of ``path``."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    found.add((inner.lineno, lines[inner.lineno - 1]))
    return sorted(found)


def comment_above(lines: list[str], lineno: int) -> bool:
    """Whether the block of import lines holding line ``lineno`` (1-based) has a comment on the
    line right above it (a comment line, or a ``try:`` that says why)."""
    above = lineno - 2
    while above >= 0 and lines[above].strip().startswith(("import ", "from ")):
        above -= 1
    return above >= 0 and "#" in lines[above]


def test_imports_inside_functions_say_why():
    """An import inside a function hides a cycle unless it is for an optional dependency or
    for Django's loading order: each says which in a comment on its line or the line above."""
    silent = []
    for path in product_modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        for lineno, line in function_imports(path):
            if "#" not in line and not comment_above(lines, lineno):
                silent.append(f"{path.relative_to(ROOT)}:{lineno} {line.strip()}")
    assert not silent, f"imports inside functions without a comment saying why: {silent}"
