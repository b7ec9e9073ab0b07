"""Style and architecture are part of the test run: ruff, and the import contracts in pyproject.toml
(no core package imports Django or Celery; indexer imports none of the other apps; crawler.core
imports neither ranking nor linkgraph; ranking.core does not import crawler; linkgraph imports
neither crawler nor ranking; ranking.core's stage packages depend one way)."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

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
    assert "Contracts: 8 kept, 0 broken" in result.stdout, result.stdout


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
