"""Keep a queue server's index in importance order: re-order its finished partitions whenever
link analysis writes a new score file for the crawl.

Layer: ``crawler.core``. Adapts the crawl's link scores (:mod:`indexer.core.signals.link_scores`) into
the importance function :mod:`indexer.core.bundle.reorder` takes (url hashes -> importance), and
paces the work for the queue server's loop: one partition per :meth:`IndexOrderer.step`.

Importance of a url: its link score ``log10(1 + relative LinkRank) + trust``
(:func:`indexer.core.signals.link_scores.link_score`, the same boost search adds beside Doc Rank), 0 for a
url the graph does not know. :func:`indexer.core.partition.grouping.importance_order` adds it to the
group's crawl-order Doc Rank within the partition, so both are on Doc Rank's log10 scale.

Each re-order also gives the partition's link documents the anchor-text boost of the same
scores (:func:`link_anchor_boost`, :mod:`indexer.core.partition.anchors`): a partition finished
before the crawl's first link analysis (every partition of a crawl smaller than the analysis
interval, whose only analysis runs at its end) gets its boost this way.

Once every finished partition is ordered by a score file, the bundle's common-phrase lexicon
(:mod:`indexer.core.signals.phrases`: the word runs of its titles and anchor texts, which search
prefers in order) is rebuilt, so each queue server keeps its own shard's lexicon current on its
own machine; a lexicon newer than the score file is current.

A score file is named by its *tag*, ``<inode>-<mtime_ns>-<size>`` (link analysis replaces the
file by a rename, so a new version has a new inode): each partition's MANIFEST
records the tag it was ordered by, so a new score file re-orders every finished partition once,
a restarted queue server carries on where it stopped, and an unchanged file costs one ``stat``
per check.

When a crawl has ended (no writer holds its bundle), :func:`reorder_ended_bundle` re-orders its
partitions several at a time, each in a worker process, while the calling process counts the
phrase lexicon (``manage.py crawl``'s last step: every core busy, so the crawl is "finished"
sooner after its last page); their dictionary re-merges still take the dictionary's lock one
at a time.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt

from indexer.core.bundle.layout import DOCUMENTS, LOCK
from indexer.core.bundle.reorder import (
    ReorderResult,
    partitions_to_reorder,
    reorder_partition,
    rewrite_partition,
)
from indexer.core.bundle.writer import IndexBundleWriter
from indexer.core.documents.store import PartitionDocumentBundle
from indexer.core.files.storage import FileLock
from indexer.core.partition.anchors import AnchorBoost
from indexer.core.partition.grouping import Importance
from indexer.core.runtime.workdir import phrases_path
from indexer.core.signals.link_scores import (
    LinkScores,
    anchor_boost,
    cached_link_scores,
    link_score,
)
from indexer.core.signals.phrase_counting import count_bundle_phrases

logger = logging.getLogger(__name__)


def link_importance(scores: LinkScores) -> Importance:
    """The importance function of a crawl's link scores (see the module docstring)."""
    def importance(url_hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.float64]:
        return link_score(scores.scores_for(url_hashes, "linkrank_relative"),
                          scores.scores_for(url_hashes, "trust"))
    return importance


def link_anchor_boost(scores: LinkScores) -> AnchorBoost:
    """The anchor-text boost of a crawl's link scores: per source url hash,
    :func:`~indexer.core.signals.link_scores.anchor_boost` of its relative LinkRank."""
    def boost(url_hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.float64]:
        return anchor_boost(scores.scores_for(url_hashes, "linkrank_relative"))
    return boost


def current_anchor_boost(scores: str | os.PathLike[str]) -> AnchorBoost | None:
    """The anchor-text boost of the score file at ``scores`` as it is now (one ``stat`` when
    it is unchanged), None while there is none or it cannot be read."""
    loaded = cached_link_scores(Path(scores)).get()
    return link_anchor_boost(loaded) if loaded is not None else None


def scores_tag(path: str | os.PathLike[str]) -> str | None:
    """``<inode>-<mtime_ns>-<size>`` of the score file, or None when there is none."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return f"{st.st_ino}-{st.st_mtime_ns}-{st.st_size}"


class IndexOrderer:
    """Re-orders one bundle's finished partitions by the newest link scores of its crawl.

    ``writer``: the bundle's open writer (the queue server's, which holds the bundle's lock);
    None to take the lock for each step (a bundle whose crawl has ended). ``check_seconds``:
    how often :meth:`step` looks for a new score file or a newly finished partition when
    there is nothing to do (a check reads every partition's MANIFEST)."""

    def __init__(self, bundle: str | os.PathLike[str], scores: str | os.PathLike[str],
                 writer: IndexBundleWriter | None = None, check_seconds: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bundle = Path(bundle)
        self.scores = Path(scores)
        self.writer = writer
        self.check_seconds = check_seconds
        self._clock = clock
        self._next_check = float("-inf")

    def step(self) -> ReorderResult | None:
        """Re-order the first finished partition not ordered by the current score file, if
        any (and not checked within ``check_seconds``); None when there was nothing to do."""
        now = self._clock()
        if now < self._next_check:
            return None
        tag = scores_tag(self.scores)
        todo = partitions_to_reorder(self.bundle, tag) if tag is not None else []
        loaded = cached_link_scores(self.scores).get() if todo else None
        if not todo or loaded is None or scores_tag(self.scores) != tag:
            # nothing to do, an unreadable file (logged by the cache), or replaced meanwhile
            self._next_check = now + self.check_seconds
            if tag is not None and not todo:
                self._refresh_phrases()
            return None
        importance = link_importance(loaded)
        if self.writer is not None:
            # the writer's anchor boost reads the same file, just loaded
            result = self.writer.reorder_partition(todo[0], importance, str(tag))
        else:
            result = reorder_partition(self.bundle, todo[0], importance, str(tag),
                                       anchor=link_anchor_boost(loaded))
        if len(todo) == 1:
            self._next_check = now + self.check_seconds
        return result

    def _refresh_phrases(self) -> None:
        """Rebuild the bundle's phrase lexicon when the score file is newer than it."""
        target = phrases_path(self.bundle)
        try:
            if target.exists() and target.stat().st_mtime_ns >= self.scores.stat().st_mtime_ns:
                return
        except OSError as exc:
            logger.error("phrase lexicon of %s not rebuilt: %s", self.bundle, exc)
            return
        _save_phrases(self.bundle)

    def run(self) -> list[ReorderResult]:
        """Every step until nothing is left to re-order (a crawl that has ended)."""
        out = []
        self._next_check = float("-inf")
        while (result := self.step()) is not None:
            out.append(result)
            self._next_check = float("-inf")
        return out


def reorder_ended_bundle(bundle: str | os.PathLike[str], scores: str | os.PathLike[str],
                         processes: int) -> list[ReorderResult]:
    """Re-order every finished partition of a bundle no writer holds (its crawl has ended) by
    the score file ``scores``, ``processes`` partitions at a time in worker processes (one at
    a time in this process when ``processes`` is 1 or there is one partition to do), and
    rebuild its phrase lexicon meanwhile, as :meth:`IndexOrderer.run` does after its steps. This process holds the
    bundle's lock meanwhile (``IndexLockedError`` when a writer has it)."""
    tag = scores_tag(scores)
    todo = partitions_to_reorder(bundle, tag) if tag is not None else []
    if processes <= 1 or len(todo) <= 1:
        return IndexOrderer(bundle, scores).run()
    lock = FileLock(Path(bundle) / LOCK)
    try:
        with ProcessPoolExecutor(min(processes, len(todo)),
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_reorder_one, (str(bundle), n, str(scores), str(tag)))
                       for n in todo]
            # meanwhile this process counts the phrase lexicon: it reads titles and anchor
            # texts, which a re-order does not change (a reader keeps the files it opened)
            _save_phrases(Path(bundle))
            results = [future.result() for future in futures]
    finally:
        lock.release()
    return results + IndexOrderer(bundle, scores).run()  # what changed meanwhile


def _save_phrases(bundle: Path) -> None:
    """Count the bundle's phrase lexicon and save it beside the bundle (an error is logged:
    search goes on without the phrase bonus)."""
    try:
        count_bundle_phrases(bundle).lexicon().save(phrases_path(bundle))
    except (OSError, ValueError) as exc:
        logger.error("phrase lexicon of %s not rebuilt: %s", bundle, exc)


def _reorder_one(task: tuple[str, int, str, str]) -> ReorderResult:
    """One partition's re-order in a worker process (the parent holds the bundle's lock)."""
    bundle, partition, scores, tag = task
    loaded = cached_link_scores(Path(scores)).get()
    if loaded is None:
        raise ValueError(f"the score file {scores} cannot be read")
    documents = PartitionDocumentBundle(Path(bundle) / DOCUMENTS)
    try:
        return rewrite_partition(Path(bundle), documents, partition, link_importance(loaded),
                                 tag, anchor=link_anchor_boost(loaded))
    finally:
        documents.close_files()
