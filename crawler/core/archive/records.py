"""A fetcher "fetches" a record pointer: it reads the record into the answer a fetcher gets.

Layer: ``crawler.core.archive``. :class:`RecordReader` reads the pointers of an archive crawl's
schedules (:mod:`.source`) into :class:`~.stored.ArchivedPage` values for the page handling of
:mod:`.worker`: a WARC record (parsed with ``warcio``: the HTTP status line and headers, the
payload with its transfer and content codings undone, cut to the byte range) or a page an
earlier crawl stored (:class:`~.stored.StoredReader`). A record that cannot become a page
raises :class:`~.stored.RecordSkipped` with its reason (:mod:`.skipped`).

WARC records read: ``response`` (an HTTP response), ``revisit`` (the HTTP headers of a new
capture, with the payload of its original, which the pointer carries) and ``resource`` records
of http(s) urls (the block is the page; its ``Content-Type`` the record's). The fetch time is
``WARC-Date``; the address ``WARC-IP-Address``.

Records are read in bounded memory and work: a record larger than the source's
``max_record_bytes`` once inflated is skipped (``skipped.TOO_LARGE``) without being read; of
any other, only the first :attr:`RecordReader.prefix` inflated bytes are read (its WARC and
HTTP heads and the payload's byte range, with room for its codings), in bounded inflate calls
(:func:`_inflate`), and warcio decodes only what the byte range needs of the payload.
"""

from __future__ import annotations

import zlib
from datetime import datetime
from io import BytesIO
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from crawler.core.archive import skipped
from crawler.core.archive.source import (
    ArchiveKind,
    ArchiveSource,
    Pointer,
    PointerError,
    WarcPointer,
    too_large,
)
from crawler.core.archive.stored import ArchivedPage, RecordSkipped, StoredReader

# the codings warcio undoes: the payload handed on is the decoded one
_DROPPED_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})
# a record longer than its heads allowance plus twice the byte range is read only that far:
# the payload (kept to the byte range once decoded) is in it, with room for chunked or
# compressed transfer; a head that does not end within it is not read past it either
HEAD_ALLOWANCE = 1 << 20
READ_CHUNK = 1 << 20       # compressed bytes read from the file at a time
INFLATE_STEP = 16 << 20    # inflated bytes one zlib call may give


def warc_date(value: str) -> float:
    """A ``WARC-Date`` (ISO 8601, UTC, any precision) as a Unix time; 0 when unreadable."""
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


class RecordReader:
    """Reads the records of one archive source. Keeps files open between records (one
    schedule's records mostly share a file); not thread-safe; :meth:`close` it."""

    def __init__(self, source: ArchiveSource, byte_range: int) -> None:
        self.source = source
        self.byte_range = byte_range
        self.prefix = HEAD_ALLOWANCE + 2 * byte_range  # inflated bytes of a record read
        self._files: dict[str, BinaryIO] = {}
        self._stored = (StoredReader(Path(source.path), source.timestamp)
                        if source.kind is ArchiveKind.CRAWL else None)

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()
        if self._stored is not None:
            self._stored.close()

    def read(self, pointer: Pointer) -> ArchivedPage:
        """The page a pointer names; raises :class:`RecordSkipped`."""
        if isinstance(pointer, WarcPointer):
            if self.source.kind is not ArchiveKind.WARC:
                raise RecordSkipped(skipped.UNREADABLE, "a WARC pointer in a crawl's archive")
            return self._warc_page(pointer)
        if self._stored is None:
            raise RecordSkipped(skipped.UNREADABLE, "a stored-page pointer in a WARC archive")
        return self._stored.read(pointer)

    # --- WARC ---------------------------------------------------------------------------

    def _record_bytes(self, pointer: WarcPointer) -> bytes:
        """The first bytes of the record, inflated: all of it when it is no longer than
        :attr:`prefix`, else that many (its heads and more than its payload's byte range)."""
        reason = too_large(pointer, self.source.max_record_bytes)
        if reason:
            raise RecordSkipped(skipped.TOO_LARGE, f"{pointer.file}@{pointer.offset}: {reason}")
        want = min(pointer.size, self.prefix)
        try:
            handle = self._files.get(pointer.file)
            if handle is None:
                handle = self._files[pointer.file] = open(self.source.file(pointer.file), "rb")
            handle.seek(pointer.offset)
            if not pointer.file.endswith(".gz"):
                raw = handle.read(want)
                if len(raw) != want:
                    raise RecordSkipped(skipped.TRUNCATED_GZIP, f"{pointer.file} ends inside "
                                        f"the record at {pointer.offset}")
                return raw
            return _inflate(handle, pointer, want)
        except (OSError, PointerError) as exc:
            raise RecordSkipped(skipped.UNREADABLE, f"{pointer.file}: {exc}") from None

    def _parse(self, pointer: WarcPointer):  # -> warcio ArcWarcRecord
        data = self._record_bytes(pointer)
        try:
            return next(iter(ArchiveIterator(BytesIO(data))))
        except (ArchiveLoadFailed, StopIteration, ValueError, EOFError) as exc:
            raise RecordSkipped(skipped.MALFORMED, f"{pointer.file}@{pointer.offset}: "
                                f"{exc}") from None

    def _payload(self, record) -> bytes:
        try:
            return record.content_stream().read(self.byte_range)
        except (OSError, ValueError, EOFError, zlib.error) as exc:
            uri = record.rec_headers.get_header("WARC-Target-URI") or "?"
            raise RecordSkipped(skipped.MALFORMED, f"{uri}: the payload cannot be decoded: "
                                f"{exc}") from None

    def _warc_page(self, pointer: WarcPointer) -> ArchivedPage:
        record = self._parse(pointer)
        uri = (record.rec_headers.get_header("WARC-Target-URI") or "").strip("<>")
        when = warc_date(record.rec_headers.get_header("WARC-Date") or "")
        ip = record.rec_headers.get_header("WARC-IP-Address") or ""
        if record.rec_type == "resource":
            content_type = record.rec_headers.get_header("Content-Type") or ""
            headers = {"content-type": content_type} if content_type else {}
            return ArchivedPage(uri, 200, headers, self._payload(record), when, ip)
        http = record.http_headers
        if record.rec_type == "revisit":
            if pointer.original is None:
                raise RecordSkipped(skipped.REVISIT_WITHOUT_ORIGINAL, f"{uri}: no original")
            original = self._parse(pointer.original)
            if original.http_headers is None:
                raise RecordSkipped(skipped.NOT_HTTP, f"{uri}: the original is not HTTP")
            body = self._payload(original)
            http = http if http is not None and http.get_statuscode() else original.http_headers
            return ArchivedPage(uri, _status(http, uri), _headers(http), body, when, ip)
        if record.rec_type != "response" or http is None:
            raise RecordSkipped(skipped.NOT_HTTP, f"{uri}: a {record.rec_type} record "
                                "without an HTTP response")
        return ArchivedPage(uri, _status(http, uri), _headers(http), self._payload(record),
                            when, ip)


def _inflate(handle: BinaryIO, pointer: WarcPointer, want: int) -> bytes:
    """``want`` bytes of the record, inflated from its gzip member at the handle's position
    (the member's first ``pointer.inner`` inflated bytes dropped). Compressed bytes are read
    :data:`READ_CHUNK` at a time and each inflate call gives at most :data:`INFLATE_STEP`
    bytes, so memory and the work of one call stay bounded whatever the member holds; one
    record of a member, as WARC files are written, takes one read and one call."""
    inflate = zlib.decompressobj(31)
    left = pointer.length
    skip, kept = pointer.inner, 0
    parts: list[bytes] = []
    data = b""
    where = f"{pointer.file}@{pointer.offset}"
    try:
        while kept < want:
            if not data:
                data = handle.read(min(left, READ_CHUNK)) if left > 0 else b""
                left -= len(data)
                if not data:
                    raise RecordSkipped(skipped.TRUNCATED_GZIP, f"{where}: the file ends "
                                        "inside the record")
            out = inflate.decompress(data, min(skip + want - kept, INFLATE_STEP))
            data = inflate.unconsumed_tail
            if skip:
                dropped = min(skip, len(out))
                skip -= dropped
                out = out[dropped:]
            if out:
                parts.append(out[:want - kept])
                kept += len(parts[-1])
            if inflate.eof and kept < want:
                raise RecordSkipped(skipped.TRUNCATED_GZIP, f"{where}: the gzip member ends "
                                    "early")
    except zlib.error as exc:
        raise RecordSkipped(skipped.TRUNCATED_GZIP, f"{where}: {exc}") from None
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _status(http, uri: str) -> int:
    try:
        return int(http.get_statuscode())
    except (TypeError, ValueError):
        raise RecordSkipped(skipped.NOT_HTTP, f"{uri}: no HTTP status") from None


def _headers(http) -> dict[str, str]:
    """Response headers, lower-case names, repeated ones joined by ", "; the codings warcio
    undid are left out."""
    out: dict[str, str] = {}
    for name, value in http.headers:
        key = name.lower()
        if key in _DROPPED_HEADERS:
            continue
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out
