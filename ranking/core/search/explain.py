"""The explanation of a result's score: every input of its group's score, with the formulas.

Layer: ``ranking.core``. :mod:`ranking.core.search.pipeline` attaches :func:`explain`'s answer to each
result shown (``Result.explanation``): Doc Rank, relevance (DFR, per term), proximity, link
score, bonuses and, for fused queries, the reciprocal rank fusion (:mod:`ranking.core.scoring.formulas`).
The pipeline scores every group once into a :class:`ScoredGroups` value; the explanation of a
group reads only that value and the group's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ranking.core.options import SearchOptions
from ranking.core.query.parser import ParsedQuery
from ranking.core.scoring.formulas import BONUS_NAMES, DFR_FORMULA, RRF_K
from ranking.core.scoring.grouping import Groups
from ranking.core.search.merge import LinkValues, Merged


@dataclass(frozen=True, slots=True)
class ScoredGroups:
    """One search's groups as scored, everything the explanation of a group reads: the
    options and parsed query, the merged candidates and their groups, each group's final score,
    the fusion's inputs (score, its rank, the proximity's rank; None: not fused), the link
    values, every row's bonus total and the number of query terms (repeats counted)."""

    options: SearchOptions
    parsed: ParsedQuery
    merged: Merged
    groups: Groups
    final: np.ndarray
    fusion: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    links: LinkValues
    bonus_rows: np.ndarray
    terms: int

    def best_bonus_row(self, members: np.ndarray) -> int:
        """The member with the largest bonuses (the first of equals): the bonuses shown."""
        return int(members[int(np.argmax(self.bonus_rows[members]))])


def row_bonuses(merged: Merged, row: int) -> dict[str, Any]:
    """The bonus factors of candidate ``row`` by name, and their total."""
    values = dict(zip(BONUS_NAMES, merged.bonuses[:, row].tolist(), strict=True))
    return {**values, "total": float(sum(values.values()))}


def explain(scored: ScoredGroups, g: int, members: np.ndarray) -> dict[str, Any]:
    """Every input of group ``g``'s score (``members``: its rows)."""
    o, merged, groups, k = scored.options, scored.merged, scored.groups, scored.terms
    rep = int(groups.rep[g])
    c = merged.cands[int(merged.shard_of[rep])]
    r = int(merged.local_row[rep])
    ld = max(int(c.doc_length[r]), 1)
    norm = float(np.log2(1.0 + (c.average_length or 1.0) / ld))
    freqs = c.freq[:, r].tolist()
    values = c.term_relevance[:, r].tolist()
    terms = [{"term": term, "f": f, "f_prime": f * norm, "l_t": c.occurrences[j],
              "value": values[j]} for j, (term, f) in enumerate(zip(c.terms, freqs,
                                                                    strict=True))]
    relevance: dict[str, Any] = {
        "value": float(groups.relevance[g]), "weight": o.relevance_weight,
        "representative": float(c.relevance[r]), "N": c.documents,
        "l_avg": c.average_length, "l_d": int(c.doc_length[r]), "terms": terms,
        "formula": DFR_FORMULA}
    best = best_page_entry(merged, members)
    if best is not None and best != rep:  # the page's copy in another partition counted
        bc = merged.cands[int(merged.shard_of[best])]
        br = int(merged.local_row[best])
        relevance["best_page_entry"] = {
            "relevance": float(bc.relevance[br]), "partition": int(bc.partition[br]),
            "index": int(bc.index[br]), "l_d": int(bc.doc_length[br])}
    proximity: dict[str, Any] = {
        # never added to the score: it is fused by rank (below) or left out
        "value": float(groups.proximity[g]), "weight": 0.0,
        "proximity_weight": o.proximity_weight, "normalised": float(c.proximity[r]),
        "query_terms": k,
        "span_starts": max(int(c.doc_length[r]) - k + 1, 1), "bonus": o.proximity_bonus,
        "span_sum": float(c.proximity_raw[r]), "l_d": int(c.doc_length[r]),
        "l_avg": c.average_length,
        "formula": "sum 1/(v-u+1) over the minimal spans * log2(1 + l_avg/l_d); max "
                   "over the group (normalised: span sum * k / (l_d - k + 1) * proximity "
                   "bonus)"}
    out: dict[str, Any] = {
        "score": float(scored.final[g]),
        "weight": scored.parsed.controls.weight,
        "doc_rank": {"value": float(groups.doc_rank[g]), "weight": o.doc_rank_weight,
                     "representative": float(c.doc_rank[r]),
                     "documents_after": int(c.docs_after[r]),
                     "partition": int(c.partition[r]), "index": int(c.index[r]),
                     "group_members": int(members.size),
                     "formula": "log10(documents after); max over the group"},
        "relevance": relevance,
        "proximity": proximity,
        "link_score": _explain_link(o, scored.links, g),
        "bonuses": row_bonuses(merged, scored.best_bonus_row(members)),
        "shard": c.shard,
    }
    if scored.fusion is not None:
        s, rank_s, rank_p = scored.fusion
        out["fusion"] = {
            "score": float(s[g]), "score_rank": int(rank_s[g]),
            "proximity_rank": int(rank_p[g]), "k": RRF_K,
            "proximity_share": o.proximity_bonus,
            "formula": "w: weight * 200 * (2 / (k + score rank) + proximity bonus / "
                       "(k + proximity rank)); score = Doc Rank + relevance + link score "
                       "+ bonuses, ranks from 0 (ties share one)"}
    return out

def best_page_entry(merged: Merged, rows: np.ndarray) -> int | None:
    """The page entry among a group's ``rows`` whose relevance the group counts (the
    grouping's best page member), or None for a group of link documents only."""
    pages = rows[merged.page[rows]]
    if not pages.size:
        return None
    return int(pages[np.argmax(merged.relevance[pages])])

def _explain_link(o: SearchOptions, links: LinkValues, g: int) -> dict[str, Any]:
    row = int(links.best_row[g])
    out: dict[str, Any] = {
        "value": float(links.group[g]), "weight": o.link_score_weight,
        "available": links.on,
        "formula": "log10(1 + LinkRank relative) + trust; max over the group"}
    if row >= 0:
        out["linkrank_relative"] = float(links.relative[row])
        out["trust"] = float(links.trust[row])
    elif links.scores is None and o.link_score_weight:
        out["note"] = "no link scores for this crawl (run webgraph, linkrank, score_update)"
    return out



def relevance_share(explanation: dict[str, Any]) -> float:
    """A result's relevance as a share of the most its query's terms can give, in [0, 1]:
    the group's DFR relevance (before Doc Rank, the link score, bonuses and rank fusion) over
    ``sum_t log2(1 + N / l_t)``, each term's part as its frequency grows (see
    :data:`~ranking.core.scoring.formulas.DFR_FORMULA`). Unlike the final score, which is
    fused by rank and so the same for every query of two or more words, it compares across
    queries and query lengths: a result holding every term often is near 1, one missing
    terms or holding them once in a long page lower. 0 when the explanation has no terms.
    What the query log records for needy queries (seed 001)."""
    relevance = explanation.get("relevance") or {}
    n = max(float(relevance.get("N") or 0.0), 1.0)
    terms = relevance.get("terms") or ()
    most = sum(float(np.log2(1.0 + n / max(float(t.get("l_t") or 0.0), 1.0))) for t in terms)
    if most <= 0.0:
        return 0.0
    return min(1.0, max(0.0, float(relevance.get("value") or 0.0) / most))
