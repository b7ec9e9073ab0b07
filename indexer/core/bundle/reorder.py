"""Re-order a finished partition by importance: its doc_map, positions, postings and term
records are re-written so that the doc_map (and so every posting list and Doc Rank) follows
importance instead of crawl order.

Layer: ``indexer.core``. Called by the bundle's writer (:meth:`IndexBundleWriter.reorder_partition
<indexer.core.bundle.writer.IndexBundleWriter.reorder_partition>`, the queue server's loop) or on its own
(:func:`reorder_partition`, which takes ``BUNDLE/LOCK``); importance comes from the caller as a
function of url hashes (the crawler's glue adapts the crawl's link scores), so this package
imports nothing of ``ranking``.

Why: the seed ("Yioop Search Engine Ranking Mechanisms") scans a query's posting lists only until
it has the first n matches ("minimum results to group", 200), assuming "the first n matching
documents in Yioop's posting lists contain the 10 most important", and computes
``DOC_RANK = log10(number_of_documents_after)`` from the (partition, doc_map index) order. Our
doc_map order is the crawl order, so a page crawled late is never among the first n however
well it is linked. Once link analysis has scored the crawl, each finished partition is
rebuilt with its groups sorted by :func:`indexer.core.partition.grouping.importance_order`, as Lucene's
index sorting and impact-ordered indexes sort a segment's documents. Only the order *within* a
partition changes; partitions keep their documents (see the closing note of the issue for why).

What is re-written (nothing is modified in place)::

    positions_doc_map/N/doc_map.gG, positions.gG, postings.gG, last_entries.gG   (G = the
    previous generation + 1), then MANIFEST (generation G, ``order``: the caller's tag of the
    importance it used), then the dictionary's records of N if N was merged.

The stored documents (``partition_N.txt.gz`` / ``.ix``) do not move: the doc_map's member rows
point into them. The rebuild starts from the document index blobs stored with the documents
(:func:`indexer.core.partition.build.load_partition_docs`), the same input the partition was
built from when it closed, so grouping and term statistics are unchanged; link documents'
region weights get the anchor-text boost of the scores the caller passes
(:mod:`indexer.core.partition.anchors`), which is how a partition finished before the crawl's
first link analysis gets its boost.

Crash safety (kill -9 at any instant leaves the old order, or the new one, valid and searchable):

1. the new files are written under names no MANIFEST names (fsynced; debris of a killed run is
   deleted at the start of the next one);
2. under ``dictionary/LOCK`` (so the dictionary updater never merges half of it), MANIFEST is
   replaced atomically: from then on readers use the new files. If the partition was already
   merged, the MANIFEST says ``"merged": false`` and readers read its term records from the
   new last_entries, not from the dictionary, until
   :func:`indexer.core.dictionary.updater.remerge_partition` has merged the new records and cleared the
   mark (the dictionary updater finishes that step if the process dies before it);
3. the previous generation's files are deleted. A reader keeps the files of its snapshot open
   (:class:`indexer.core.bundle.reader.IndexBundleReader`), so this never pulls a file from under a
   search; a reader whose snapshot straddles the switch sees a MANIFEST change and retries.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..dictionary.tree import BPlusTree, BPlusTreeWriter
from ..dictionary.updater import remerge_partition
from ..documents.store import PartitionDocumentBundle
from ..errors import IndexLockedError, IndexStateError
from ..files.storage import FileLock, atomic_write_many, frame, remove_temporaries
from ..partition.anchors import AnchorBoost
from ..partition.build import build_partition, load_partition_docs
from ..partition.grouping import Importance, importance_order
from ..runtime.gc_pause import gc_paused
from .layout import (
    DICTIONARY,
    DOCUMENTS,
    LOCK,
    PARTITION_FILES,
    derived_payloads,
    partition_dir,
    read_partition_manifest,
    write_partition_manifest,
)

logger = logging.getLogger(__name__)

ORDER_KEY = "order"  # MANIFEST field: the tag of the importance a partition is ordered by


@dataclass(frozen=True, slots=True)
class ReorderResult:
    """One re-ordered partition: its new generation, groups, how many groups changed place,
    whether the dictionary's records were re-merged, and the seconds it took."""

    partition: int
    generation: int
    groups: int
    moved: int
    remerged: bool
    seconds: float


def finished_partitions(bundle: str | os.PathLike[str]) -> list[int]:
    """Partitions whose MANIFEST says ``closed`` (immutable documents), ascending."""
    pdm = Path(bundle) / "positions_doc_map"
    numbers = sorted(int(e.name) for e in os.scandir(pdm) if e.name.isdigit()) \
        if pdm.is_dir() else []
    out = []
    for number in numbers:
        manifest = read_partition_manifest(Path(bundle), number)
        if manifest is not None and manifest["state"] == "closed":
            out.append(number)
    return out


def partitions_to_reorder(bundle: str | os.PathLike[str], tag: str) -> list[int]:
    """Finished partitions not yet ordered by the importance ``tag`` names, ascending."""
    return [n for n in finished_partitions(bundle)
            if (read_partition_manifest(Path(bundle), n) or {}).get(ORDER_KEY) != tag]


def reorder_partition(bundle: str | os.PathLike[str], partition: int, importance: Importance,
                      tag: str, *, lock_timeout: float = 60.0,
                      anchor: AnchorBoost | None = None) -> ReorderResult:
    """Re-order finished ``partition`` of the bundle at ``bundle`` by ``importance`` (see the
    module docstring; ``anchor``: the anchor-text boost of the same scores), taking the bundle's writer lock (``IndexLockedError`` when a writer
    holds it: a running writer re-orders through
    :meth:`~indexer.core.bundle.writer.IndexBundleWriter.reorder_partition` instead)."""
    path = Path(bundle)
    lock = FileLock(path / LOCK)
    try:
        documents = PartitionDocumentBundle(path / DOCUMENTS)
        try:
            return rewrite_partition(path, documents, partition, importance, tag,
                                     lock_timeout=lock_timeout, anchor=anchor)
        finally:
            documents.close_files()
    finally:
        lock.release()


def _stale_files(pdir: Path, keep: set[str]) -> list[Path]:
    out = []
    for entry in os.scandir(pdir):
        base = entry.name.split(".g")[0]
        if base in PARTITION_FILES and entry.name not in keep:
            out.append(Path(entry.path))
    return out


def _wait_lock(path: Path, timeout: float) -> FileLock:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return FileLock(path)
        except IndexLockedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def rewrite_partition(bundle: Path, documents: PartitionDocumentBundle, partition: int,
                      importance: Importance, tag: str, *, lock_timeout: float = 60.0,
                      anchor: AnchorBoost | None = None) -> ReorderResult:
    """The re-order itself; the caller holds ``BUNDLE/LOCK`` (it is the bundle's writer, or
    :func:`reorder_partition`). ``anchor``: the anchor-text boost the rebuilt partition's link
    documents get (:mod:`indexer.core.partition.anchors`), None for none."""
    started = time.perf_counter()
    manifest = read_partition_manifest(bundle, partition)
    if manifest is None or manifest["state"] != "closed":
        raise IndexStateError(f"partition {partition} is not finished: only closed partitions "
                              f"are re-ordered")
    pdir = partition_dir(bundle, partition)
    remove_temporaries(pdir)
    for debris in _stale_files(pdir, set(manifest["files"].values())):
        debris.unlink()  # a killed re-order's files: no MANIFEST names them
    docs, vocab = load_partition_docs(documents, partition)
    if len(docs) != manifest["docs"]:
        raise IndexStateError(f"partition {partition}: {len(docs)} stored documents, its "
                              f"MANIFEST says {manifest['docs']}")
    moved = 0

    def order(groups: list, doc_ids: list[bytes]) -> list:
        nonlocal moved
        ordered = importance_order(groups, doc_ids, importance)
        moved = sum(1 for a, b in zip(groups, ordered, strict=True)
                    if a.representative != b.representative)
        return ordered

    with gc_paused():
        built = build_partition(docs, vocab, order=order, anchor=anchor)
    generation = int(manifest["generation"]) + 1
    payloads = derived_payloads(built)
    files = {kind: f"{kind}.g{generation}" for kind in payloads}
    atomic_write_many(pdir, {files[kind]: frame(kind, payload)
                             for kind, payload in payloads.items()})
    new = {**manifest, "generation": generation, "files": files, ORDER_KEY: tag,
           "groups": built.groups, "terms": built.terms, "postings": built.postings_count,
           "positions": built.positions_count}
    new.pop("merged", None)
    tree_dir = bundle / DICTIONARY
    tree_dir.mkdir(exist_ok=True)
    dict_lock = _wait_lock(tree_dir / LOCK, lock_timeout)
    try:
        remove_temporaries(tree_dir)
        tree = BPlusTree(tree_dir)
        try:
            merged = partition < tree.next_partition
        finally:
            tree.close()
        if merged:
            new["merged"] = False
        write_partition_manifest(bundle, partition, new)
        if merged:
            writer = BPlusTreeWriter(tree_dir)
            try:
                with gc_paused():
                    remerge_partition(writer, bundle, partition)
            finally:
                writer.close()
        for old in _stale_files(pdir, set(files.values())):
            old.unlink(missing_ok=True)
    finally:
        dict_lock.release()
    seconds = time.perf_counter() - started
    logger.info("partition %d re-ordered (%s): generation %d, %d groups, %d moved, %.2f s",
                partition, tag, generation, built.groups, moved, seconds)
    return ReorderResult(partition, generation, built.groups, moved, merged, seconds)
