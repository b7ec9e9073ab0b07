"""Errors of the link-analysis package (``ranking.core.linkgraph``).

The glue decides what to do with them: commands turn them into ``CommandError``.
"""

from __future__ import annotations

from pathlib import Path


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
