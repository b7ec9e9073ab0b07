"""The records of an archive source, as a queue server lists them: pages to schedule, records
skipped (with a reason), other records. Resumable: every item says where the listing goes on.

Layer: ``crawler.core.archive``. :class:`~.queue.ArchiveQueue` draws on one listing:

* a WARC source (:class:`WarcListing`, over :func:`.warc_scan.scan`): a ``response`` record of
  an http(s) url whose block is an HTTP message is a page; a ``revisit`` is a page once its
  original is found (by ``WARC-Refers-To``, else ``WARC-Refers-To-Target-URI`` and
  ``WARC-Refers-To-Date``, else its payload digest: the revisit profiles of WARC 1.0 and 1.1),
  else it is skipped; a ``resource`` record of an http(s) url is a page; a response or revisit
  that is not HTTP is skipped, and so is a page record too large to read
  (:func:`.source.too_large`: the scan went over it in bounded memory; it is never
  scheduled); ``warcinfo``, ``request``, ``metadata``, other ``resource`` records and
  robots.txt answers are other records (counted, not pages, not bad);
* an earlier crawl's stored pages (:class:`StoredListing`, over :func:`.stored.iter_stored`):
  every page and location document, in the order it was stored.

Originals of revisits are remembered by 8-byte hashes of their record id, digest, and url and
date; a listing resumed after a restart has not seen the records before its start, and reads
them again (keys only) the first time a revisit needs them.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crawler.core.archive import skipped
from crawler.core.archive.source import (
    ArchiveSource,
    Pointer,
    StoredPointer,
    WarcPointer,
    too_large,
)
from crawler.core.archive.stored import StoredPosition, iter_stored
from crawler.core.archive.warc_scan import BadRecord, ScannedRecord, ScanPosition, scan
from indexer.core.bundle.layout import DOCUMENTS
from indexer.core.documents.store import BlobReader, partition_paths
from indexer.core.errors import IndexStoreError
from indexer.core.ids import hash8

HTTP_SCHEMES = ("http://", "https://")
PAGE_TYPES = ("response", "revisit", "resource")

Position = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Listed:
    """A page record to schedule."""

    url: str
    pointer: Pointer
    after: Position


@dataclass(frozen=True, slots=True)
class Skip:
    """A record skipped; ``url`` is its url when it said one (else a place in a file)."""

    reason: str
    url: str
    message: str
    after: Position


@dataclass(frozen=True, slots=True)
class Other:
    """A record that is not a page: ``kind`` is its WARC type (or ``robots_txt``)."""

    kind: str
    after: Position


Item = Listed | Skip | Other


def _is_robots(url: str) -> bool:
    return url.endswith("/robots.txt") and url.count("/") == 3


class WarcListing:
    """The records of a WARC source's ``files`` (the list is fixed when the crawl starts)."""

    def __init__(self, source: ArchiveSource, files: list[str], start: Position) -> None:
        self.source = source
        self.files = files
        self.start = ScanPosition(*start)
        self._originals: dict[bytes, WarcPointer] = {}
        self._complete = self.start == ScanPosition()  # originals before the start known

    def items(self) -> Iterator[Item]:
        for item in scan(self.source.root, self.files, self.start):
            after = (item.after.file_index, item.after.offset, item.after.inner)
            if isinstance(item, BadRecord):
                yield Skip(item.reason, item.uri, item.message, after)
            else:
                yield self._classify(item, after)

    def _remember(self, record: ScannedRecord) -> None:
        keys = [record.header("warc-record-id"), record.header("warc-payload-digest"),
                f"{record.uri} {record.header('warc-date')}"]
        for key in keys:
            if key.strip():
                self._originals[hash8(key.strip())] = record.pointer

    def _original(self, record: ScannedRecord) -> WarcPointer | None:
        keys = [record.header("warc-refers-to"),
                f"{record.header('warc-refers-to-target-uri').strip('<>')} "
                f"{record.header('warc-refers-to-date')}",
                record.header("warc-payload-digest")]
        for key in keys:
            found = self._originals.get(hash8(key.strip())) if key.strip() else None
            if found is not None:
                return found
        if not self._complete:
            self._read_originals_before_start()
            return self._original(record)
        return None

    def _read_originals_before_start(self) -> None:
        self._complete = True
        for item in scan(self.source.root, self.files, ScanPosition()):
            position = (item.after.file_index, item.after.offset, item.after.inner)
            if isinstance(item, ScannedRecord) and item.warc_type == "response":
                self._remember(item)
            if position >= (self.start.file_index, self.start.offset, self.start.inner):
                break

    def _classify(self, record: ScannedRecord, after: Position) -> Item:
        kind, uri = record.warc_type, record.uri
        is_http_url = uri.lower().startswith(HTTP_SCHEMES)
        if kind not in PAGE_TYPES or (kind == "resource" and not is_http_url):
            return Other(kind or "unknown", after)
        if not is_http_url:
            return Skip(skipped.NOT_HTTP, uri or f"{record.pointer.file}@"
                        f"{record.pointer.offset}", f"a {kind} record of {uri!r}", after)
        if _is_robots(uri):
            return Other("robots_txt", after)
        if kind == "response":
            self._remember(record)
            if not record.block_head.startswith(b"HTTP/"):
                return Skip(skipped.NOT_HTTP, uri, "the block is not an HTTP response", after)
        oversized = too_large(record.pointer, self.source.max_record_bytes)
        if oversized:
            return Skip(skipped.TOO_LARGE, uri, oversized, after)
        if kind == "revisit":
            original = self._original(record)
            if original is None:
                return Skip(skipped.REVISIT_WITHOUT_ORIGINAL, uri, "its original is not in "
                            "the archive (no record of its id, url and date, or digest)", after)
            pointer = WarcPointer(*(getattr(record.pointer, f) for f in
                                    ("file", "offset", "length", "inner", "size")), original)
            return Listed(uri, pointer, after)
        return Listed(uri, record.pointer, after)


class StoredListing:
    """The page and location documents an earlier crawl stored in ``bundles``."""

    def __init__(self, work: Path, timestamp: int, bundles: list[str], start: Position) -> None:
        self.work = Path(work)
        self.timestamp = timestamp
        self.bundles = bundles  # qs<n> folder names of the crawl, fixed when it starts
        self.start = StoredPosition(*start)
        self._blobs: dict[tuple[str, int], BlobReader] = {}

    def items(self) -> Iterator[Item]:
        try:
            for b in range(self.start.bundle, len(self.bundles)):
                yield from self._bundle_items(b)
        finally:
            for blob in self._blobs.values():
                blob.close()
            self._blobs.clear()

    def _bundle_items(self, b: int) -> Iterator[Item]:
        """Bundle ``b``'s items; a damaged or missing partition index skips the rest of the
        bundle (one record skipped, named by its folder)."""
        path = self.work / self.bundles[b] / f"IndexData{self.timestamp}"
        first = self.start if b == self.start.bundle else StoredPosition(b)
        try:
            for record in iter_stored([path], StoredPosition(0, first.partition, first.row)):
                after = (b, record.after.partition, record.after.row)
                url = self._url(record.pointer)
                if url is None:
                    yield Skip(skipped.UNREADABLE, f"{record.pointer.shard}/"
                               f"{record.pointer.partition}@{record.pointer.start}",
                               "the stored summary has no url", after)
                else:
                    yield Listed(url, record.pointer, after)
        except (OSError, IndexStoreError) as exc:
            yield Skip(skipped.UNREADABLE, str(path), f"{type(exc).__name__}: {exc}",
                       (b + 1, 0, 0))

    def _url(self, pointer: StoredPointer) -> str | None:
        """The url at the head of a stored summary (summaries start with it)."""
        key = (pointer.shard, pointer.partition)
        try:
            blob = self._blobs.get(key)
            if blob is None:
                folder = self.work / pointer.shard / f"IndexData{self.timestamp}" / DOCUMENTS
                blob = self._blobs[key] = BlobReader(partition_paths(folder,
                                                                     pointer.partition)[1])
            data = blob.document_bytes(pointer.start, pointer.start + pointer.summary_length,
                                       None)
            text = zlib.decompressobj(31).decompress(data, 1 << 16).decode("utf-8", "ignore")
        except (OSError, zlib.error, IndexStoreError):
            return None
        if not text.startswith('{"url":'):
            return None
        try:
            url, _ = json.JSONDecoder().raw_decode(text, 7)
        except ValueError:
            return None
        return url if isinstance(url, str) and url else None
