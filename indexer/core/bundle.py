"""The IndexDocumentBundle writer: the queue server's indexer appends documents here.

Layer: ``indexer.core``. Uses :mod:`documents` (stored summaries and pages),
:mod:`partition_index` (doc_map, positions, postings, last_entries), :mod:`layout`. The
dictionary is merged by a separate process, :mod:`indexer.core.updater`; the query side reads
through :mod:`indexer.core.reader`.

Call order: ``IndexBundleWriter(path)`` (takes ``BUNDLE/LOCK``; recovers from a crash), then
any number of ``append(docs)`` or ``append_encoded(items)`` (durable when it returns),
``refresh()`` (make the active partition's latest documents searchable),
``close_partition()`` (also when a crawl ends, so that its last partition can be re-ordered) and
``reorder_partition()`` (a finished partition in importance order, :mod:`indexer.core.reorder`);
then ``close()``.

Documents come in two forms: :class:`IndexDocument` (encoded here), or already encoded by
:func:`encode_document` (:class:`EncodedDocument`: gzipped summary and cached page plus the
compressed document index blob). Fetchers encode their documents themselves, so that the single
indexer process of a queue server only checks and appends bytes.

Invariants:

* Only the active partition grows. Its derived files are rebuilt to new names
  (``doc_map.gN`` ...) and published by replacing ``positions_doc_map/N/MANIFEST``; the
  generation before the previous one is deleted, so a reader that opened the previous MANIFEST
  can still load its files.
* Closing a partition writes its final derived files (plain names) and a MANIFEST with state
  ``closed`` *before* the documents parameters name the next partition active; a crash in between
  is finished on reopen.
* After a crash, reopening truncates uncommitted bytes and rebuilds the active partition's
  in-memory state from the stored document index blobs: every acknowledged document is kept.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from .document import IndexDocument
from .documents import PartitionDocumentBundle
from .errors import IndexStateError
from .grouping import Importance
from .ids import DOC_TYPE, TEXT_HASH, DocType
from .layout import (
    ARCHIVE_INFO,
    DERIVED_FILES,
    DICTIONARY,
    DOCUMENTS,
    LOCK,
    NEXT_PARTITION,
    POSITIONS_DOC_MAP,
    partition_dir,
    read_partition_manifest,
    write_archive_info,
    write_next_partition,
    write_partition_manifest,
)
from .partition_index import (
    ActiveDocs,
    DocBatch,
    DocIndexData,
    Vocabulary,
    build_partition,
    decode_doc_index,
    encode_doc_index,
    load_partition_docs,
)
from .reorder import ReorderResult, rewrite_partition
from .runtime import gc_paused
from .storage import FileLock, atomic_write_many, frame, remove_temporaries

logger = logging.getLogger(__name__)

SUMMARY_COMPRESSION_LEVEL = 4  # gzip level; 4 is ~5% larger and ~2x faster than 6


@dataclass(frozen=True, slots=True)
class BundleConfig:
    """Limits and tuning of a bundle writer (the glue builds it from settings)."""

    max_partition_docs: int = 50_000
    max_partition_bytes: int = 2 * 1024 ** 3 - 1
    refresh_every_docs: int = 10_000  # rebuild the active partition's files after this many
    summary_compression_level: int = SUMMARY_COMPRESSION_LEVEL

    def __post_init__(self) -> None:
        if self.max_partition_docs < 1 or self.max_partition_bytes < 1:
            raise ValueError("partition limits must be positive")


def _json_default(value: Any) -> Any:
    """Summaries may hold read-only mappings (``MappingProxyType``) and sets."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"summary value of type {type(value).__name__} is not JSON-serialisable")


@dataclass(frozen=True, slots=True)
class EncodedDocument:
    """A document in the form the bundle stores: ``doc_id`` (24 bytes), ``summary`` (gzip of
    the summary's JSON), ``cache`` (gzip of the cached page, or empty) and ``index_blob``
    (:func:`~indexer.core.partition_index.encode_doc_index`). ``url`` is for messages only;
    ``source`` is a link document's source page (its summary's ``source``), for the indexer's
    anchor-text boost (:func:`scale_regions`)."""

    doc_id: bytes
    summary: bytes
    cache: bytes
    index_blob: bytes
    url: str = ""
    source: str = ""

    @property
    def is_link(self) -> bool:
        return len(self.doc_id) > DOC_TYPE and self.doc_id[DOC_TYPE] == DocType.LINK


def encode_document(doc: IndexDocument, level: int = SUMMARY_COMPRESSION_LEVEL
                    ) -> EncodedDocument:
    """``doc`` as the bundle stores it (what :meth:`IndexBundleWriter.append_encoded` takes).

    Fetchers call this for every document, most of them link documents of a few terms, so
    the index blob is built with ``struct`` here (numpy's per-call cost dominates for small
    documents); the bytes are those of :func:`~indexer.core.partition_index.encode_doc_index`,
    which large documents (and any that ``struct`` refuses) still use."""
    summary = _gzip(json.dumps(doc.summary, separators=(",", ":"), ensure_ascii=False,
                               default=_json_default).encode("utf-8"), level)
    cache = _gzip(doc.cached_page, level) if doc.cached_page else b""
    blob = _small_doc_index(doc) if len(doc.terms) <= SMALL_DOC_TERMS else None
    if blob is None:
        blob = encode_doc_index(doc)[0]
    source = doc.summary.get("source") if doc.doc_type == DocType.LINK else None
    return EncodedDocument(doc.doc_id, summary, cache, blob, doc.url,
                           source if isinstance(source, str) else "")


SMALL_DOC_TERMS = 64
_BLOB_HEAD = struct.Struct(">IIIIIB")


def _compress_all(texts: list[bytes], level: int, wbits: int) -> list[bytes]:
    compress = zlib.compress
    return [compress(text, level, wbits) for text in texts]


def _gzip(data: bytes, level: int) -> bytes:
    """The bytes of :func:`~indexer.core.documents.gzip_bytes`, in one C call."""
    return zlib.compress(data, level, wbits=31)


def _joined(strings: Iterable[str]) -> bytes | None:
    items = list(strings)
    if not items:
        return b""
    text = "\0".join(items) + "\0"
    if text.count("\0") != len(items):
        return None  # a NUL inside a term: encode_doc_index reports it
    return text.encode("utf-8", "surrogatepass")


def _small_doc_index(doc: IndexDocument) -> bytes | None:
    """``encode_doc_index(doc)[0]`` without numpy; None when the slow path must decide (a
    NUL in a term, a negative or huge value, a value that is not an int)."""
    try:
        values = list(doc.terms.values())
        counts = [len(v) for v in values]
        positions = [p for v in values for p in v]
        wide = bool(positions) and max(positions) > 0xFFFF or bool(counts) and max(
            counts) > 0xFFFF
        small = "I" if wide else "H"
        raw_terms = _joined(doc.terms)
        raw_meta = _joined(doc.meta_words)
        if raw_terms is None or raw_meta is None:
            return None
        regions = doc.region_weights
        scores = doc.classifier_scores
        parts = [
            _BLOB_HEAD.pack(doc.length, len(counts), len(doc.meta_words), len(regions),
                            len(scores), wide),
            struct.pack(">I", len(raw_terms)), raw_terms,
            struct.pack(">I", len(raw_meta)), raw_meta,
            struct.pack(f">{len(counts)}{small}", *counts),
            struct.pack(f">{len(positions)}{small}", *positions),
            b"".join(struct.pack(">id", p, w) for p, w in regions),
            struct.pack(f">{len(scores)}d", *scores),
        ]
    except (struct.error, TypeError, ValueError, OverflowError):
        return None
    return zlib.compress(b"".join(parts), 1)


def scale_regions(item: EncodedDocument, factor: float) -> EncodedDocument:
    """``item`` with every region weight multiplied by ``factor`` (its index blob re-encoded);
    raises ``ValueError`` for a bad blob."""
    try:
        parsed = decode_doc_index(item.index_blob)
    except Exception as exc:  # zlib.error, ValueError, struct.error
        raise ValueError(f"{item.url}: bad document index blob: {exc}") from None
    ends = np.cumsum(parsed.counts)
    starts = ends - parsed.counts
    positions = parsed.positions.tolist()
    terms = {term: positions[a:b] for term, a, b in zip(parsed.terms, starts.tolist(),
                                                        ends.tolist(), strict=True)}
    doc = IndexDocument(
        url=item.url, host="", doc_type=DocType(item.doc_id[DOC_TYPE]),
        text_hash=item.doc_id[TEXT_HASH], summary={}, terms=terms, length=parsed.length,
        meta_words=tuple(parsed.meta_words),
        region_weights=tuple((end, weight * factor) for end, weight in parsed.regions),
        classifier_scores=parsed.classifier_scores)
    return replace(item, index_blob=encode_doc_index(doc)[0])


@dataclass(slots=True)
class _Pending:
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

    def slice(self, a: int, b: int) -> _Pending:
        if a == 0 and b == len(self):
            return self
        return _Pending(self.batch.slice(a, b), self.summaries[a:b], self.caches[a:b],
                        self.blobs[a:b], self.urls[a:b])


_HEAD_AND_TERMS = struct.Struct(">IIIIIBI")  # the blob head, then the terms' byte length
_U32 = struct.Struct(">I")
_REGION = np.dtype([("p", ">i4"), ("w", ">f8")])


def _joined_pieces(strings: list[str], per_doc: np.ndarray) -> list[bytes]:
    """Each document's strings, each followed by NUL (``_joined`` of its slice of
    ``strings``), from one join and one encode for the whole batch."""
    n = per_doc.size
    if not strings:
        return [b""] * n
    raw = ("\0".join(strings) + "\0").encode("utf-8", "surrogatepass")
    nul = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0)
    if nul.size != len(strings):
        raise ValueError("a term contains a NUL character")
    last = np.cumsum(per_doc)
    ends = np.where(last > 0, nul[np.maximum(last - 1, 0)] + 1, 0)
    starts = np.concatenate(([0], ends[:-1]))
    return [raw[x:y] for x, y in zip(starts.tolist(), ends.tolist(), strict=True)]


def _encode_blobs(batch: DocBatch) -> list[bytes]:
    """``encode_doc_index(doc)[0]`` of every document of ``batch``, the same bytes, with the
    array work done once for the batch (only the zlib call is per document)."""
    return _compress_all(_raw_blobs(batch), 1, zlib.MAX_WBITS)


def _raw_blobs(batch: DocBatch) -> list[bytes]:
    """The uncompressed document index blobs of ``batch``."""
    n = len(batch)
    terms = _joined_pieces(batch.terms, batch.nterms)
    metas = _joined_pieces(batch.meta, batch.nmeta)
    counts, positions = batch.counts, batch.positions
    npos = batch.npos()
    t_end = np.cumsum(batch.nterms)
    p_end = np.cumsum(npos)
    big_doc = np.zeros(n, dtype=bool)
    if counts.size and int(counts.max()) > 0xFFFF:
        big_doc[np.searchsorted(t_end, np.flatnonzero(counts > 0xFFFF), side="right")] = True
    if positions.size and int(positions.max()) > 0xFFFF:
        big_doc[np.searchsorted(p_end, np.flatnonzero(positions > 0xFFFF), side="right")] = True
    c_small = counts.astype(">u2").tobytes()
    p_small = positions.astype(">u2").tobytes()
    nreg = np.fromiter(map(len, batch.regions), dtype=np.int64, count=n)
    flat = [r for regs in batch.regions for r in regs]
    regions = np.zeros(len(flat), dtype=_REGION)
    if flat:
        pos = np.array([int(p) for p, _ in flat], dtype=np.int64)
        if int(pos.min()) < -1 or int(pos.max()) > 0x7FFFFFFF:
            raise ValueError("a region's last position is out of range")
        regions["p"] = pos
        regions["w"] = [float(w) for _, w in flat]
    r_bytes = regions.tobytes()
    r_end = np.cumsum(nreg) * _REGION.itemsize
    ncls = np.fromiter(map(len, batch.classifier_scores), dtype=np.int64, count=n)
    s_bytes = np.array([float(c) for cls in batch.classifier_scores for c in cls],
                       dtype=">f8").tobytes()
    s_end = np.cumsum(ncls) * 8
    rows = zip(batch.lengths, batch.nterms.tolist(), batch.nmeta.tolist(), nreg.tolist(),
               ncls.tolist(), big_doc.tolist(), terms, metas, t_end.tolist(), p_end.tolist(),
               r_end.tolist(), s_end.tolist(), strict=True)
    out = []
    t0 = p0 = r0 = s0 = 0
    for length, nt, nm, nr, nc, wide, raw_t, raw_m, t1, p1, r1, s1 in rows:
        if wide:
            c_raw = counts[t0:t1].astype(">u4").tobytes()
            p_raw = positions[p0:p1].astype(">u4").tobytes()
        else:
            c_raw = c_small[2 * t0:2 * t1]
            p_raw = p_small[2 * p0:2 * p1]
        out.append(b"".join((
            _HEAD_AND_TERMS.pack(length, nt, nm, nr, nc, wide, len(raw_t)), raw_t,
            _U32.pack(len(raw_m)), raw_m, c_raw, p_raw, r_bytes[r0:r1], s_bytes[s0:s1])))
        t0, p0, r0, s0 = t1, p1, r1, s1
    return out


def _prepare_documents(docs: list[IndexDocument], level: int) -> _Pending:
    """Encode a batch of documents: summaries and cached pages gzipped one by one, terms,
    positions and meta words gathered into batch arrays, index blobs from those arrays."""
    n = len(docs)
    summaries = _compress_all([json.dumps(doc.summary, separators=(",", ":"),
                                          ensure_ascii=False, default=_json_default
                                          ).encode("utf-8") for doc in docs], level, 31)
    caches = [_gzip(doc.cached_page, level) if doc.cached_page else b"" for doc in docs]
    term_maps = [doc.terms for doc in docs]
    values = list(chain.from_iterable(t.values() for t in term_maps))
    counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    metas = [doc.meta_words for doc in docs]
    batch = DocBatch(
        [doc.doc_id for doc in docs], [doc.length for doc in docs],
        [tuple(tuple(r) for r in doc.region_weights) for doc in docs],
        [tuple(doc.classifier_scores) for doc in docs],
        list(chain.from_iterable(term_maps)),
        np.fromiter(map(len, term_maps), dtype=np.int64, count=n), counts,
        np.fromiter(chain.from_iterable(values), dtype=np.int64, count=int(counts.sum())),
        list(chain.from_iterable(metas)), np.fromiter(map(len, metas), dtype=np.int64, count=n))
    _validate_batch(batch, [doc.url for doc in docs])
    return _Pending(batch, summaries, caches, _encode_blobs(batch), [doc.url for doc in docs])


def _check_encoded(item: EncodedDocument) -> DocIndexData:
    """Check an encoded document (doc id, gzip framing, index blob) and decode its index."""
    if not isinstance(item.doc_id, bytes) or len(item.doc_id) != 24:
        raise ValueError(f"{item.url}: a doc id is 24 bytes")
    if item.doc_id[DOC_TYPE] not in DocType._value2member_map_:
        raise ValueError(f"{item.url}: unknown document type {item.doc_id[DOC_TYPE]}")
    for name, data in (("summary", item.summary), ("cache", item.cache)):
        if data and data[:2] != b"\x1f\x8b":
            raise ValueError(f"{item.url}: the {name} is not gzip data")
    if not item.summary:
        raise ValueError(f"{item.url}: the summary is empty")
    try:
        return decode_doc_index(item.index_blob)
    except Exception as exc:  # zlib.error, ValueError, struct.error
        raise ValueError(f"{item.url}: bad document index blob: {exc}") from None


def _prepare_encoded(items: list[EncodedDocument]) -> _Pending:
    parsed = [_check_encoded(item) for item in items]
    urls = [item.url for item in items]
    batch = DocBatch.concat(parsed, [item.doc_id for item in items])
    _validate_batch(batch, urls)
    return _Pending(batch, [item.summary for item in items], [item.cache for item in items],
                    [item.index_blob for item in items], urls)


def _validate_batch(batch: DocBatch, urls: list[str]) -> None:
    """Positions non-negative, below 2**31 and strictly increasing per term, lengths
    non-negative: checked for a whole batch with array operations."""
    n = len(batch)
    if not n:
        return
    counts, positions = batch.counts, batch.positions
    bad_doc = np.array([length < 0 for length in batch.lengths], dtype=bool)
    if positions.size:
        doc_of = np.repeat(np.arange(n), batch.npos())
        first = np.cumsum(counts) - counts
        starts = np.zeros(positions.size, dtype=bool)
        starts[first[counts > 0]] = True
        bad = (positions < 0) | (positions >= 1 << 31)
        bad[1:] |= (positions[1:] <= positions[:-1]) & ~starts[1:]
        bad_doc[doc_of[bad]] = True
    if bad_doc.any():
        url = urls[int(np.flatnonzero(bad_doc)[0])]
        raise ValueError(f"{url}: positions must be non-negative and increase strictly per "
                         f"term, and the length non-negative")


class IndexBundleWriter:
    """Appends documents to an IndexDocumentBundle folder (created if missing)."""

    def __init__(self, path: str | os.PathLike[str], config: BundleConfig | None = None,
                 crawl_parameters: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.config = config or BundleConfig()
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(self.path / LOCK)
        try:
            self._open(crawl_parameters)
        except BaseException:
            self._lock.release()
            raise

    def _open(self, crawl_parameters: Mapping[str, Any] | None) -> None:
        for sub in (DOCUMENTS, POSITIONS_DOC_MAP, DICTIONARY):
            (self.path / sub).mkdir(exist_ok=True)
        remove_temporaries(self.path)
        remove_temporaries(self.path / DOCUMENTS)
        if not (self.path / ARCHIVE_INFO).exists():
            write_archive_info(self.path, crawl_parameters)
        if not (self.path / NEXT_PARTITION).exists():
            write_next_partition(self.path, 0)
        cfg = self.config
        self.documents = PartitionDocumentBundle(self.path / DOCUMENTS,
                                                 max_docs=cfg.max_partition_docs,
                                                 max_bytes=cfg.max_partition_bytes,
                                                 writable=True)
        self._docs = ActiveDocs()
        self._vocab = Vocabulary()
        self._generation = 0
        self._since_refresh = 0
        active = self.documents.active
        pdir = partition_dir(self.path, active)
        pdir.mkdir(parents=True, exist_ok=True)
        remove_temporaries(pdir)
        manifest = read_partition_manifest(self.path, active)
        if manifest is not None and manifest["state"] == "closed":
            # crashed after the partition was closed but before the next one started
            logger.info("finishing the close of partition %d", active)
            self.documents.start_partition()
            active = self.documents.active
            partition_dir(self.path, active).mkdir(parents=True, exist_ok=True)
            manifest = None
        if manifest is not None:
            self._generation = int(manifest["generation"])
        self._load_active()
        self._delete_stale_generations(active, keep={self._generation})
        if self._docs and (manifest is None or manifest["docs"] != len(self._docs)):
            self.refresh()

    def _load_active(self) -> None:
        """Rebuild the in-memory state of the active partition from its stored documents."""
        self._docs, self._vocab = load_partition_docs(self.documents, self.documents.active)
        if self._docs:
            logger.info("partition %d: reloaded %d documents", self.documents.active,
                        len(self._docs))

    def _delete_stale_generations(self, number: int, keep: set[int]) -> None:
        pdir = partition_dir(self.path, number)
        for entry in os.scandir(pdir):
            name, _, suffix = entry.name.partition(".g")
            if name in DERIVED_FILES and suffix.isdigit() and int(suffix) not in keep:
                os.unlink(entry.path)

    # -- appending --------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._lock is None

    @property
    def active_partition(self) -> int:
        return self.documents.active

    @property
    def active_documents(self) -> int:
        return len(self._docs)

    def append(self, docs: Iterable[IndexDocument]) -> int:
        """Append documents; when this returns they are durable. Rolls the active partition
        over (closing it) when it is full. Returns the number appended."""
        if self._lock is None:
            raise IndexStateError("writer is closed")
        level = self.config.summary_compression_level
        with gc_paused():
            return self._append(_prepare_documents(list(docs), level))

    def append_encoded(self, items: Iterable[EncodedDocument]) -> int:
        """:meth:`append` for documents already encoded (:func:`encode_document`). Every item
        is checked first: a malformed one raises ``ValueError`` and nothing is stored."""
        if self._lock is None:
            raise IndexStateError("writer is closed")
        with gc_paused():
            return self._append(_prepare_encoded(list(items)))

    def _append(self, pending: _Pending) -> int:
        """Store a checked batch, closing the active partition whenever the next document
        would take it past its limits."""
        cfg = self.config
        n = len(pending)
        sizes = pending.sizes()
        i = 0
        while i < n:
            state = self.documents.active_state
            j = i
            added = 0
            while j < n:
                docs_now = state.docs + j - i
                if docs_now and (docs_now + 1 > cfg.max_partition_docs
                                 or state.blob_bytes + added + sizes[j]
                                 > cfg.max_partition_bytes):
                    break
                added += sizes[j]
                j += 1
            if j > i:
                self._flush(pending.slice(i, j))
            i = j
            if i < n:
                self.close_partition()
        if cfg.refresh_every_docs and self._since_refresh >= cfg.refresh_every_docs:
            self.refresh()
        return n

    def _flush(self, pending: _Pending) -> None:
        if not len(pending):
            return
        batch = pending.batch
        links = sum(1 for doc_id in batch.doc_ids if doc_id[DOC_TYPE] == DocType.LINK)
        store = self.documents.add(batch.doc_ids, pending.summaries, pending.caches,
                                   pending.blobs, links)
        self.documents.commit()
        self._docs.add(batch, self._vocab, store)
        self._since_refresh += len(pending)

    # -- derived files ----------------------------------------------------------------------

    def _write_derived(self, number: int, suffix: str, state: str) -> dict[str, Any]:
        with gc_paused():
            built = build_partition(self._docs, self._vocab)
        pdir = partition_dir(self.path, number)
        files = {kind: kind + suffix for kind in DERIVED_FILES}
        atomic_write_many(pdir, {
            files[kind]: frame(kind, payload)
            for kind, payload in zip(DERIVED_FILES, (built.doc_map, built.positions,
                                                     built.postings, built.last_entries),
                                     strict=True)})
        return {"state": state, "generation": self._generation, "docs": len(self._docs),
                "groups": built.groups, "terms": built.terms,
                "postings": built.postings_count, "positions": built.positions_count,
                "files": files}

    def refresh(self) -> None:
        """Rebuild the active partition's derived files so its documents are searchable."""
        if not self._docs:
            return
        number = self.documents.active
        previous = self._generation
        self._generation += 1
        manifest = self._write_derived(number, f".g{self._generation}", "active")
        write_partition_manifest(self.path, number, manifest)
        self._delete_stale_generations(number, keep={self._generation, previous})
        self._since_refresh = 0
        logger.debug("partition %d refreshed: generation %d, %d documents", number,
                     self._generation, len(self._docs))

    def close_partition(self) -> int | None:
        """Write the active partition's final files and start a new partition.

        Returns the closed partition's number (None if it was empty). The dictionary updater
        merges it into the dictionary later, in its own process.
        """
        if not self._docs:
            return None
        number = self.documents.active
        manifest = self._write_derived(number, "", "closed")
        write_partition_manifest(self.path, number, manifest)
        self.documents.start_partition()
        self._delete_stale_generations(number, keep=set())
        self._docs = ActiveDocs()
        self._vocab = Vocabulary()
        self._generation = 0
        self._since_refresh = 0
        partition_dir(self.path, self.documents.active).mkdir(parents=True, exist_ok=True)
        logger.info("partition %d closed: %d documents, %d groups, %d terms", number,
                    manifest["docs"], manifest["groups"], manifest["terms"])
        return number

    def reorder_partition(self, number: int, importance: Importance, tag: str
                          ) -> ReorderResult:
        """Re-order finished partition ``number`` by ``importance`` (see
        :mod:`indexer.core.reorder`); ``tag`` names the importance in its MANIFEST."""
        if self._lock is None:
            raise IndexStateError("writer is closed")
        return rewrite_partition(self.path, self.documents, number, importance, tag)

    def close(self) -> None:
        """Refresh the active partition, then release the files and the lock."""
        if self._lock is None:
            return
        if self._since_refresh:
            self.refresh()
        self.documents.close_files()
        self._lock.release()
        self._lock = None  # type: ignore[assignment]

    def __enter__(self) -> IndexBundleWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
