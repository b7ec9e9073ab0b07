"""Regions of a shard's doc_map entries: which positions are title, description or anchor text,
and the weight of each, for the region-weighted term frequencies of the relevance.

Layer: ``ranking.core``. :class:`PartitionRegions` decodes one partition's region weights once
(the shard keeps it for its lifetime); :func:`list_regions` looks up the region of every
position of a decoded posting list once and keeps it in the list's memo; the matching step
(:mod:`ranking.core.shard.matching`) reads both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.partition.doc_map import PslColumns
from ranking.core.postings.blocks import key_index, key_partition
from ranking.core.postings.iterators import DecodedList
from ranking.core.scoring.formulas import DESCRIPTION, LINK, TITLE

IntArray = npt.NDArray[np.int64]


class PartitionRegions:
    """Region weights of one partition's doc_map entries, decoded once on first use into flat
    arrays (CSR: ``start[i]:start[i+1]`` are entry i's regions), each region classified as
    title, description or link text.

    The doc_map's position_score_list of a group lists the representative's regions (a page:
    the title first, then one per summary sentence) followed by one region per link document
    folded into the group (anchor text); link-only groups have only link regions.

    Description weights are the summarizer's sentence scores, whose scale varies from page to
    page (one sentence may score hundreds); they are rescaled so that each entry's description
    positions weigh 1 on average (length-weighted): sentence scores then rank positions within
    a page while the title, description and link weights of Page Options set the balance
    between the regions, as the Yioop design document describes.

    The same decoding keeps the classifier scores that end each position_score_list
    (:attr:`classifier`, an entries x classifier slots matrix) for the classifier rank scores
    (:meth:`classifier_bonus`).
    """

    __slots__ = ("start", "ends", "firsts", "weights", "kinds", "page_length", "entry", "codes",
                 "lengths", "title_length", "classifier", "description_max", "link_records")

    def __init__(self, reader: IndexBundleReader, partition: int) -> None:
        dm = reader.doc_map(partition)
        member_link = dm.member_ids[:, DOC_TYPE] == DocType.LINK
        links = np.bincount(dm.member_group[member_link], minlength=dm.n).astype(np.int64)
        rep_is_link = dm.doc_ids[:, DOC_TYPE] == DocType.LINK
        psl = dm.position_score_columns()
        if psl is None:  # a damaged doc_map: entry by entry (the damaged entry is named)
            decoded = [dm.position_score_list(i) for i in range(dm.n)]
            psl = PslColumns(
                np.array([k for k, _ in decoded], dtype=np.int64),
                np.array([len(rows) for _, rows in decoded], dtype=np.int64),
                np.array([p for _, rows in decoded for p, _ in rows], dtype=np.int64),
                np.array([w for _, rows in decoded for _, w in rows], dtype=np.float64))
        counts = psl.nregions
        row_start = np.cumsum(psl.nrows) - psl.nrows
        # an entry's rows: (offset, overall score), its regions, its classifier scores
        self.classifier = _classifier_scores(row_start + 1 + counts,
                                             psl.nrows - 1 - counts, psl.score)
        self.start = np.zeros(dm.n + 1, dtype=np.int64)
        np.cumsum(counts, out=self.start[1:])
        rows = _ranges(row_start + 1, counts)
        self.ends = psl.position[rows]
        weights = psl.score[rows].astype(np.float64)
        entry = np.repeat(np.arange(dm.n), counts)
        rank = np.arange(self.ends.size) - self.start[entry]
        kinds = np.full(self.ends.size, DESCRIPTION, dtype=np.int64)
        kinds[rank == 0] = TITLE
        kinds[rank >= counts[entry] - links[entry]] = LINK
        kinds[rep_is_link[entry]] = LINK
        self.kinds = kinds
        firsts = np.zeros(self.ends.size, dtype=np.int64)
        if self.ends.size:
            firsts[1:] = self.ends[:-1] + 1
            firsts[rank == 0] = 0
        self.firsts = firsts
        length = np.maximum(self.ends - firsts + 1, 0)
        desc = kinds == DESCRIPTION
        mass = np.bincount(entry[desc], weights=weights[desc] * length[desc], minlength=dm.n)
        size = np.bincount(entry[desc], weights=length[desc], minlength=dm.n)
        scale = np.divide(size, mass, out=np.ones(dm.n), where=mass > 0)
        weights[desc] *= scale[entry[desc]]
        self.weights = weights
        link = kinds == LINK
        self.entry = entry.astype(np.int64)
        self.codes = (self.entry << 32) + self.ends  # ascending: entries, then positions
        self.lengths = length
        self.title_length = np.bincount(entry[kinds == TITLE], weights=length[kinds == TITLE],
                                        minlength=dm.n)
        # the largest rescaled description weight and the number of link records of every
        # entry: the per-entry inputs of ranking.core.scoring.bounds.relevance_bound
        self.description_max = np.zeros(dm.n)
        np.maximum.at(self.description_max, entry[desc], weights[desc])
        self.link_records = np.bincount(entry[link], minlength=dm.n).astype(np.int64)
        self.page_length = np.maximum(
            dm.length - np.bincount(entry[link], weights=length[link],
                                    minlength=dm.n).astype(np.int64), 0)


    def page_weight(self, title_weight: float, description_weight: float
                    ) -> npt.NDArray[np.float64]:
        """The largest weight a page position of each entry can have (title, description
        sentence, or after the last region: the description weight), for the relevance's
        upper bound (:func:`ranking.core.scoring.bounds.relevance_bound`)."""
        title = np.where(self.title_length > 0, title_weight, 0.0)
        return np.maximum(title, description_weight * np.maximum(self.description_max, 1.0))

    def classifier_bonus(self, index: IntArray, weights: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """``Σ_j weights[j] * score_j`` of entries ``index``: their classifier scores (by
        classifier slot, 0 past an entry's last) weighed by Page Options' rank weights."""
        w = np.asarray(weights, dtype=np.float64)
        k = min(w.size, self.classifier.shape[1])
        return self.classifier[index, :k] @ w[:k]

    def locate(self, entry: IntArray, pos: IntArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
        """For positions ``pos`` of entries ``entry``: whether each falls in one of the entry's
        regions, and the index of that region in :attr:`codes` (valid where it does)."""
        at = np.searchsorted(self.codes, (entry << 32) + pos)
        ok = at < self.codes.size
        ok[ok] = self.entry[at[ok]] == entry[ok]
        return ok, at


def _ranges(first: IntArray, count: IntArray) -> IntArray:
    """``first[i], first[i] + 1, ..., first[i] + count[i] - 1`` for every i, end to end."""
    total = int(count.sum())
    return np.repeat(first - (np.cumsum(count) - count), count) + np.arange(total)


def _classifier_scores(first: IntArray, count: IntArray, scores: npt.NDArray[np.float64]
                       ) -> npt.NDArray[np.float64]:
    """The entries' classifier scores (entry i's: ``scores[first[i]:first[i] + count[i]]``,
    the (0, score) rows after its regions) as one matrix, a row per entry, zeros past an
    entry's last score."""
    width = int(count.max(initial=0))
    out = np.zeros((count.size, width), dtype=np.float64)
    if width:
        entry = np.repeat(np.arange(count.size), count)
        col = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        out[entry, col] = scores[_ranges(first, count)]
    return out


def record_lengths(loaded: list[PartitionRegions], records: IntArray) -> IntArray:
    """The lengths of link records given as (index in ``loaded`` << 40) | region index."""
    out = np.zeros(records.size, dtype=np.int64)
    part = records >> 40
    for k, regions in enumerate(loaded):
        sel = part == k
        out[sel] = regions.lengths[records[sel] & ((1 << 40) - 1)]
    return out


def list_regions(decoded: DecodedList, decoder: Any,
                 partition_regions: Callable[[int], PartitionRegions]) -> dict[str, np.ndarray]:
    """The region of every position of a decoded list (query-independent, kept in the list's
    memo): its partition, its index in the partition's region codes (-1 after the last
    region), its kind (DESCRIPTION there) and its region weight (1 there)."""
    memo = decoded.memo
    if "region_at" in memo:
        return memo
    pos, starts = decoded.all_positions(decoder)
    counts = np.diff(starts)
    keys = np.repeat(decoded.keys, counts)
    part = key_partition(keys)
    entry = key_index(keys)
    at_all = np.full(pos.size, -1, dtype=np.int64)
    kind = np.full(pos.size, DESCRIPTION, dtype=np.int64)
    weight = np.ones(pos.size)
    for p in np.unique(part).tolist():
        regions = partition_regions(p)
        sel = np.flatnonzero(part == p)
        if not sel.size or not regions.codes.size:
            continue
        ok, at = regions.locate(entry[sel], pos[sel])
        sel, at = sel[ok], at[ok]
        at_all[sel] = at
        kind[sel] = regions.kinds[at]
        weight[sel] = regions.weights[at]
    memo.update(region_part=part, region_at=at_all, region_kind=kind, region_weight=weight)
    return memo
