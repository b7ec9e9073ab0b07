"""The IndexDocumentBundle writer: the queue server's indexer appends documents here.

Layer: ``indexer.core``. Uses :mod:`encoding` (documents checked and encoded for storage),
:mod:`documents` (stored summaries and pages), :mod:`partition_index` (doc_map, positions,
postings, last_entries), :mod:`layout`. The
dictionary is merged by a separate process, :mod:`indexer.core.dictionary.updater`; the query side reads
through :mod:`indexer.core.bundle.reader`.

Call order: ``IndexBundleWriter(path)`` (takes ``BUNDLE/LOCK``; recovers from a crash), then
any number of ``append(docs)`` or ``append_encoded(items)`` (durable when it returns),
``refresh()`` (make the active partition's latest documents searchable),
``close_partition()`` (also when a crawl ends, so that its last partition can be re-ordered) and
``reorder_partition()`` (a finished partition in importance order, :mod:`indexer.core.bundle.reorder`);
then ``close()``.

Documents come in two forms: :class:`IndexDocument` (encoded on append), or already encoded by
:func:`~indexer.core.documents.encoding.encode_document` (:class:`~indexer.core.documents.encoding.EncodedDocument`:
gzipped summary and cached page plus the compressed document index blob). Fetchers encode their documents themselves, so that the single
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

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..documents.document import IndexDocument
from ..documents.encoding import (
    SUMMARY_COMPRESSION_LEVEL,
    EncodedDocument,
    PendingBatch,
    prepare_documents,
    prepare_encoded,
)
from ..documents.store import PartitionDocumentBundle
from ..errors import IndexStateError
from ..files.storage import FileLock, atomic_write_many, frame, link_many, remove_temporaries
from ..ids import DOC_TYPE, DocType
from ..partition.anchors import AnchorBoost
from ..partition.build import ActiveDocs, Vocabulary, build_partition, load_partition_docs
from ..partition.grouping import Importance
from ..runtime.gc_pause import gc_paused
from .layout import (
    ARCHIVE_INFO,
    DICTIONARY,
    DOCUMENTS,
    LOCK,
    NEXT_PARTITION,
    PARTITION_FILES,
    POSITIONS_DOC_MAP,
    derived_payloads,
    partition_dir,
    read_partition_manifest,
    write_archive_info,
    write_next_partition,
    write_partition_manifest,
)
from .reorder import ReorderResult, rewrite_partition

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BundleConfig:
    """Limits and tuning of a bundle writer (the glue builds it from settings)."""

    max_partition_docs: int = 50_000
    max_partition_bytes: int = 2 * 1024 ** 3 - 1
    refresh_every_docs: int = 10_000  # rebuild the active partition's files after this many
    summary_compression_level: int = SUMMARY_COMPRESSION_LEVEL  # ISA-L level, 0 to 3

    def __post_init__(self) -> None:
        if self.max_partition_docs < 1 or self.max_partition_bytes < 1:
            raise ValueError("partition limits must be positive")
        if not 0 <= self.summary_compression_level <= 3:
            raise ValueError("summary_compression_level is an ISA-L level: 0 to 3")


class IndexBundleWriter:
    """Appends documents to an IndexDocumentBundle folder (created if missing).

    ``anchor`` (optional) gives, each time the writer builds a partition's files (refresh,
    close, re-order), the anchor-text boost of the crawl's newest link scores, or None while
    the crawl has none (:mod:`indexer.core.partition.anchors`); documents are stored as
    appended."""

    def __init__(self, path: str | os.PathLike[str], config: BundleConfig | None = None,
                 crawl_parameters: Mapping[str, Any] | None = None,
                 anchor: Callable[[], AnchorBoost | None] | None = None) -> None:
        self.path = Path(path)
        self.config = config or BundleConfig()
        self._anchor = anchor
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(self.path / LOCK)
        try:
            self._open(crawl_parameters)
        except BaseException:
            documents = getattr(self, "documents", None)
            if documents is not None:
                documents.close_files()
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
        # the MANIFEST of this writer's last refresh of the active partition (its files hold
        # every document when nothing was appended since): a close can reuse them
        self._refreshed: dict[str, Any] | None = None
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
            if name in PARTITION_FILES and suffix.isdigit() and int(suffix) not in keep:
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
            return self._append(prepare_documents(list(docs), level))

    def append_encoded(self, items: Iterable[EncodedDocument]) -> int:
        """:meth:`append` for documents already encoded
        (:func:`~indexer.core.documents.encoding.encode_document`). Every item
        is checked first: a malformed one raises ``ValueError`` and nothing is stored."""
        if self._lock is None:
            raise IndexStateError("writer is closed")
        with gc_paused():
            return self._append(prepare_encoded(list(items)))

    def _append(self, pending: PendingBatch) -> int:
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

    def _flush(self, pending: PendingBatch) -> None:
        if not len(pending):
            return
        batch = pending.batch
        links = sum(1 for doc_id in batch.doc_ids if doc_id[DOC_TYPE] == DocType.LINK)
        store = self.documents.add(batch.doc_ids, pending.summaries, pending.caches,
                                   pending.blobs, links)
        self.documents.commit()
        self._docs.add(batch, self._vocab, store, pending.summaries)
        self._since_refresh += len(pending)

    # -- derived files ----------------------------------------------------------------------

    def anchor_boost(self) -> AnchorBoost | None:
        """The anchor-text boost a partition built now gets (None: none)."""
        return self._anchor() if self._anchor is not None else None

    def _write_derived(self, number: int, suffix: str, state: str) -> dict[str, Any]:
        with gc_paused():
            built = build_partition(self._docs, self._vocab, anchor=self.anchor_boost())
        pdir = partition_dir(self.path, number)
        payloads = derived_payloads(built)
        files = {kind: kind + suffix for kind in payloads}
        atomic_write_many(pdir, {files[kind]: frame(kind, payload)
                                 for kind, payload in payloads.items()})
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
        self._refreshed = manifest
        logger.debug("partition %d refreshed: generation %d, %d documents", number,
                     self._generation, len(self._docs))

    def _promote_refreshed(self, number: int, refreshed: dict[str, Any]) -> dict[str, Any]:
        """The closed partition's MANIFEST when nothing was appended since the last refresh:
        that refresh's derived files are exactly what closing would build (a crawl's end
        refreshes so that link analysis reads every document, then closes), so they take
        the final names as hard links instead of being built and written again."""
        files = {kind: kind for kind in refreshed["files"]}
        link_many(partition_dir(self.path, number),
                  {refreshed["files"][kind]: files[kind] for kind in files})
        return {**refreshed, "state": "closed", "files": files}

    def close_partition(self) -> int | None:
        """Write the active partition's final files and start a new partition.

        Returns the closed partition's number (None if it was empty). The dictionary updater
        merges it into the dictionary later, in its own process.
        """
        if not self._docs:
            return None
        number = self.documents.active
        manifest = None
        if self._refreshed is not None and not self._since_refresh:
            try:
                manifest = self._promote_refreshed(number, self._refreshed)
            except OSError as exc:  # a file system without hard links: build them again
                logger.info("partition %d: refreshed files not linked (%s)", number, exc)
        if manifest is None:
            manifest = self._write_derived(number, "", "closed")
        write_partition_manifest(self.path, number, manifest)
        self.documents.start_partition()
        self._delete_stale_generations(number, keep=set())
        self._docs = ActiveDocs()
        self._vocab = Vocabulary()
        self._generation = 0
        self._since_refresh = 0
        self._refreshed = None
        partition_dir(self.path, self.documents.active).mkdir(parents=True, exist_ok=True)
        logger.info("partition %d closed: %d documents, %d groups, %d terms", number,
                    manifest["docs"], manifest["groups"], manifest["terms"])
        return number

    def reorder_partition(self, number: int, importance: Importance, tag: str
                          ) -> ReorderResult:
        """Re-order finished partition ``number`` by ``importance`` (see
        :mod:`indexer.core.bundle.reorder`); ``tag`` names the importance in its MANIFEST."""
        if self._lock is None:
            raise IndexStateError("writer is closed")
        return rewrite_partition(self.path, self.documents, number, importance, tag,
                                 anchor=self.anchor_boost())

    def close(self) -> None:
        """Refresh the active partition, then release the files and the lock."""
        if self._lock is None:
            return
        if self._since_refresh:
            self.refresh()
        self.documents.close_files()
        self._lock.release()
        self._lock = None  # type: ignore[assignment]

    def abandon(self) -> None:
        """Release the files and the lock without writing anything, after a call failed
        half-way (a write that found the disk full): the documents of the failed call were
        never acknowledged, and what is in memory may be ahead of the disk, so it is dropped.
        Uncommitted bytes are cut and temporary files removed now (a full disk gets the space
        back at once); a new writer reopens from what is committed, as after a kill -9."""
        if self._lock is None:
            return
        try:
            self.documents.discard_uncommitted()
            for folder in (self.path, self.path / DOCUMENTS,
                           partition_dir(self.path, self.documents.active)):
                if folder.is_dir():
                    remove_temporaries(folder)
        finally:
            self._lock.release()
            self._lock = None  # type: ignore[assignment]

    def __enter__(self) -> IndexBundleWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
