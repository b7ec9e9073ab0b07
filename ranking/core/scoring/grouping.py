"""Query-time grouping of raw candidates (the seed's group iterator, after the first n).

Layer: ``ranking.core``. Input: candidates of one or several shards (doc_ids and scores);
output: groups with a representative row and combined scores.

1. By url hash (doc_id bytes 0-7): a page and the link documents filed under its url (from other
   partitions or shards) form one group. The representative is the page with the highest Doc
   Rank, else the best link. Doc Rank = the maximum; relevance = the best of its page members'
   plus its link members' (anchor text is evidence for the page, as Yioop adds grouped
   relevance); proximity = the maximum. A page indexed in two partitions has an entry in each,
   and the anchor text folded into one entry at index time is only in that entry's relevance:
   the best page entry's relevance counts, not the one with the highest Doc Rank's, so the
   evidence of anchors filed beside the later copy is not lost (the copies hold the same text,
   so nothing is added up twice).
2. Groups whose representatives are pages with the same text hash (doc_id bytes 9-15) merge:
   the one with the highest score represents them; Doc Rank, relevance and proximity are the
   maxima (duplicates carry the same text, so nothing adds up).

The group score (:func:`score_groups`) is the one function both sides of the wire use: the name
server ranks the merged groups with it (:mod:`ranking.core.search.pipeline`, with the link score) and a
shard picks the groups whose summary heads it sends along with it
(:func:`ranking.core.remote.server.best_representatives`, without the link score). Grouping
(:func:`group_rows`) weighs Doc Rank and relevance only (:func:`grouping_weights`) when it picks
the representative of pages with equal text, on both sides too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from indexer.core.ids import DOC_TYPE, DocType
from ranking.core.options import SearchOptions
from ranking.core.scoring.formulas import RRF_K, RRF_SCALE, combine, dense_ranks, fuse

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Groups:
    rep: IntArray           # candidate row of each group's representative
    member_group: IntArray  # group of each candidate row
    doc_rank: FloatArray
    relevance: FloatArray
    proximity: FloatArray

    def __len__(self) -> int:
        return int(self.rep.size)

    def members(self, group: int) -> IntArray:
        return np.flatnonzero(self.member_group == group)


def _hash_column(ids: npt.NDArray[np.uint8], lo: int, hi: int) -> npt.NDArray[np.uint64]:
    cols = np.zeros((ids.shape[0], 8), dtype=np.uint8)
    cols[:, :hi - lo] = ids[:, lo:hi]
    return cols.view("<u8").ravel()


def no_grouping(doc_rank: FloatArray, relevance: FloatArray, proximity: FloatArray) -> Groups:
    m = doc_rank.size
    rows = np.arange(m, dtype=np.int64)
    return Groups(rows, rows, doc_rank, relevance, proximity)


def group_candidates(doc_ids: npt.NDArray[np.uint8], doc_rank: FloatArray,
                     relevance: FloatArray, proximity: FloatArray,
                     score_weights: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> Groups:
    m = doc_rank.size
    if m == 0:
        return no_grouping(doc_rank, relevance, proximity)
    is_link = doc_ids[:, DOC_TYPE] == DocType.LINK
    url = _hash_column(doc_ids, 0, 8)
    _, g1 = np.unique(url, return_inverse=True)
    g1 = g1.ravel()
    n1 = int(g1.max()) + 1
    order = np.lexsort((-doc_rank, is_link, g1))
    first = np.ones(m, dtype=bool)
    first[1:] = g1[order][1:] != g1[order][:-1]
    rep1 = order[first]                      # groups in ascending g1
    dr1 = np.full(n1, -np.inf)
    np.maximum.at(dr1, g1, doc_rank)
    px1 = np.full(n1, -np.inf)
    np.maximum.at(px1, g1, proximity)
    page_rel = np.full(n1, -np.inf)
    np.maximum.at(page_rel, g1[~is_link], relevance[~is_link])
    extra = np.where(is_link, relevance, 0.0)
    extra[rep1] = 0.0
    base = np.where(np.isfinite(page_rel), page_rel, relevance[rep1])
    rel1 = base + np.bincount(g1, weights=extra, minlength=n1)
    # phase 2: pages with equal text
    w_dr, w_rel, w_px = score_weights
    score1 = w_dr * dr1 + w_rel * rel1 + w_px * px1
    text = _hash_column(doc_ids[rep1], 9, 16)
    page = ~is_link[rep1]
    key = np.where(page, text.astype(np.int64) << 1, (np.arange(n1, dtype=np.int64) << 1) | 1)
    _, g2 = np.unique(key, return_inverse=True)
    g2 = g2.ravel()
    n2 = int(g2.max()) + 1
    order2 = np.lexsort((-score1, g2))
    first2 = np.ones(n1, dtype=bool)
    first2[1:] = g2[order2][1:] != g2[order2][:-1]
    best = order2[first2]
    dr2 = np.full(n2, -np.inf)
    np.maximum.at(dr2, g2, dr1)
    rel2 = np.full(n2, -np.inf)
    np.maximum.at(rel2, g2, rel1)
    px2 = np.full(n2, -np.inf)
    np.maximum.at(px2, g2, px1)
    return Groups(rep1[best].astype(np.int64), g2[g1].astype(np.int64), dr2, rel2, px2)


def grouping_weights(options: SearchOptions) -> tuple[float, float, float]:
    """The weights of Doc Rank, relevance and proximity in the score that picks the
    representative of pages with equal text: proximity is never added to a score (it is
    fused by rank, :func:`ranking.core.scoring.formulas.fuse`), so its weight here is 0."""
    return (options.doc_rank_weight, options.relevance_weight, 0.0)


def group_rows(doc_ids: npt.NDArray[np.uint8], doc_rank: FloatArray, relevance: FloatArray,
               proximity: FloatArray, options: SearchOptions, raw: bool = False) -> Groups:
    """The groups of candidate rows (one group per row with ``raw``: the ``raw:`` query)."""
    if raw:
        return no_grouping(doc_rank, relevance, proximity)
    return group_candidates(doc_ids, doc_rank, relevance, proximity, grouping_weights(options))


def group_bonus(groups: Groups, bonus_rows: FloatArray) -> FloatArray:
    """Each group's bonuses: its best member's (``bonus_rows``: every row's bonus total; a page
    and the links to it share the url, the title bonus is the page's)."""
    bonus = np.full(len(groups), -np.inf)
    np.maximum.at(bonus, groups.member_group, bonus_rows)
    bonus[~np.isfinite(bonus)] = 0.0
    return bonus


def score_groups(groups: Groups, bonus: FloatArray, options: SearchOptions, weight: float,
                 word_count: int, link: FloatArray | float = 0.0, pool: int = 0
                 ) -> tuple[FloatArray, tuple[FloatArray, FloatArray, FloatArray] | None]:
    """Every group's final score and, when proximity is fused in, the fusion's inputs (score
    S, its rank, the proximity's rank). S = Doc Rank + relevance + link score + bonuses
    (:func:`ranking.core.scoring.formulas.combine`); for a query of two or more words with a positive
    proximity weight and bonus and some proximity, fused by rank with the proximity
    (:func:`ranking.core.scoring.formulas.fuse`), else S; times the query's ``w:`` ``weight``.

    With ``pool`` > 0 the fusion is computed over the pool of the groups whose dense S rank is
    below ``pool`` (:func:`ranking.core.scoring.bounds.pool_size`: no other group can enter
    the fused top k), the proximity ranked within it; a group outside scores its S rank's part
    alone, below every pool member, in S order (docs/exact-topk.md, section 5: the fused top
    k then depends only on the best groups by S, which a pruned search finds exactly)."""
    n = len(groups)
    if word_count >= 2 and options.proximity_weight > 0 and options.proximity_bonus > 0 and \
            bool((groups.proximity > 0).any()):
        s = combine(groups.doc_rank, groups.relevance, np.zeros(n), options, bonus, 1.0, link)
        if pool <= 0:
            final, rank_s, rank_p = fuse(s, groups.proximity, options.proximity_bonus, weight)
            return final, (s, rank_s, rank_p)
        rank_s = dense_ranks(s)
        inside = rank_s < pool
        rank_p = np.full(n, 0, dtype=np.int64)
        rank_p[inside] = dense_ranks(groups.proximity[inside])
        rank_p[~inside] = int(rank_p[inside].max(initial=-1)) + 1
        per_field = RRF_SCALE / 3.0
        share = np.where(inside, options.proximity_bonus / (RRF_K + rank_p), 0.0)
        final = weight * per_field * (2.0 / (RRF_K + rank_s) + share)
        return final, (s, rank_s, rank_p)
    return combine(groups.doc_rank, groups.relevance, np.zeros(n), options, bonus, weight,
                   link), None
