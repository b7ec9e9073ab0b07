"""What an archive crawl reads, and the record pointers its schedules carry.

Layer: ``crawler.core.archive``. The glue (``crawler.selectors``) builds an
:class:`ArchiveSource` from the crawl's row and puts it in ``CrawlConfig.archive``; queue
servers list records of it (:mod:`.queue`), fetchers read them (:mod:`.records`). A schedule of
an archive crawl is a list of urls, as a web crawl's, plus one pointer per url saying where its
record is (JSON lists on the wire, :func:`pointers_to_wire` / :func:`pointers_from_wire`):

* ``["w", file, offset, length, inner, size, original]``: a WARC record. ``file`` is a name
  relative to the source's folder; ``offset`` and ``length`` the bytes of the record (of its
  gzip member in a ``.warc.gz``) in the file; ``inner`` where the record starts in the inflated
  member (0 when every record has its own member, as WARC files are meant to be written) and
  ``size`` its inflated size. ``original`` is null, or for a revisit record the pointer of the
  response whose payload it repeats;
* ``["c", shard, partition, start, summary_length, cache_offset, cache_length, end, crc,
  doc_type]``: a page an earlier crawl stored, in its queue server ``shard``'s (``qs<n>``)
  bundle: its bytes ``start`` to ``end`` (crc32 ``crc``) of ``documents/partition_<p>.txt.gz``
  (:mod:`indexer.core.documents.store`).

Pointers name files by relative path only, checked to stay inside the source's folder. A
WARC source's own path may be confined to configured folders (``roots``, the settings'
``ARCHIVE_ROOTS``): :func:`confined` is the one check, used by the admin's validation and by
the listing.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WARC_SUFFIXES = (".warc", ".warc.gz")
# a record inflating to more than this is skipped (skipped.TOO_LARGE): the settings'
# ARCHIVE_MAX_RECORD_BYTES, which the glue passes in
DEFAULT_MAX_RECORD_BYTES = 256 << 20


class ArchiveKind(enum.StrEnum):
    WARC = "warc"     # a WARC file, or a folder of them
    CRAWL = "crawl"   # an earlier crawl's stored pages


class PointerError(ValueError):
    """A record pointer of the wrong shape, or naming a file outside its source."""


@dataclass(frozen=True, slots=True)
class ArchiveSource:
    """The source of an archive crawl. ``path``: the WARC file or folder (WARC), or the work
    directory whose ``qs<n>/IndexData<timestamp>`` folders hold the earlier crawl (CRAWL);
    ``timestamp``: that crawl's (CRAWL only); ``max_record_bytes``: a WARC record whose
    inflated size (or whose start inside its gzip member) is larger is skipped, not read;
    ``roots``: when given, the folders a WARC source must be inside (:func:`confined`)."""

    kind: ArchiveKind
    path: str
    timestamp: int = 0
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    roots: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        """The folder pointer file names are relative to."""
        path = Path(self.path)
        return path.parent if self.kind is ArchiveKind.WARC and path.is_file() else path

    def warc_files(self) -> list[str]:
        """The WARC files of the source (``.warc`` and ``.warc.gz``), relative to
        :attr:`root`, sorted by name; a folder is searched recursively (by the queue server
        that lists the crawl's records, when it starts: never in a web request). Empty when
        the source is outside its :attr:`roots`; a file whose links lead out of the folder
        is left out (:meth:`file` would refuse it)."""
        path = Path(self.path)
        if self.roots and confined(self.path, self.roots) is None:
            return []
        if path.is_file():
            return [path.name] if path.name.endswith(WARC_SUFFIXES) else []
        if not path.is_dir():
            return []
        real = path.resolve()
        return sorted(str(p.relative_to(path)) for p in path.rglob("*")
                      if p.name.endswith(WARC_SUFFIXES) and p.is_file()
                      and p.resolve().is_relative_to(real))

    def file(self, name: str) -> Path:
        """The file ``name`` (relative, from a pointer) under :attr:`root`."""
        root = self.root.resolve()
        target = (root / name).resolve()
        if not target.is_relative_to(root) or name.startswith("/"):
            raise PointerError(f"{name!r} is not inside {root}")
        return target


@dataclass(frozen=True, slots=True)
class WarcPointer:
    file: str
    offset: int
    length: int
    inner: int
    size: int
    original: WarcPointer | None = None

    def to_wire(self) -> list[Any]:
        return ["w", self.file, self.offset, self.length, self.inner, self.size,
                None if self.original is None else self.original.to_wire()]


@dataclass(frozen=True, slots=True)
class StoredPointer:
    shard: str
    partition: int
    start: int
    summary_length: int
    cache_offset: int
    cache_length: int
    end: int
    crc: int
    doc_type: int

    def to_wire(self) -> list[Any]:
        return ["c", self.shard, self.partition, self.start, self.summary_length,
                self.cache_offset, self.cache_length, self.end, self.crc, self.doc_type]


Pointer = WarcPointer | StoredPointer


def confined(path: str, roots: Iterable[str | os.PathLike[str]]) -> Path | None:
    """``path`` with its symbolic links followed, when it is absolute and inside one of
    ``roots`` both as written (normalised, without looking at the file system) and once its
    links are followed; None otherwise. Nothing outside the roots as written is looked up,
    so a None says nothing about what exists there."""
    if not path or "\x00" in path or not os.path.isabs(path):
        return None
    written = Path(os.path.normpath(path))
    folders = [Path(os.path.normpath(os.path.abspath(root))) for root in roots]
    if not any(written.is_relative_to(folder) for folder in folders):
        return None
    real = Path(os.path.realpath(path))
    if not any(real.is_relative_to(os.path.realpath(folder)) for folder in folders):
        return None
    return real


def too_large(pointer: WarcPointer, cap: int) -> str:
    """Why the record ``pointer`` names is too large to read (an empty string when it is
    not): it inflates to more than ``cap`` bytes, or starts more than ``cap`` bytes into its
    gzip member (reading it would inflate all that first)."""
    if pointer.size > cap:
        return f"the record inflates to {pointer.size} bytes, more than the cap of {cap}"
    if pointer.inner > cap:
        return (f"the record starts {pointer.inner} bytes into its gzip member, past the cap "
                f"of {cap}")
    return ""


def pointer_from_wire(row: Any) -> Pointer:
    """A pointer from its JSON list; raises :class:`PointerError` on anything odd."""
    try:
        if not isinstance(row, list) or not row:
            raise PointerError("a record pointer is a non-empty list")
        if row[0] == "w" and len(row) == 7:
            original = None if row[6] is None else pointer_from_wire(row[6])
            if original is not None and not isinstance(original, WarcPointer):
                raise PointerError("a revisit's original is a WARC record")
            return WarcPointer(_name(row[1]), *(_count(v) for v in row[2:6]), original)
        if row[0] == "c" and len(row) == 10:
            return StoredPointer(_name(row[1]), *(_count(v) for v in row[2:10]))
    except (TypeError, ValueError) as exc:
        raise PointerError(f"bad record pointer: {exc}") from None
    raise PointerError(f"bad record pointer {str(row)[:100]}")


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value or "\x00" in value:
        raise PointerError("a pointer's file is a non-empty name")
    return value


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise PointerError("a pointer's numbers are counts")
    return value


def pointers_to_wire(pointers: tuple[Pointer, ...]) -> list[list[Any]]:
    return [p.to_wire() for p in pointers]


def pointers_from_wire(rows: Any) -> tuple[Pointer, ...]:
    if not isinstance(rows, list):
        raise PointerError("record pointers come as a list")
    return tuple(pointer_from_wire(row) for row in rows)
