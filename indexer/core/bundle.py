"""The IndexDocumentBundle writer: the queue server's indexer appends documents here.

Layer: ``indexer.core``. Uses :mod:`documents` (stored summaries and pages),
:mod:`partition_index` (doc_map, positions, postings, last_entries), :mod:`layout`. The
dictionary is merged by a separate process, :mod:`indexer.core.updater`; the query side reads
through :mod:`indexer.core.reader`.

Call order: ``IndexBundleWriter(path)`` (takes ``BUNDLE/LOCK``; recovers from a crash), then
any number of ``append(docs)`` or ``append_encoded(items)`` (durable when it returns),
``refresh()`` (make the active partition's latest documents searchable) and
``close_partition()``; then ``close()``.

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
from pathlib import Path
from typing import Any

import numpy as np

from .document import IndexDocument
from .documents import PartitionDocumentBundle
from .errors import CorruptIndexError, IndexStateError
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
    DocIndexData,
    PartitionDoc,
    Vocabulary,
    build_partition,
    decode_doc_index,
    encode_doc_index,
)
from .runtime import gc_paused
from .storage import FileLock, remove_temporaries, write_framed

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
            b"".join(struct.pack(">Id", p, w) for p, w in regions),
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


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One document ready to store: its bytes and its decoded index data."""

    doc_id: bytes
    summary: bytes
    cache: bytes
    blob: bytes
    url: str
    length: int
    terms: list[str]
    counts: np.ndarray
    positions: np.ndarray
    meta_words: tuple[str, ...] | list[str]
    regions: tuple[tuple[int, float], ...]
    classifier_scores: tuple[float, ...]

    @property
    def size(self) -> int:
        return len(self.summary) + len(self.cache) + len(self.blob)


def _prepare_document(doc: IndexDocument, level: int) -> _Prepared:
    summary = _gzip(json.dumps(doc.summary, separators=(",", ":"), ensure_ascii=False,
                               default=_json_default).encode("utf-8"), level)
    cache = _gzip(doc.cached_page, level) if doc.cached_page else b""
    blob, terms, counts, positions = encode_doc_index(doc)
    return _Prepared(doc.doc_id, summary, cache, blob, doc.url, doc.length, terms, counts,
                     positions, tuple(doc.meta_words), tuple(doc.region_weights),
                     tuple(doc.classifier_scores))


def _prepare_encoded(item: EncodedDocument) -> _Prepared:
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
        parsed: DocIndexData = decode_doc_index(item.index_blob)
    except Exception as exc:  # zlib.error, ValueError, struct.error
        raise ValueError(f"{item.url}: bad document index blob: {exc}") from None
    return _Prepared(item.doc_id, item.summary, item.cache, item.index_blob, item.url,
                     parsed.length, parsed.terms, parsed.counts.astype(np.int32),
                     parsed.positions.astype(np.int32), tuple(parsed.meta_words),
                     parsed.regions, parsed.classifier_scores)


def _validate_batch(prepared: list[_Prepared]) -> None:
    """Positions non-negative and strictly increasing per term, lengths non-negative: checked
    for a whole batch with array operations."""
    if not prepared:
        return
    counts = np.concatenate([p.counts for p in prepared]).astype(np.int64)
    positions = np.concatenate([p.positions for p in prepared]).astype(np.int64)
    per_doc = np.array([p.positions.size for p in prepared], dtype=np.int64)
    bad_doc = np.zeros(len(prepared), dtype=bool)
    bad_doc |= np.array([p.length < 0 for p in prepared])
    if positions.size:
        doc_of = np.repeat(np.arange(len(prepared)), per_doc)
        first = np.cumsum(counts) - counts
        starts = np.zeros(positions.size, dtype=bool)
        starts[first[counts > 0]] = True
        bad = positions < 0
        bad[1:] |= (np.diff(positions) <= 0) & ~starts[1:]
        bad_doc[doc_of[bad]] = True
    if bad_doc.any():
        doc = prepared[int(np.flatnonzero(bad_doc)[0])]
        raise ValueError(f"{doc.url}: positions must be non-negative and increase strictly per "
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
        self._docs: list[PartitionDoc] = []
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
        number = self.documents.active
        records = self.documents.read_records(number)
        if not records:
            return
        path = self.documents.blob_path(number)
        with open(path, "rb") as handle:
            data = handle.read()
        for rec in records:
            blob = data[rec.index_offset:rec.index_offset + rec.index_length]
            try:
                parsed = decode_doc_index(blob)
            except Exception as exc:  # zlib.error, ValueError, struct.error
                raise CorruptIndexError(path, f"document index blob at {rec.index_offset}: "
                                              f"{exc}") from exc
            self._docs.append(PartitionDoc(
                rec.doc_id, parsed.length, self._vocab.lookup_many(parsed.terms),
                parsed.counts.astype(np.int32), parsed.positions.astype(np.int32),
                self._vocab.lookup_many(parsed.meta_words), parsed.regions,
                parsed.classifier_scores, rec.summary_offset, rec.summary_length,
                rec.cache_offset, rec.cache_length, rec.end, rec.blob_crc))
        logger.info("partition %d: reloaded %d documents", number, len(self._docs))

    def _delete_stale_generations(self, number: int, keep: set[int]) -> None:
        pdir = partition_dir(self.path, number)
        for entry in os.scandir(pdir):
            name, _, suffix = entry.name.partition(".g")
            if name in DERIVED_FILES and suffix.isdigit() and int(suffix) not in keep:
                os.unlink(entry.path)

    # -- appending --------------------------------------------------------------------------

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
            return self._append([_prepare_document(doc, level) for doc in docs])

    def append_encoded(self, items: Iterable[EncodedDocument]) -> int:
        """:meth:`append` for documents already encoded (:func:`encode_document`). Every item
        is checked first: a malformed one raises ``ValueError`` and nothing is stored."""
        if self._lock is None:
            raise IndexStateError("writer is closed")
        with gc_paused():
            return self._append([_prepare_encoded(item) for item in items])

    def _append(self, prepared: list[_Prepared]) -> int:
        cfg = self.config
        _validate_batch(prepared)  # a bad document rejects the batch before anything is stored
        pending: list[_Prepared] = []
        pending_bytes = 0
        for item in prepared:
            size = item.size
            state = self.documents.active_state
            docs_now = state.docs + len(pending)
            if docs_now and (docs_now + 1 > cfg.max_partition_docs
                             or state.blob_bytes + pending_bytes + size
                             > cfg.max_partition_bytes):
                self._flush(pending)
                pending = []
                pending_bytes = 0
                self.close_partition()
            pending.append(item)
            pending_bytes += size
        self._flush(pending)
        if cfg.refresh_every_docs and self._since_refresh >= cfg.refresh_every_docs:
            self.refresh()
        return len(prepared)

    def _flush(self, pending: list[_Prepared]) -> None:
        if not pending:
            return
        stored = self.documents.add([(p.doc_id, p.summary, p.cache, p.blob,
                                      p.doc_id[DOC_TYPE] == DocType.LINK) for p in pending])
        self.documents.commit()
        vocab = self._vocab
        for rec, p in zip(stored, pending, strict=True):
            self._docs.append(PartitionDoc(
                p.doc_id, p.length, vocab.lookup_many(p.terms), p.counts, p.positions,
                vocab.lookup_many(p.meta_words), tuple(p.regions),
                tuple(p.classifier_scores), rec.summary_offset, rec.summary_length,
                rec.cache_offset, rec.cache_length, rec.end, rec.blob_crc))
        self._since_refresh += len(pending)

    # -- derived files ----------------------------------------------------------------------

    def _write_derived(self, number: int, suffix: str, state: str) -> dict[str, Any]:
        with gc_paused():
            built = build_partition(self._docs, self._vocab)
        pdir = partition_dir(self.path, number)
        files = {}
        for kind, payload in zip(DERIVED_FILES, (built.doc_map, built.positions,
                                                 built.postings, built.last_entries),
                                 strict=True):
            name = kind + suffix
            write_framed(pdir / name, kind, payload)
            files[kind] = name
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
        self._docs = []
        self._vocab = Vocabulary()
        self._generation = 0
        self._since_refresh = 0
        partition_dir(self.path, self.documents.active).mkdir(parents=True, exist_ok=True)
        logger.info("partition %d closed: %d documents, %d groups, %d terms", number,
                    manifest["docs"], manifest["groups"], manifest["terms"])
        return number

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
