"""An earlier crawl's stored pages: listing them in the order they were stored, reading one.

Layer: ``crawler.core.archive``, on :mod:`indexer.core.documents.store` (the partitions' ``.ix``
records and ``.txt.gz`` blobs, read-only). Used by an archive crawl of an earlier crawl (its
queue servers list pointers with :func:`iter_stored`, its fetchers read them with
:func:`read_stored`) and by the WARC export (:mod:`.export`).

What a crawl stores for a fetched page (``crawler.core.processing.indexing``): its summary (url,
status, MIME type, fetch time, robot metas, the response headers processing reads and the address it
came from, ...) and its cached copy, the body as received within the byte range (left out under
NOARCHIVE and with "cache whole crawled pages" off); for a redirect, a location document whose
summary names the target. :func:`stored_page` turns them back into the answer the fetcher got,
an :class:`ArchivedPage`. Link documents are not pages: an archive crawl makes them again from
the pages' links, with the current Page Options.

Summaries written before the response headers were kept (they have no ``headers``) give a
``Content-Type`` made from the stored MIME type and an ``X-Robots-Tag`` from the stored robot
metas, nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from isal import isal_zlib

from crawler.core.archive import skipped
from crawler.core.archive.source import StoredPointer
from indexer.core.bundle.layout import DOCUMENTS
from indexer.core.documents.store import BlobReader, PartitionDocumentBundle, partition_paths
from indexer.core.errors import IndexStoreError
from indexer.core.ids import DOC_TYPE, DocType

PAGE_TYPES = (DocType.PAGE, DocType.LOCATION)


class RecordSkipped(Exception):
    """A record that cannot become a page: ``reason`` (of :mod:`.skipped`) and a message."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class ArchivedPage:
    """A page as its fetcher received it: final url, HTTP status, response headers
    (lower-case names), body (within the byte range), when, and from which address."""

    url: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    fetched_at: float = 0.0
    ip: str = ""


@dataclass(frozen=True, slots=True)
class StoredPosition:
    """Where a listing goes on: bundle ``bundle`` of the list, partition, row of its .ix."""

    bundle: int = 0
    partition: int = 0
    row: int = 0


@dataclass(frozen=True, slots=True)
class StoredRecord:
    pointer: StoredPointer
    after: StoredPosition


def iter_stored(bundles: list[Path], start: StoredPosition) -> Iterator[StoredRecord]:
    """The page and location documents of ``bundles`` (``<work>/qs<n>/IndexData<ts>``
    folders) in the order they were stored: bundle by bundle, partition by partition, .ix
    record by record, from ``start`` on. Raises ``indexer.core.errors`` on a damaged
    partition index (the bundle is checked when it is read)."""
    for b in range(start.bundle, len(bundles)):
        bundle = bundles[b]
        documents = PartitionDocumentBundle(bundle / DOCUMENTS)
        first = start if b == start.bundle else StoredPosition(b)
        for number in range(first.partition, len(documents.partitions)):
            rows = documents.read_records(number)
            skip = first.row if number == first.partition else 0
            for row in range(skip, len(rows)):
                rec = rows[row]
                if rec.doc_id[DOC_TYPE] not in PAGE_TYPES:
                    continue
                pointer = StoredPointer(
                    bundle.parent.name, number, rec.summary_offset, rec.summary_length,
                    rec.cache_offset, rec.cache_length, rec.end, rec.blob_crc,
                    rec.doc_id[DOC_TYPE])
                yield StoredRecord(pointer, StoredPosition(b, number, row + 1))


def _gunzip(data: bytes) -> bytes:
    return isal_zlib.decompress(data, wbits=31)


HEAD_BYTES = 1 << 16
_TAIL_KEYS = (b',"body":', b',"links":')


def summary_head(data: bytes) -> dict[str, Any]:
    """A stored summary (its gzip member ``data``) without its two big last keys, the page's
    text and its links (``crawler.core.processing.indexing.page_summary`` puts every other key
    before
    them): only its head is inflated and parsed. Falls back to the whole summary."""
    head = isal_zlib.decompressobj(wbits=31).decompress(data, HEAD_BYTES)
    for key in _TAIL_KEYS:
        at = head.find(key)
        if at > 0:
            try:
                value = json.loads(head[:at] + b"}")
            except ValueError:
                break
            if isinstance(value, dict):
                return value
            break
    return json.loads(_gunzip(data))


class StoredReader:
    """Reads stored pages of one crawl (``work``: the work directory of its bundles) by
    pointer; keeps each partition's blob file open. Not thread-safe; :meth:`close` it."""

    def __init__(self, work: Path, timestamp: int) -> None:
        self.work = Path(work)
        self.timestamp = timestamp
        self._blobs: dict[tuple[str, int], BlobReader] = {}

    def _blob(self, shard: str, partition: int) -> BlobReader:
        key = (shard, partition)
        blob = self._blobs.get(key)
        if blob is None:
            if "/" in shard or shard in ("", ".", ".."):
                raise RecordSkipped(skipped.UNREADABLE, f"bad shard name {shard!r}")
            folder = self.work / shard / f"IndexData{self.timestamp}" / DOCUMENTS
            blob = self._blobs[key] = BlobReader(partition_paths(folder, partition)[1])
        return blob

    def summary_and_cache(self, pointer: StoredPointer) -> tuple[dict[str, Any], bytes | None]:
        """The stored summary (:func:`summary_head`: all but the page's text and links) and
        cached copy (None when there is none) of a document."""
        try:
            data = self._blob(pointer.shard, pointer.partition).document_bytes(
                pointer.start, pointer.end, pointer.crc)
            summary = summary_head(data[:pointer.summary_length])
            cache = None
            if pointer.cache_length:
                at = pointer.cache_offset - pointer.start
                cache = _gunzip(data[at:at + pointer.cache_length])
        except (OSError, ValueError, IndexStoreError, isal_zlib.error) as exc:
            raise RecordSkipped(skipped.UNREADABLE, f"{type(exc).__name__}: {exc}") from None
        if not isinstance(summary, dict):
            raise RecordSkipped(skipped.UNREADABLE, "the stored summary is not an object")
        return summary, cache

    def read(self, pointer: StoredPointer) -> ArchivedPage:
        """The page a pointer names; raises :class:`RecordSkipped`."""
        summary, cache = self.summary_and_cache(pointer)
        return stored_page(summary, cache, pointer.doc_type)

    def close(self) -> None:
        for blob in self._blobs.values():
            blob.close()
        self._blobs.clear()


def stored_headers(summary: dict[str, Any]) -> dict[str, str]:
    """The response headers a summary keeps (see the module for older summaries)."""
    kept = summary.get("headers")
    if isinstance(kept, dict):
        return {str(k).lower(): str(v) for k, v in kept.items()}
    headers = {}
    if summary.get("mime_type"):
        headers["content-type"] = str(summary["mime_type"])
    metas = summary.get("robot_metas")
    if isinstance(metas, list) and metas:
        headers["x-robots-tag"] = ", ".join(str(m).lower() for m in metas)
    return headers


def stored_page(summary: dict[str, Any], cache: bytes | None, doc_type: int) -> ArchivedPage:
    """A stored document as the answer its fetcher got (see the module); raises
    :class:`RecordSkipped` for a page stored without a cached copy."""
    url = str(summary.get("url") or "")
    if not url:
        raise RecordSkipped(skipped.UNREADABLE, "the stored summary has no url")
    try:
        status = int(summary.get("status") or 200)
        fetched_at = float(summary.get("fetched_at") or 0.0)
    except (TypeError, ValueError):
        raise RecordSkipped(skipped.UNREADABLE, f"{url}: bad status or fetch time") from None
    ip = str(summary.get("ip") or "")
    if doc_type == DocType.LOCATION:
        target = str(summary.get("location") or "")
        return ArchivedPage(url, status if 300 <= status < 400 else 301, {"location": target},
                            b"", fetched_at, ip)
    if cache is None and int(summary.get("size") or 0) > 0:
        raise RecordSkipped(skipped.NO_CACHED_COPY, f"{url} was stored without a cached copy")
    return ArchivedPage(url, status, stored_headers(summary), cache or b"", fetched_at, ip)
