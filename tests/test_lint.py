"""Style and architecture are part of the test run: ruff, and the import contracts of STYLE.md
(no core package imports Django or Celery; indexer imports none of the other apps; crawler.core
imports neither ranking nor linkgraph; ranking.core does not import crawler; linkgraph imports
neither crawler nor ranking)."""

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
    assert "Contracts: 7 kept, 0 broken" in result.stdout, result.stdout
