"""docs/architecture.md stays true to the code (issue 32): every file and folder it names (a
backticked path, always written from the repository's root), every dotted module or name
(``crawler.core.queue_server.server.QueueServerCore``), every class (a backticked CamelCase name) and
every ``manage.py`` command exists."""

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
APPS = ("searchsite", "operations", "searchindex", "crawler", "classifiers", "indexer",
        "linkgraph", "querylog", "ranking")
SKIP = {".venv", "migrations", "tests", "var", "node_modules", ".git"}


def named() -> list[str]:
    """The backticked names of the page, outside fenced code blocks."""
    text = re.sub(r"```.*?```", "", DOC.read_text(encoding="utf-8"), flags=re.S)
    return re.findall(r"`([^`\n]+)`", text)


@cache
def definitions() -> dict[str, set[str]]:
    """Module path (dotted) -> the names it defines at any depth (classes, functions, constants)."""
    found: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if SKIP.intersection(parts) or parts[0] not in APPS:
            continue
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.ImportFrom):
                names.update(alias.asname or alias.name for alias in node.names)
        found[module] = names
    return found


def classes() -> set[str]:
    return {name for names in definitions().values() for name in names if name[:1].isupper()}


def missing(token: str) -> str | None:
    """Why ``token`` names nothing in the repository, or None when it does (or is not a name
    of the code: a url path, a setting's value, prose)."""
    if token.startswith("manage.py "):
        command = token.split()[1]
        commands = {p.stem for p in ROOT.glob("*/management/commands/*.py")}
        return None if command in commands else f"no management command {command!r}"
    if "/" in token and not token.startswith("/") and " " not in token:
        return None if (ROOT / token).exists() else "no such file or folder"
    dotted = re.fullmatch(r"[a-z_]+(\.[A-Za-z_][A-Za-z0-9_]*)+", token)
    if dotted and token.split(".")[0] in APPS:
        parts = token.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            if module in definitions():
                rest = parts[cut:]
                if not rest or rest[0] in definitions()[module]:
                    return None
                return f"{module} defines no {rest[0]!r}"
        return "no such module"
    if re.fullmatch(r"[A-Z][a-z]+[A-Z][A-Za-z]*", token):
        return None if token in classes() else "no class of that name"
    return None


def test_every_name_on_the_architecture_page_exists():
    wrong = {token: why for token in named() if (why := missing(token))}
    assert not wrong, f"docs/architecture.md names what the code does not hold: {wrong}"


def test_the_check_catches_what_does_not_exist():
    assert missing("crawler/no_such_module.py")
    assert missing("manage.py no_such_command")
    assert missing("indexer.core.no_such_module")
    assert missing("NoSuchClassAnywhere")
    assert missing("tests/test_architecture_doc.py") is None
    assert missing("manage.py up") is None
