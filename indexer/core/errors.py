"""Errors raised by the on-disk index (``indexer.core``).

Layer: ``indexer.core``. Every reader and writer in this package raises these and never
swallows them; the glue (management commands, tasks, views) decides what happens next.

Hierarchy::

    IndexStoreError
    ├── CorruptIndexError      a file failed its magic, checksum, length or structure check
    │   └── IndexFormatTooNew  a file was written by a newer format version than we read
    ├── IndexLockedError       another writer (or dictionary updater) holds the lock
    └── IndexStateError        a call made in the wrong state (append after close, ...)

The files of link analysis (the web graph of ``linkgraph.core`` and the per-url score file of
:mod:`indexer.core.signals.link_scores`, which the crawler and search read) raise their own::

    LinkGraphError
    ├── GraphNotFound          no graph (or score file) where one was expected
    └── CorruptGraphError      a stored graph or score file fails its checks
        └── GraphFormatTooNew  written by a newer format version than this code reads
"""

from __future__ import annotations

import os
from pathlib import Path


class IndexStoreError(Exception):
    """Base class of every error raised by the on-disk index."""


class CorruptIndexError(IndexStoreError):
    """A file of the index is damaged. ``path`` names the file, ``reason`` says what failed."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class IndexFormatTooNew(CorruptIndexError):
    """A file carries a format version newer than this code understands."""

    def __init__(self, path: str | os.PathLike[str], found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(path, f"format version {found} is newer than supported {supported}")


class IndexLockedError(IndexStoreError):
    """Another process holds the writer (or updater) lock of this bundle."""


class IndexStateError(IndexStoreError):
    """An operation was called in a state that does not allow it."""


class LinkGraphError(Exception):
    """Base class of every link-analysis error."""


class GraphNotFound(LinkGraphError):
    """No web graph (or scores file) where one was expected."""


class CorruptGraphError(LinkGraphError):
    """A stored graph or scores file fails its checks (size, dtype, checksum, version)."""

    def __init__(self, path: str | Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


class GraphFormatTooNew(CorruptGraphError):
    """A stored file was written by a newer format version than this code reads."""
