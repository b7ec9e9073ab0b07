"""The recent output of each process ``manage.py up`` runs, kept on disk for the admin.

Layer: the operations app, plain Python (no Django): the supervisor (:mod:`.supervisor`)
writes, the Machines page (``crawler.admin.machines``) reads.

:class:`ChildLog` is the one writer of ``<directory>/<child>.log``: each line the child
printed (stdout and stderr together), appended as it comes; when the file passes
``max_bytes`` it becomes ``<child>.log.1`` (the one before is dropped) and a new file starts,
so a child's log never takes more than about twice ``max_bytes``. :func:`last_lines` reads
the newest lines of both, never more than a bounded tail of the files.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

LOG_DIR = "logs"  # in VAR_DIRECTORY: where manage.py up keeps its children's logs
MAX_BYTES = 1024 * 1024
MAX_LINE = 4000  # characters of one line kept
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def log_path(directory: str | os.PathLike[str], child: str) -> Path:
    """``<directory>/<child>.log``; ValueError for a name that is not a plain file name."""
    if not _NAME.match(child) or child.startswith("."):
        raise ValueError(f"not a child's name: {child!r}")
    return Path(directory) / f"{child}.log"


class ChildLog:
    """Appends one child's lines to its log file, rotating at ``max_bytes``. Thread-safe."""

    def __init__(self, directory: str | os.PathLike[str], child: str,
                 max_bytes: int = MAX_BYTES) -> None:
        self.path = log_path(directory, child)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._file = open(self.path, "ab")

    def write(self, line: str) -> None:
        data = (line.rstrip("\r\n")[:MAX_LINE] + "\n").encode("utf-8", "replace")
        with self._lock:
            if self._file.closed:
                return
            if self._file.tell() + len(data) > self.max_bytes:
                self._file.close()
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                self._file = open(self.path, "ab")
            self._file.write(data)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _tail(path: Path, n: int, max_bytes: int) -> list[str]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
            partial = size > max_bytes
    except FileNotFoundError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    if partial and lines:
        lines = lines[1:]  # the first line read may be cut
    return lines[-n:] if n else []


def last_lines(directory: str | os.PathLike[str], child: str, n: int = 50,
               max_bytes: int = 256 * 1024) -> list[str]:
    """The newest ``n`` lines ``child`` printed (oldest first), from its log and the rotated
    one before it; [] when it has none. Reads at most ``max_bytes`` of each file."""
    path = log_path(directory, child)
    lines = _tail(path, n, max_bytes)
    if len(lines) < n:
        lines = _tail(path.with_name(path.name + ".1"), n - len(lines), max_bytes) + lines
    return lines
