"""Upper bounds of the score S before positions are read, and the pool of the rank fusion.

Layer: ``ranking.core``. Pure functions over numpy arrays; :mod:`ranking.core.shard.exact`
prunes with them (docs/exact-topk.md, sections 2 and 5).

For a doc_map entry d and the distinct query terms t, the score of the seed ("Yioop Search
Engine Ranking Mechanisms", "Search Time Ranking Factors") is::

    S(d) = w_dr DR(d) + w_link Link(d) + url bonuses(d) + classifier(d)      (Q: exact)
           + w_rel sum_t (P_t(d) + L_t(d))                                     (bounded here)
           + title keyword(d) + host and path keyword(d) + common phrase(d)    (K)

* ``P_t`` (the page part of the DFR relevance, :func:`ranking.core.scoring.formulas.
  dfr_relevance`) is ``B_t (f' + rho_t)/(f' + 1)``: with ``rho_t <= 1`` it never falls as
  ``f'`` grows, so the largest ``f'`` the entry can have bounds it. Every position of t in d
  weighs at most the entry's largest page region weight (the title weight when it has a title,
  the description weight times its largest rescaled sentence weight, and at least the
  description weight, what a position after the last region weighs), so ``f <= (positions of
  t in d) * that weight`` and ``f' <= f log2(1 + l_avg / l_page)``: :func:`relevance_bound`.
* ``L_t`` (anchor records, :func:`ranking.core.scoring.formulas.record_relevance`) adds the
  records by decreasing relevance with weights ``2^-i``; each record's part of t is at most
  ``B_t`` (a term a scored record lacks still has its intercept part), so
  ``L_t <= B_t (2 - 2^(1 - r))`` for an entry of ``r`` link records.
* The title keyword bonus grows with its title hits and the distinct query terms in the
  title: ``min(positions of the terms, title length)`` and the distinct terms held bound them.
  Host and path keyword bonuses depend on the url only and are exact; the common phrase bonus
  is at most its Page Options value when the query has a common phrase.

:func:`pool_size` is the number R of groups, by S, that the rank fusion with proximity is
computed over (section 5): a group past the R best by S cannot enter the fused top k.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ranking.core.scoring.formulas import RRF_K, RRF_SCALE

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# pools larger than this are not worth the name: fuse over every candidate (the search of a
# deep page, offset + num in the hundreds, or a proximity share too large for a pool)
MAX_POOL = 100_000


def term_bounds(occurrences: Sequence[float], n_docs: int) -> tuple[FloatArray, FloatArray]:
    """``(B_t, rho_t)`` of each term: ``B_t = log2(1 + N/l_t)``, the most a term's DFR part
    can reach, and the intercept share ``rho_t = min(A_t/B_t, B_t/A_t)`` (formulas.py)."""
    n = max(int(n_docs), 1)
    lt = np.maximum(np.asarray(occurrences, dtype=np.float64), 1.0)
    a = np.log2(1.0 + lt / n)
    b = np.log2(1.0 + n / lt)
    return b, np.minimum(a / b, b / a)


def relevance_bound(counts: FloatArray, occurrences: Sequence[float], n_docs: int,
                    avg_len: float, page_len: IntArray, page_weight: FloatArray,
                    link_records: IntArray) -> FloatArray:
    """An upper bound of every entry's relevance (page part plus link records, see the
    module): ``counts`` (T, m) are the positions of each term in each entry (page and anchor
    text together), ``page_len`` the entries' page lengths (0: no page text, no page part),
    ``page_weight`` the largest weight a page position of the entry can have and
    ``link_records`` its number of link records. Never below
    :func:`ranking.core.scoring.formulas.dfr_relevance` plus
    :func:`~ranking.core.scoring.formulas.record_relevance` of the same entry."""
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    if not counts.shape[0]:
        return np.zeros(counts.shape[1])
    b, rho = term_bounds(occurrences, n_docs)
    ld = np.maximum(np.asarray(page_len, dtype=np.float64), 1.0)
    norm = np.log2(1.0 + (avg_len if avg_len > 0 else 1.0) / ld)
    f = counts * (np.asarray(page_weight, dtype=np.float64) * norm)[None, :]
    page = b[:, None] * (f + rho[:, None]) / (f + 1.0)
    # a term absent from the page still scores its intercept B rho (f' = 0)
    page = np.where((np.asarray(page_len) > 0)[None, :], page, 0.0)
    records = np.asarray(link_records, dtype=np.float64)
    decay = np.where(records > 0, 2.0 - 2.0 ** (1.0 - records), 0.0)
    return page.sum(axis=0) + b.sum() * decay


def title_bound_inputs(counts: FloatArray, title_len: FloatArray
                       ) -> tuple[FloatArray, FloatArray]:
    """Upper bounds of the inputs of :func:`ranking.core.scoring.formulas.title_keyword_bonus`
    (which grows with both): the title hits (at most the terms' positions, at most the title's
    length) and the distinct query terms in the title (at most those the entry holds)."""
    counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    hits = np.minimum(counts.sum(axis=0), np.asarray(title_len, dtype=np.float64))
    return hits, (counts > 0).sum(axis=0).astype(np.float64)


def pool_size(k: int, proximity_share: float) -> int:
    """R: the number of best groups by S outside which no group can enter the fused top ``k``
    (the smallest the bound below proves) (:func:`ranking.core.scoring.formulas.fuse`, dense ranks from 0). Each of the
    ``k`` best by S scores at least ``(2 F)/(K + k - 1)`` (F = RRF_SCALE/3, K = RRF_K), a group
    of S rank ``r`` at most ``2F/(K + r) + s F/K``: below when ``r`` reaches R. At most
    :data:`MAX_POOL` (every candidate when the proximity share leaves no such R)."""
    k = max(int(k), 1)
    per_field = RRF_SCALE / 3.0
    room = 2.0 * per_field / (RRF_K + k - 1) - max(proximity_share, 0.0) * per_field / RRF_K
    if room <= 0:
        return MAX_POOL
    r = math.floor(2.0 * per_field / room - RRF_K) + 1
    return int(min(max(r, k), MAX_POOL))


__all__ = ["MAX_POOL", "pool_size", "relevance_bound", "term_bounds", "title_bound_inputs"]
