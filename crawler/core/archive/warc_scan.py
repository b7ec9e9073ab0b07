"""Walk WARC files record by record: where each record is, what it says it is, which are bad.

Layer: ``crawler.core.archive``. A queue server of an archive crawl (:mod:`.queue`) scans its
source's files in order, resumably (:class:`ScanPosition`), and turns the records it owns into
schedules of pointers; the fetchers read the records themselves (:mod:`.records`). The scan
reads only what it needs to know where records start and end: the WARC header block and the
first bytes of each block (does it hold an HTTP message?), and it skips the rest.

WARC files (ISO 28500, WARC 1.0 and 1.1): a record is ``WARC/1.x`` CRLF, named header fields,
CRLF, ``Content-Length`` bytes of block, CRLF CRLF. A ``.warc.gz`` is a series of gzip members,
normally one record each (so a record can be read on its own); a member holding several records
is read too (pointers then give the record's start inside the inflated member).

Bad records are reported and skipped, never fatal (:class:`BadRecord`, reasons of
:mod:`.skipped`): a gzip member that is cut or damaged (the scan goes on at the next gzip
header in the file), a block shorter or longer than its ``Content-Length`` (in a ``.warc.gz``
the next member; in a ``.warc``, the next ``WARC/1.x`` line after a blank line), a header that
is not a WARC header. Whether a record is an HTTP response, or a revisit with an original, is
for the caller to decide from :class:`ScannedRecord`.
"""

from __future__ import annotations

import mmap
import re
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from crawler.core.archive import skipped
from crawler.core.archive.source import WarcPointer

CHUNK = 1 << 16
MAX_HEADER = 1 << 16          # a WARC header block longer than this is not one
BLOCK_PEEK = 16               # bytes of a block kept: enough to see "HTTP/1.1 200"
_VERSION = re.compile(rb"WARC/(?:1\.[01]|0\.1[78])\Z")
_GZIP_MAGIC = b"\x1f\x8b\x08"
_NEXT_PLAIN = re.compile(rb"\r\n\r\nWARC/1\.[01]\r\n")


@dataclass(frozen=True, slots=True)
class ScanPosition:
    """Where a scan goes on: file ``file_index`` of the source's list, at byte ``offset`` (of
    a gzip member in a ``.warc.gz``) and ``inner`` bytes into that member, inflated."""

    file_index: int = 0
    offset: int = 0
    inner: int = 0


@dataclass(frozen=True, slots=True)
class ScannedRecord:
    """One well-formed record: its pointer, its WARC header fields (lower-case names), the
    first bytes of its block, and where the scan goes on after it."""

    pointer: WarcPointer
    headers: dict[str, str]
    block_head: bytes
    after: ScanPosition

    def header(self, name: str) -> str:
        return self.headers.get(name, "")

    @property
    def warc_type(self) -> str:
        return self.header("warc-type").lower()

    @property
    def uri(self) -> str:
        return self.header("warc-target-uri").strip("<>")


@dataclass(frozen=True, slots=True)
class BadRecord:
    """A record skipped: why (a reason of :mod:`.skipped`), where, its uri if it said one."""

    reason: str
    file: str
    offset: int
    uri: str
    message: str
    after: ScanPosition


class _Reader(ABC):
    """Bytes of a file or of one inflated gzip member, read forward: ``pos`` counts the bytes
    taken (inflated bytes of the member; file offset for a plain file)."""

    def __init__(self, pos: int) -> None:
        self._buf = bytearray()
        self.pos = pos
        self.done = False
        self.error: str | None = None

    @abstractmethod
    def _more(self) -> bytes:
        """The next bytes of the record stream (empty at its end)."""

    def _fill(self, want: int) -> None:
        while len(self._buf) < want and not self.done:
            chunk = self._more()
            if chunk:
                self._buf += chunk

    def peek(self, n: int) -> bytes:
        self._fill(n)
        return bytes(self._buf[:n])

    def read(self, n: int) -> bytes:
        self._fill(n)
        out = bytes(self._buf[:n])
        del self._buf[:n]
        self.pos += len(out)
        return out

    def skip(self, n: int) -> int:
        """Take ``n`` bytes without keeping them; the number taken (fewer at the end)."""
        taken = 0
        while taken < n:
            if not self._buf:
                self._fill(min(n - taken, CHUNK))
                if not self._buf:
                    break
            step = min(n - taken, len(self._buf))
            del self._buf[:step]
            taken += step
        self.pos += taken
        return taken

    def read_until(self, marker: bytes, limit: int) -> bytes | None:
        """The bytes up to and including ``marker``, or None when it does not come within
        ``limit`` bytes (what was read stays)."""
        searched = 0
        while True:
            at = self._buf.find(marker, max(0, searched - len(marker)))
            if at >= 0:
                return self.read(at + len(marker))
            searched = len(self._buf)
            if searched >= limit or self.done:
                return None
            self._fill(searched + CHUNK)
            if len(self._buf) == searched:
                return None

    def at_end(self) -> bool:
        self._fill(1)
        return not self._buf


class _PlainReader(_Reader):
    def __init__(self, handle: BinaryIO, offset: int) -> None:
        super().__init__(offset)
        self._handle = handle
        handle.seek(offset)

    def _more(self) -> bytes:
        chunk = self._handle.read(CHUNK)
        if not chunk:
            self.done = True
        return chunk


class _MemberReader(_Reader):
    """One gzip member from ``offset``, inflated; ``end`` is the member's end in the file
    once it is known (its last byte was read), ``error`` what went wrong with it."""

    def __init__(self, handle: BinaryIO, offset: int) -> None:
        super().__init__(0)
        self._handle = handle
        self.offset = offset
        handle.seek(offset)
        self._inflate = zlib.decompressobj(31)
        self._fed = 0
        self.end: int | None = None

    def _more(self) -> bytes:
        data = self._inflate.unconsumed_tail
        if not data:
            data = self._handle.read(CHUNK)
            self._fed += len(data)
            if not data:
                self.done = True
                self.error = "the file ends inside a gzip member"
                return b""
        try:
            out = self._inflate.decompress(data, CHUNK)
        except zlib.error as exc:
            self.done = True
            self.error = f"damaged gzip data: {exc}"
            return b""
        if self._inflate.eof:
            self.done = True
            self.end = self.offset + self._fed - len(self._inflate.unused_data)
        return out


@dataclass(slots=True)
class _Parsed:
    start: int
    end: int
    headers: dict[str, str]
    block_head: bytes
    problem: str | None = None   # a reason of .skipped
    message: str = ""


def _parse_headers(block: bytes) -> dict[str, str] | None:
    lines = block.split(b"\r\n")
    if not _VERSION.match(lines[0].strip()):
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            return None
        headers[name.strip().decode("latin-1").lower()] = value.strip().decode("utf-8",
                                                                              "replace")
    return headers


def _parse_one(reader: _Reader) -> _Parsed | None:
    """The record at the reader's position; None at the end (only line breaks left)."""
    while reader.peek(2) == b"\r\n":  # stray line breaks between records
        reader.read(2)
    if reader.at_end():
        return None
    start = reader.pos
    block = reader.read_until(b"\r\n\r\n", MAX_HEADER)
    headers = None if block is None else _parse_headers(block[:-4])
    if headers is None:
        return _Parsed(start, reader.pos, {}, b"", skipped.MALFORMED,
                       "no WARC/1.x header block")
    try:
        length = int(headers.get("content-length", ""))
        if length < 0:
            raise ValueError
    except ValueError:
        return _Parsed(start, reader.pos, headers, b"", skipped.MALFORMED,
                       "no valid Content-Length")
    head = reader.read(min(length, BLOCK_PEEK))
    got = len(head) + reader.skip(length - len(head))
    parsed = _Parsed(start, reader.pos, headers, head)
    if got < length:
        parsed.problem = skipped.BAD_LENGTH
        parsed.message = f"Content-Length {length}, but the record ends after {got} bytes"
        return parsed
    trailer = reader.read(4)
    parsed.end = reader.pos
    if trailer != b"\r\n\r\n":
        parsed.problem = skipped.BAD_LENGTH
        parsed.message = (f"Content-Length {length}, but the block is not followed by a "
                          "blank line there")
    return parsed


def scan(root: Path, files: list[str], start: ScanPosition) -> Iterator[ScannedRecord | BadRecord]:
    """Every record of ``files`` (names under ``root``) from ``start`` on, in file order. A
    file that cannot be read (gone since the listing was made) is one bad record."""
    for index in range(start.file_index, len(files)):
        name = files[index]
        first = start if index == start.file_index else ScanPosition(index)
        path = root / name
        try:
            if name.endswith(".gz"):
                yield from _scan_gzip(path, name, index, first.offset, first.inner)
            else:
                yield from _scan_plain(path, name, index, first.offset)
        except OSError as exc:  # gone or unreadable since the crawl started: the next file
            yield BadRecord(skipped.UNREADABLE, name, first.offset, f"{name}@{first.offset}",
                            f"{type(exc).__name__}: {exc}", ScanPosition(index + 1))


def _bad(parsed: _Parsed, name: str, offset: int, after: ScanPosition,
         reason: str | None = None, message: str = "") -> BadRecord:
    uri = parsed.headers.get("warc-target-uri", "").strip("<>")
    return BadRecord(reason or str(parsed.problem), name, offset, uri or f"{name}@{offset}",
                     message or parsed.message, after)


def _scan_gzip(path: Path, name: str, index: int, offset: int,
               inner: int) -> Iterator[ScannedRecord | BadRecord]:
    with open(path, "rb") as handle:
        size = path.stat().st_size
        while offset < size:
            reader = _MemberReader(handle, offset)
            if inner:
                reader.skip(inner)
            records = []
            while (parsed := _parse_one(reader)) is not None:
                records.append(parsed)
                if parsed.problem is not None:
                    reader.skip(1 << 62)  # the rest of the member cannot be trusted
                    break
            end = reader.end
            if reader.error is not None:  # resync at the next gzip header, if any
                end = _next_gzip(path, offset + 1, size)
            after_member = ScanPosition(index, end if end is not None else size)
            for i, parsed in enumerate(records):
                last = i == len(records) - 1
                after = after_member if last else ScanPosition(index, offset, parsed.end)
                if reader.error is not None and last:
                    yield _bad(parsed, name, offset, after, skipped.TRUNCATED_GZIP,
                               reader.error)
                elif parsed.problem is not None:
                    yield _bad(parsed, name, offset, after)
                else:
                    length = (end if end is not None else size) - offset
                    pointer = WarcPointer(name, offset, length, parsed.start,
                                          parsed.end - parsed.start)
                    yield ScannedRecord(pointer, parsed.headers, parsed.block_head, after)
            if reader.error is not None and not records:
                yield BadRecord(skipped.TRUNCATED_GZIP, name, offset, f"{name}@{offset}",
                                reader.error, after_member)
            offset, inner = after_member.offset, 0


def _next_gzip(path: Path, start: int, size: int) -> int | None:
    """The offset of the next gzip member header at or after ``start``, or None."""
    if start >= size:
        return None
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0,
                                               access=mmap.ACCESS_READ) as data:
        found = data.find(_GZIP_MAGIC, start)
    return None if found < 0 else found


def _next_plain(path: Path, start: int, size: int) -> int:
    """Where the next record of a plain WARC starts after ``start`` (a ``WARC/1.x`` line
    after a blank line), or the end of the file."""
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0,
                                               access=mmap.ACCESS_READ) as data:
        found = _NEXT_PLAIN.search(data, start)
    return size if found is None else found.start() + 4


def _scan_plain(path: Path, name: str, index: int,
                offset: int) -> Iterator[ScannedRecord | BadRecord]:
    size = path.stat().st_size
    with open(path, "rb") as handle:
        while offset < size:
            reader = _PlainReader(handle, offset)
            parsed = _parse_one(reader)
            if parsed is None:
                return
            if parsed.problem is not None:
                resume = _next_plain(path, parsed.start + 1, size) if size else size
                yield _bad(parsed, name, parsed.start, ScanPosition(index, resume))
                offset = resume
                continue
            pointer = WarcPointer(name, parsed.start, parsed.end - parsed.start, 0,
                                  parsed.end - parsed.start)
            yield ScannedRecord(pointer, parsed.headers, parsed.block_head,
                                ScanPosition(index, parsed.end))
            offset = parsed.end
