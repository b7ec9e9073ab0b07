"""Documents in the form the bundle stores them, and batches of them checked and ready to store.

Layer: ``indexer.core``. Used by fetchers (:func:`encode_document`, through the crawler's wire
format) and :class:`indexer.core.bundle.writer.IndexBundleWriter` (:func:`prepare_documents`,
:func:`prepare_encoded`). Blob bytes come from :mod:`indexer.core.documents.doc_index`.

A stored document is a 24-byte doc id, the gzip of its summary's JSON (compact separators,
UTF-8 text, not ASCII escapes: :func:`summary_json`), the gzip of its cached page (or nothing) and its document index blob.
Gzip members are written by ISA-L (``isal_zlib``): the format the ``zlib`` and ``gzip`` modules
read, about 3.5 times as fast as zlib at a similar ratio, and without zlib's per-call cost
(~50 us to set up its state, which dominates the many small link documents' summaries).
A :class:`PendingBatch` is checked as a whole before anything is stored: doc ids, gzip framing
and blobs of encoded documents; positions non-negative, below 2**31 and strictly increasing per
term, lengths non-negative; a malformed document raises ``ValueError`` naming its url.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import orjson
from isal import isal_zlib

from ..ids import DOC_TYPE, DocType
from .doc_batch_decode import decode_doc_batch
from .doc_index import (
    DocBatch,
    DocIndexData,
    decode_doc_index,
    encode_blobs,
    encode_doc_index,
    gathered_positions,
    small_doc_index,
)
from .document import IndexDocument

# ISA-L level (0-3) of summaries and cached pages: 3 is ~4% larger than zlib's level 4 (what
# was used before) and 3.5x faster; 1 is ~9% larger and 4.8x faster
SUMMARY_COMPRESSION_LEVEL = 3
SMALL_DOC_TERMS = 64  # documents of at most this many terms take small_doc_index's path


def _json_default(value: Any) -> Any:
    """Summaries may hold read-only mappings (``MappingProxyType``) and sets."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"summary value of type {type(value).__name__} is not JSON-serialisable")


_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS  # keys as the json module writes them: 1 -> "1"


def summary_json(summary: Mapping[str, Any]) -> bytes:
    """A summary's JSON text in UTF-8: compact, non-ASCII characters as they are.

    Written by orjson (a summary holds the whole page's text: about 5x as fast as the json
    module, and the same bytes for the values summaries hold, but NaN and the infinities,
    which are not JSON: null); a value orjson refuses and the json module takes (an integer
    past 64 bits) is written by the json module. Raises ``TypeError`` for a value neither can write (see :func:`_json_default`)."""
    try:
        return orjson.dumps(summary, default=_json_default, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(summary, separators=(",", ":"), ensure_ascii=False,
                          default=_json_default).encode("utf-8")


@dataclass(frozen=True, slots=True)
class EncodedDocument:
    """A document in the form the bundle stores: ``doc_id`` (24 bytes), ``summary`` (gzip of
    the summary's JSON), ``cache`` (gzip of the cached page, or empty) and ``index_blob``
    (:func:`~indexer.core.documents.doc_index.encode_doc_index`). ``url`` is for messages
    only."""

    doc_id: bytes
    summary: bytes
    cache: bytes
    index_blob: bytes
    url: str = ""

    @property
    def is_link(self) -> bool:
        return len(self.doc_id) > DOC_TYPE and self.doc_id[DOC_TYPE] == DocType.LINK


def encode_document(doc: IndexDocument, level: int = SUMMARY_COMPRESSION_LEVEL
                    ) -> EncodedDocument:
    """``doc`` as the bundle stores it (what
    :meth:`~indexer.core.bundle.writer.IndexBundleWriter.append_encoded` takes).

    Fetchers call this for every document, most of them link documents of a few terms, so
    the index blob is built with ``struct`` here (numpy's per-call cost dominates for small
    documents); the bytes are those of :func:`~indexer.core.documents.doc_index.encode_doc_index`,
    which large documents (and any that ``struct`` refuses) still use."""
    summary = _gzip(summary_json(doc.summary), level)
    cache = _gzip(doc.cached_page, level) if doc.cached_page else b""
    blob = small_doc_index(doc) if len(doc.terms) <= SMALL_DOC_TERMS else None
    if blob is None:
        blob = encode_doc_index(doc)[0]
    return EncodedDocument(doc.doc_id, summary, cache, blob, doc.url)


def _gzip_all(texts: list[bytes], level: int) -> list[bytes]:
    """:func:`_gzip` of each of ``texts``."""
    compress = isal_zlib.compress
    return [compress(text, level, 31) for text in texts]


def _gzip(data: bytes, level: int) -> bytes:
    """``data`` as one gzip member (what the document files hold), in one C call; ``level``
    is an ISA-L level (0-3)."""
    return isal_zlib.compress(data, level, wbits=31)


@dataclass(slots=True)
class PendingBatch:
    """A batch ready to store: its documents' bytes and their index data (column-wise)."""

    batch: DocBatch
    summaries: list[bytes]
    caches: list[bytes]
    blobs: list[bytes]
    urls: list[str]

    def __len__(self) -> int:
        return len(self.urls)

    def sizes(self) -> list[int]:
        return [len(s) + len(c) + len(b)
                for s, c, b in zip(self.summaries, self.caches, self.blobs, strict=True)]

    def slice(self, a: int, b: int) -> PendingBatch:
        if a == 0 and b == len(self):
            return self
        return PendingBatch(self.batch.slice(a, b), self.summaries[a:b], self.caches[a:b],
                            self.blobs[a:b], self.urls[a:b])


def prepare_documents(docs: list[IndexDocument], level: int) -> PendingBatch:
    """Encode a batch of documents: summaries and cached pages gzipped one by one, terms,
    positions and meta words gathered into batch arrays, index blobs from those arrays."""
    n = len(docs)
    summaries = _gzip_all([summary_json(doc.summary) for doc in docs], level)
    caches = [_gzip(doc.cached_page, level) if doc.cached_page else b"" for doc in docs]
    term_maps = [doc.terms for doc in docs]
    counts, positions = gathered_positions(term_maps)
    metas = [doc.meta_words for doc in docs]
    batch = DocBatch(
        [doc.doc_id for doc in docs], [doc.length for doc in docs],
        [tuple(tuple(r) for r in doc.region_weights) for doc in docs],
        [tuple(doc.classifier_scores) for doc in docs],
        list(chain.from_iterable(term_maps)),
        np.fromiter(map(len, term_maps), dtype=np.int64, count=n), counts, positions,
        list(chain.from_iterable(metas)), np.fromiter(map(len, metas), dtype=np.int64, count=n))
    _validate_batch(batch, [doc.url for doc in docs])
    return PendingBatch(batch, summaries, caches, encode_blobs(batch), [doc.url for doc in docs])


def _check_framing(item: EncodedDocument) -> None:
    """Check an encoded document's doc id and gzip framing."""
    if not isinstance(item.doc_id, bytes) or len(item.doc_id) != 24:
        raise ValueError(f"{item.url}: a doc id is 24 bytes")
    if item.doc_id[DOC_TYPE] not in DocType._value2member_map_:
        raise ValueError(f"{item.url}: unknown document type {item.doc_id[DOC_TYPE]}")
    for name, data in (("summary", item.summary), ("cache", item.cache)):
        if data and data[:2] != b"\x1f\x8b":
            raise ValueError(f"{item.url}: the {name} is not gzip data")
    if not item.summary:
        raise ValueError(f"{item.url}: the summary is empty")


def _decode_checked(item: EncodedDocument) -> DocIndexData:
    """An encoded document's index blob decoded; ``ValueError`` naming its url when bad."""
    try:
        return decode_doc_index(item.index_blob)
    except Exception as exc:  # zlib.error, ValueError, struct.error
        raise ValueError(f"{item.url}: bad document index blob: {exc}") from None


def prepare_encoded(items: list[EncodedDocument]) -> PendingBatch:
    """Check a batch of encoded documents (:func:`encode_document`) and gather their index
    data; their bytes are stored as they are."""
    for item in items:
        _check_framing(item)
    urls = [item.url for item in items]
    ids = [item.doc_id for item in items]
    batch = decode_doc_batch([item.index_blob for item in items], ids)
    if batch is None:  # a bad blob: decoded one at a time, the first bad one is named
        batch = DocBatch.concat([_decode_checked(item) for item in items], ids)
    _validate_batch(batch, urls)
    return PendingBatch(batch, [item.summary for item in items],
                        [item.cache for item in items], [item.index_blob for item in items],
                        urls)


def _validate_batch(batch: DocBatch, urls: list[str]) -> None:
    """Positions non-negative, below 2**31 and strictly increasing per term, lengths
    non-negative: checked for a whole batch with array operations."""
    n = len(batch)
    if not n:
        return
    counts, positions = batch.counts, batch.positions
    bad_doc = np.array([length < 0 for length in batch.lengths], dtype=bool)
    if positions.size:
        # one unsigned comparison finds negative positions and those from 2**31 on
        out_of_range = positions.astype(np.int64, copy=False).view(np.uint64) >= 1 << 31
        not_increasing = np.zeros(positions.size, dtype=bool)
        not_increasing[1:] = positions[1:] <= positions[:-1]
        not_increasing[(np.cumsum(counts) - counts)[counts > 0]] = False  # a term's first
        bad = np.flatnonzero(out_of_range | not_increasing)
        if bad.size:
            bad_doc[np.searchsorted(np.cumsum(batch.npos()), bad, side="right")] = True
    if bad_doc.any():
        url = urls[int(np.flatnonzero(bad_doc)[0])]
        raise ValueError(f"{url}: positions must be non-negative and increase strictly per "
                         f"term, and the length non-negative")
