"""Scores of the seed's "Search Time Ranking Factors", vectorised over a candidate set.

Layer: ``ranking.core``. Pure functions over numpy arrays (and, for the url and title bonuses,
strings of the few results whose summaries are read). :mod:`ranking.core.search.pipeline` feeds them;
the unit tests check each against values worked out by hand from the formulas.

* Doc Rank: ``log10(number_of_documents_after)`` (:mod:`indexer.core.partition.grouping`); a group takes
  the maximum of its members'.
* Relevance (DFR, Amati and van Rijsbergen 2002, "Probabilistic models of information
  retrieval based on measuring the divergence from randomness"; the seed, "Yioop Search Engine
  Ranking Mechanisms", writes it as ``(log2(1 + l_t/N) + f' log2(1 + N/l_t)) / (f' + 1)``)::

      Rel(d) = sum over query terms t of  B_t * (f'_{t,d} + rho_t) / (f'_{t,d} + 1)
      A_t = log2(1 + l_t/N),  B_t = log2(1 + N/l_t),  rho_t = min(A_t/B_t, B_t/A_t)
      f'_{t,d} = f_{t,d} * log2(1 + l_avg / l_d)

  The seed's formula is DFR's Bose-Einstein model with Laplace after-effect and normalisation
  2 (``Inf1 = log2(1 + lambda) + f' log2(1 + 1/lambda)``, ``lambda = l_t/N``, times the
  after-effect ``1/(f' + 1)``), i.e. ``B + (A - B)/(f' + 1)``: it grows with ``f'`` only
  while ``A <= B``, that is while ``l_t <= N``. For a term with more occurrences than there
  are documents (a site's own subject words; common once whole pages are indexed) it *falls*
  as ``f'`` grows, and a term absent from a document would score more than one present many
  times. More occurrences of a query term must never lower relevance, so the intercept is
  bounded: with ``rho = A/B`` the expression is exactly the seed's, and ``rho = min(A/B,
  B/A) <= 1`` keeps it non-decreasing in ``f'`` for every ``l_t`` and ``N``. Because
  ``A(lambda) = B(1/lambda)``, ``rho(lambda) = rho(1/lambda)``: a term k times more common
  than the documents gets the intercept share of a term k times rarer. So the score is the
  seed's for ``l_t <= N`` (every worked value of the seed holds), is continuous at ``l_t = N``
  (where both give 1 for every ``f'``), still grows with ``f'`` (saturating, as Laplace's
  after-effect does) above it, and falls as ``l_t`` grows above ``N`` at a fixed ``f'``
  (the seed's rises there, ranking a stop word's occurrence above a rare word's). Bounding
  the intercept only by ``B`` (``rho = 1``) would be monotone too but flat: every page would
  score alike for any common word, however often it holds it. (On the relevance bench's
  cached default-tier index the dev figures are unchanged: ``N`` counts the link documents
  too, so the query terms there have ``l_t <= N``; whole-page indexes are where it matters.)
  ``f_{t,d}`` sums the region weight of every position of ``t`` in ``d`` (title positions weigh
  the title weight, description positions the description weight times their sentence score,
  link-text positions the link weight). The seed writes ``log`` in the normalisation without a
  base; we use base 2, DFR's "normalisation 2", consistent with the rest of the formula.
  A repeated query term counts twice. Meta words have no positions and are not summed.
  Sentence scores are rescaled per document to average 1 (length-weighted), so the Page
  Options region weights set the balance between title, description and anchor text.
  Anchor text folded into a page's doc_map entry is not part of the page's ``f``: each link
  record is scored on its own (``l_d`` = its length) and a group adds its records' relevance
  as ``Σ α_i Rel_i``, ``α_i = 1/2^i`` by decreasing relevance (:func:`record_relevance`,
  the Yioop design document's grouped relevance); the page part uses the page's own length.
* Proximity (two or more non-meta terms): minimal spans ``[u, v]`` holding every query term
  (repeats included) with no smaller interval inside holding them all; the span sum
  ``sum 1/(v - u + 1)`` (Yioop 2021's cover proximity), normalised for the document's length
  as a term frequency is in the relevance: ``Prox(d) = sum 1/(v - u + 1) * log2(1 + l_avg /
  l_d)`` (:func:`proximity_frequency`). The seed's normalisation ``* k / max(1, l_d - k + 1)``
  (``k`` query terms, ``l_d - k + 1`` positions where a span could start) is still computed
  and shown, but it measures density: on a whole manual page of 10,000 words it is about
  0.0001 whatever the page holds, so it cannot tell the page that has the query's words side
  by side from one that has them far apart.
* Bonuses (computed by the shard for every candidate, not only the top few): host url (the url is a host root), company-level-domain url (a root whose host is
  its CLD), wiki, number of slashes (``bonus / (1 + slashes after the host)``), and the keyword
  bonuses ``bonus * (query terms in the item) / (terms in the item)`` for the host, the title
  and the url path; the title's also times the share of the distinct query terms it holds
  (:func:`title_keyword_bonus`).
* Common phrase bonus (the seed: a query whose words form a phrase "common enough to have a
  Wikipedia page" prefers results with the words in that order; here a phrase common in the
  crawl's own titles and anchor texts, :mod:`indexer.core.signals.phrases`)::

      Phrase(d) = common_phrase_bonus * (the query's common phrases d holds in order, at
                  consecutive positions) / (the query's common phrases)

  (:func:`common_phrase_bonus`); 0 for a query without a common phrase.
* Definition and topic bonuses (issue 36): ``definition_bonus`` when the document defines
  what the whole query names (an API object, a module, a setting; a dotted name's last two or
  three components count), ``topic_bonus`` when one of its headings or defined terms is the
  whole query (keys of analysed terms, :mod:`indexer.core.signals.definitions`; looked up by
  :mod:`ranking.core.shard.definitions`); 0 for a query with no such key.
* Classifier rank scores (the seed's "run classifiers on the summary and add any class labels
  and rank scores"; Yioop's user ranks): ``Σ_j classifier_weights[j] * score_j(d)`` over the
  classifier slots, the scores the crawl stored in the doc_map entry
  (:meth:`ranking.core.shard.regions.PartitionRegions.classifier_bonus`); a bonus beside Doc Rank.
* Link score (seed 002's document boost from LinkRank, seed 004's trust), from the crawl's
  ``scores.npz`` (:func:`indexer.core.signals.link_scores.link_score`)::

      Link(d) = log10(1 + linkrank_relative(d)) + trust(d)

  ``linkrank_relative`` is the LinkRank probability times the number of nodes (1 = an average
  page); the logarithm puts it on Doc Rank's scale (Doc Rank is a log10 too), so a page 100
  times as important as an average one gains about 2, like Doc Rank's gap between the first
  and the hundredth document. ``trust`` is signed (favored > 0, distrusted < 0, 0 elsewhere).
  Urls the graph does not know score 0. A group takes the maximum of its members'.
* Score S = ``w_dr * DR + w_rel * Rel + w_link * Link + bonuses``. The final score (times a
  ``w:`` weight) is S for a query of one term, and for two or more terms the reciprocal rank
  fusion of S and the proximity (:func:`fuse`: Yioop's ``(600/|F|) / (59 + rank)``, S counting
  for the two fields Doc Rank and relevance it sums, the proximity bonus weighting the
  proximity). A proximity weight of 0 leaves proximity out (the final score is then
  :func:`combine`, i.e. S). Fusing by rank keeps the proximity's scale (which grows with the
  number of spans) from swamping S, while a page whose words stand together still moves up
  past pages that only hold them apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from indexer.core.partition.url_columns import url_parts
from indexer.core.text import TextAnalyzer
from ranking.core.options import SearchOptions

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
_PHRASE_ROW = np.int64(1) << 32  # in_order_counts' code of a row (positions < 2**32)
_BIG = np.int64(1) << 32

# region kinds of the doc_map's position_score_list, as the pipeline classifies them
TITLE, DESCRIPTION, LINK = 0, 1, 2


DFR_FORMULA = ("sum_t B (f' + rho) / (f' + 1), A = log2(1 + l_t/N), B = log2(1 + N/l_t), "
               "rho = min(A/B, B/A), f' = f log2(1 + l_avg/l_d) (the seed's (A + f' B)/(f' + 1) "
               "when l_t <= N)")


def dfr_relevance(freq: FloatArray, occurrences: Sequence[float], n_docs: int, avg_len: float,
                  doc_len: IntArray) -> tuple[FloatArray, FloatArray]:
    """DFR relevance of ``m`` documents for ``T`` terms (see the module docstring: the seed's
    Bose-Einstein/Laplace formula with its intercept bounded, so that each term's part is
    non-decreasing in its frequency).

    ``freq``: (T, m) region-weighted frequencies; ``occurrences``: l_t per term;
    ``doc_len``: l_d per document. Returns (total per document, per-term contributions (T, m)).
    """
    freq = np.atleast_2d(np.asarray(freq, dtype=np.float64))
    n = max(int(n_docs), 1)
    lt = np.maximum(np.asarray(occurrences, dtype=np.float64), 1.0)[:, None]
    ld = np.maximum(np.asarray(doc_len, dtype=np.float64), 1.0)[None, :]
    norm = np.log2(1.0 + (avg_len if avg_len > 0 else 1.0) / ld)
    f = freq * norm
    a = np.log2(1.0 + lt / n)
    b = np.log2(1.0 + n / lt)
    rho = np.minimum(a / b, b / a)
    parts = b * (f + rho) / (f + 1.0)
    return parts.sum(axis=0), parts


def region_weighted_frequency(pos: IntArray, counts: IntArray, region_row: IntArray,
                              region_end: IntArray, region_weight: FloatArray,
                              default_weight: float, rows: int) -> FloatArray:
    """Σ of region weights over each row's positions.

    Regions are given row-major as (row, last position, weight): positions up to and including
    ``last position`` (after the previous region of the row) weigh ``weight``. Positions past a
    row's last region weigh ``default_weight``.
    """
    if not pos.size:
        return np.zeros(rows, dtype=np.float64)
    prow = np.repeat(np.arange(rows, dtype=np.int64), counts)
    codes = prow * _BIG + pos
    rcodes = region_row.astype(np.int64) * _BIG + region_end
    idx = np.searchsorted(rcodes, codes)
    inside = idx < rcodes.size
    inside[inside] = region_row[idx[inside]] == prow[inside]
    w = np.full(pos.size, float(default_weight))
    w[inside] = region_weight[idx[inside]]
    return np.bincount(prow, weights=w, minlength=rows)


def record_relevance(record_row: IntArray, freq: FloatArray, record_len: IntArray,
                     occurrences: Sequence[float], n_docs: int, avg_len: float, rows: int,
                     decay: float = 0.5) -> tuple[FloatArray, FloatArray]:
    """Relevance of link records grouped under their target (the Yioop design document):
    each record (one anchor text folded into the target's doc_map entry) is scored with the DFR
    formula on its own length, and a row's records add up as ``Σ α_i Rel_i`` with
    ``α_i = decay ** i`` over the row's records by decreasing relevance (the domain weight that
    halves with each further record; a record's source host is not kept, so every record of a
    row counts as coming from one host). Records holding no query term count nothing.

    ``freq``: (T, R) region-weighted frequencies of the R records. Returns (total per row,
    per-term contributions (T, rows)).
    """
    freq = np.atleast_2d(np.asarray(freq, dtype=np.float64))
    t = freq.shape[0]
    hit = freq.sum(axis=0) > 0 if freq.size else np.zeros(0, dtype=bool)
    if not hit.any():
        return np.zeros(rows), np.zeros((t, rows))
    rrow = np.asarray(record_row, dtype=np.int64)[hit]
    _, parts = dfr_relevance(freq[:, hit], occurrences, n_docs, avg_len,
                             np.asarray(record_len)[hit])
    value = parts.sum(axis=0)
    order = np.lexsort((-value, rrow))
    rrow, parts = rrow[order], parts[:, order]
    first = np.ones(rrow.size, dtype=bool)
    first[1:] = rrow[1:] != rrow[:-1]
    starts = np.flatnonzero(first)
    rank = np.arange(rrow.size) - np.repeat(starts, np.diff(np.append(starts, rrow.size)))
    alpha = decay ** rank.astype(np.float64)
    per_term = np.stack([np.bincount(rrow, weights=alpha * parts[j], minlength=rows)
                         for j in range(t)]) if t else np.zeros((0, rows))
    return per_term.sum(axis=0), per_term


def minimal_spans(term_positions: Sequence[tuple[IntArray, IntArray]],
                  multiplicity: Sequence[int], rows: int) -> tuple[IntArray, IntArray, IntArray]:
    """Every minimal span of every row: (row, u, v) arrays.

    ``term_positions[j]`` = (positions row after row, counts per row) of distinct term j, which
    the span must hold ``multiplicity[j]`` times. A span [u, v] ending at an occurrence v is
    the shortest one ending there (u = the smallest, over terms, of the c-th last occurrence at
    or before v); it is minimal exactly when u moved since the previous span end of the row.
    """
    empty = np.zeros(0, dtype=np.int64)
    parts, labels = [], []
    for j, (pos, counts) in enumerate(term_positions):
        codes = np.repeat(np.arange(rows, dtype=np.int64), counts) * _BIG + pos
        parts.append(codes)
        labels.append(np.full(codes.size, j, dtype=np.int64))
    if not parts or any(p.size == 0 for p in parts):
        return empty, empty, empty
    allc = np.concatenate(parts)
    lab = np.concatenate(labels)
    order = np.argsort(allc, kind="stable")
    allc, lab = allc[order], lab[order]
    row = allc // _BIG
    left = np.full(allc.size, np.iinfo(np.int64).max)
    valid = np.ones(allc.size, dtype=bool)
    for j, codes in enumerate(parts):
        c = int(multiplicity[j])
        seen = np.cumsum(lab == j)  # occurrences of term j up to here, inclusive
        k = seen - c
        ok = k >= 0
        lj = np.full(allc.size, -1, dtype=np.int64)
        lj[ok] = codes[k[ok]]
        ok &= (lj // _BIG) == row
        valid &= ok
        left = np.minimum(left, np.where(ok, lj, left))
    if not valid.any():
        return empty, empty, empty
    v, u, r = allc[valid], left[valid], row[valid]
    new = np.ones(v.size, dtype=bool)
    new[1:] = (r[1:] != r[:-1]) | (u[1:] != u[:-1])
    return r[new], u[new] % _BIG, v[new] % _BIG


def proximity_frequency(span_sum: FloatArray, doc_len: IntArray, avg_len: float) -> FloatArray:
    """The span sum normalised for the document's length as the relevance normalises a term's
    frequency (DFR normalisation 2): ``span_sum * log2(1 + l_avg / l_d)``. A long page holds
    more spans by its length alone; this weighs them as the seed asks (proximity normalised
    for the document's length) without the density normalisation's vanishing values."""
    ld = np.maximum(np.asarray(doc_len, dtype=np.float64), 1.0)
    avg = avg_len if avg_len > 0 else 1.0
    return np.asarray(span_sum, dtype=np.float64) * np.log2(1.0 + avg / ld)


def proximity(term_positions: Sequence[tuple[IntArray, IntArray]], multiplicity: Sequence[int],
              doc_len: IntArray, rows: int) -> tuple[FloatArray, FloatArray]:
    """(normalised proximity, raw Σ 1/(v-u+1)) per row. Zero for fewer than two terms."""
    k = int(sum(multiplicity))
    if k < 2:
        z = np.zeros(rows, dtype=np.float64)
        return z, z
    r, u, v = minimal_spans(term_positions, multiplicity, rows)
    raw = np.bincount(r, weights=1.0 / (v - u + 1), minlength=rows).astype(np.float64)
    starts = np.maximum(np.asarray(doc_len, dtype=np.float64) - k + 1, 1.0)
    return raw * k / starts, raw


# -- url and title bonuses ---------------------------------------------------------------------

EXTENSIONS = frozenset({"html", "htm", "php", "asp", "aspx", "jsp", "shtml", "xhtml"})


def url_terms(chunks: Sequence[str], analyzer: TextAnalyzer, lang: str) -> list[str]:
    """The terms of a url part's chunks (:func:`indexer.core.partition.url_columns.url_chunks`)."""
    return analyzer.terms(" ".join(chunks), lang) if chunks else []


BONUS_NAMES = ("host_url", "cld_url", "wiki", "num_slashes", "host_keyword", "title_keyword",
               "path_keyword", "common_phrase", "classifier", "definition", "topic")


@dataclass(frozen=True, slots=True)
class UrlItems:
    """The query-independent inputs of the url and title bonuses of one result."""

    host: str
    is_root: bool
    is_cld: bool
    slashes: int
    host_words: tuple[str, ...]
    path_words: tuple[str, ...]
    title_words: tuple[str, ...]


def url_items(url: str, title: str, analyzer: TextAnalyzer, lang: str) -> UrlItems:
    """The url and title inputs of the bonuses of ``url`` (its language-independent parts are
    :func:`indexer.core.partition.url_columns.url_parts`, which partitions store as columns);
    a file extension ending the path (``.html``) is not a path word."""
    parts = url_parts(url)
    path_words = url_terms(parts.path_chunks, analyzer, lang)
    if path_words and path_words[-1] in EXTENSIONS and parts.dotted:
        path_words = path_words[:-1]
    return UrlItems(parts.host, parts.is_root, parts.is_cld, parts.slashes,
                    tuple(url_terms(parts.host_chunks, analyzer, lang)), tuple(path_words),
                    tuple(analyzer.terms(title, lang) if title else ()))


def title_keyword_bonus(bonus: float, title_hits: FloatArray, title_len: FloatArray,
                        title_terms: FloatArray, query_terms: int) -> FloatArray:
    """The title bonus of each document: ``bonus * (query term occurrences in the title /
    title words) * (distinct query terms in the title / distinct query terms)``. The seed's
    share of title words, times the share of the query the title covers (Lucene's classic
    coordination factor): a one-word title holding one of two query words no longer gets
    the whole bonus, as much as a title holding both."""
    hits = np.asarray(title_hits, dtype=np.float64)
    length = np.asarray(title_len, dtype=np.float64)
    share = np.divide(hits, length, out=np.zeros(hits.size), where=length > 0)
    cover = np.asarray(title_terms, dtype=np.float64) / max(int(query_terms), 1)
    return bonus * share * cover


def in_order_counts(term_positions: Sequence[tuple[IntArray, IntArray]],
                    rows: int) -> IntArray:
    """Per row, how many times the terms stand in this order at consecutive positions.

    ``term_positions[i]`` = (positions row after row, counts per row) of the phrase's i-th
    term, as the shard decodes them for scoring (positions increase within a row). Term i's
    positions are shifted back by i and the shifted sets intersected: a start position left
    in all of them begins an occurrence of the whole phrase."""
    common = np.zeros(0, dtype=np.int64)
    for i, (pos, counts) in enumerate(term_positions):
        pos = np.asarray(pos, dtype=np.int64)
        row = np.repeat(np.arange(rows, dtype=np.int64), np.asarray(counts, dtype=np.int64))
        codes = (row * _PHRASE_ROW + pos - i)[pos >= i]
        common = codes if i == 0 else np.intersect1d(common, codes, assume_unique=True)
        if not common.size:
            break
    return np.bincount(common // _PHRASE_ROW, minlength=rows).astype(np.int64)


def common_phrase_bonus(bonus: float, in_order: Sequence[IntArray], rows: int) -> FloatArray:
    """``bonus`` times the share of the query's common phrases each document holds in order
    (``in_order[k]``: per document, the in-order occurrences of phrase k; see
    :func:`in_order_counts`). Zeros without phrases."""
    if not in_order or not bonus:
        return np.zeros(rows, dtype=np.float64)
    held = np.stack([np.asarray(c) > 0 for c in in_order]).sum(axis=0)
    return bonus * held / len(in_order)


def combine(doc_rank: FloatArray, relevance: FloatArray, prox: FloatArray,
            options: SearchOptions, bonuses: FloatArray | float = 0.0,
            weight: float = 1.0, link: FloatArray | float = 0.0) -> FloatArray:
    """The final score: weighted Doc Rank + relevance + proximity + link score, plus the
    bonuses."""
    return weight * (options.doc_rank_weight * doc_rank + options.relevance_weight * relevance
                     + options.proximity_weight * prox + options.link_score_weight * link
                     + bonuses)


# reciprocal rank fusion, with Yioop's constants (the Yioop design document)
RRF_K = 59
RRF_SCALE = 600.0


def dense_ranks(values: FloatArray) -> IntArray:
    """Yioop's fusion ranks: sorted descending, the rank starts at 0 and goes up by one only
    when the value changes (equal values share a rank)."""
    values = np.asarray(values, dtype=np.float64)
    if not values.size:
        return np.zeros(0, dtype=np.int64)
    _, inverse = np.unique(-values, return_inverse=True)
    return inverse.ravel().astype(np.int64)


def fuse(score: FloatArray, prox: FloatArray, proximity_share: float = 1.0,
         weight: float = 1.0) -> tuple[FloatArray, IntArray, IntArray]:
    """Reciprocal rank fusion of the score S = Doc Rank + relevance (with the link score and
    the bonuses) and the proximity, for queries of two or more terms (v9: "this score is then
    combined with a proximity score ... using reciprocal rank fusion").

    Yioop's 2021 fusion gives each of its |F| = 3 fields (Doc Rank, relevance, proximity)
    ``(600/|F|) / (59 + rank)``; S stands for two of them, so it counts twice::

        fused = weight * 200 * (2 / (59 + rank_S) + proximity_share / (59 + rank_Prox))

    ``proximity_share`` is the Proximity Bonus ("the weighting factor" of proximity).
    Returns (fused, rank_S, rank_Prox)."""
    rank_s = dense_ranks(score)
    rank_p = dense_ranks(prox)
    per_field = RRF_SCALE / 3.0
    fused = weight * per_field * (2.0 / (RRF_K + rank_s) + proximity_share / (RRF_K + rank_p))
    return fused, rank_s, rank_p
