"""One shard's matching and scoring of a query: the first n matches, scored (no grouping).

:func:`score_block` (steps 2 to 6) scores any block of matches: the default, exact search
(:mod:`ranking.core.shard.exact`) calls it on the matches whose score bounds reach its
threshold; :func:`score_matches` is the bounded search of a shard made with ``exact=False``
(the seed's first n, and ``bench/exactness.py``'s exhaustive reference).

Layer: ``ranking.core``. :func:`score_matches` is :meth:`ranking.core.shard.local.LocalShard.candidates`
in named steps, in the spirit of tantivy's query -> weight -> scorer layering. It reads the shard
through :class:`MatchSource`, the public interface :class:`~ranking.core.shard.local.LocalShard`
implements (its kept decoded lists, regions, statistics and url features), so that this module
does not depend on the class that calls it:

1. match: the first ``n`` matches in posting order and the first ``n`` anchor-text matches
   (:func:`ranking.core.postings.tiers.candidate_block`; collecting is apart from matching,
   :mod:`ranking.core.postings.collect`), within the shard's time budget (``intersect_time_budget``,
   on the shard's clock) and read bounds (:mod:`ranking.core.postings.limits`): when either stops the
   reading, the answer holds the best found so far and is marked partial, not exhausted;
2. entries: each match's doc_map facts (doc_id, length, page length, title length) and Doc Rank
   (crawl order, or the global importance order once partitions are ordered);
3. term counts: every query term's positions, each weighed by its region (title, description
   sentence, anchor text: :mod:`ranking.core.shard.regions`), summed into the region-weighted
   frequencies; anchor-text positions kept per link record;
4. relevance (DFR) of the page part plus the link records' (:mod:`ranking.core.scoring.formulas`);
5. proximity for queries of two or more words; the estimate of the number of matches;
6. bonuses: url and title (:mod:`ranking.core.shard.url_features`), common phrases, the
   definition and topic bonuses (:mod:`ranking.core.shard.definitions`), classifier rank scores (:meth:`ranking.core.shard.regions.PartitionRegions.classifier_bonus`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from indexer.core.bundle.reader import CollectionStats, IndexBundleReader
from indexer.core.ids import DOC_ID_LEN
from indexer.core.partition.grouping import ImportanceRanks, documents_after
from indexer.core.signals.phrases import CachedPhraseLexicon
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import (
    Block,
    decode_column_positions,
    key_index,
    key_partition,
)
from ranking.core.postings.iterators import Budget, DecodedList, DecodedWordIterator
from ranking.core.postings.limits import TIME_BUDGET_MESSAGE, TRUNCATED_MESSAGE, ReadLimits
from ranking.core.postings.plan import Plan
from ranking.core.postings.tiers import candidate_block
from ranking.core.query.parser import ParsedQuery, query_word_terms
from ranking.core.scoring.formulas import (
    BONUS_NAMES,
    DESCRIPTION,
    LINK,
    TITLE,
    common_phrase_bonus,
    dfr_relevance,
    in_order_counts,
    proximity,
    record_relevance,
)
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.definitions import definition_bonuses
from ranking.core.shard.regions import PartitionRegions, record_lengths
from ranking.core.shard.url_features import BonusInputs

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class MatchSource(Protocol):
    """What :func:`score_matches` reads of a shard (:class:`~ranking.core.shard.local.
    LocalShard` keeps each between queries): its reader and name, the bounds and clock of a
    query's reads, the bundle's common phrases, and the decoded data it caches."""

    name: str
    reader: IndexBundleReader
    limits: ReadLimits
    phrases: CachedPhraseLexicon | None

    def clock(self) -> float:
        """The time of the query's time budget, in seconds."""

    def collection_stats(self) -> CollectionStats:
        """The bundle's collection statistics (N, l_avg, partition sizes)."""

    def importance_ranks(self) -> ImportanceRanks | None:
        """The global importance order, or None in crawl order."""

    def filter_keys(self, term: str) -> IntArray | None:
        """The decoded keys of a filter meta word, else None."""

    def decoded_list(self, term: str, positional: bool, whole: bool = False
                     ) -> DecodedList | None:
        """A short posting list (any with ``whole``) decoded whole, else None."""

    def term_occurrences(self, term: str) -> int:
        """l_t: the occurrences of ``term`` in the bundle."""

    def partition_regions(self, partition: int) -> PartitionRegions:
        """The regions of a partition's doc_map entries."""

    def list_regions(self, decoded: DecodedList, decoder: Any) -> dict[str, np.ndarray]:
        """The region of every position of a decoded list."""

    def bonuses(self, inputs: BonusInputs) -> FloatArray:
        """The url and title bonus factors of the candidates, rows in BONUS_NAMES order."""


# lists of at most this many documents have their positions decoded whole on first use
# (ranking.core.shard.local.LocalShard.WHOLE_LIST_DOCS); longer ones only when a query scores
# a quarter of their documents or more
WHOLE_POSITIONS_DOCS = 16_384


@dataclass(slots=True)
class _Entries:
    """Doc_map facts of every match (row) and the partitions' regions they are in."""

    doc_ids: npt.NDArray[np.uint8]
    doc_rank: FloatArray
    docs_after: IntArray
    doc_length: IntArray
    page_length: IntArray
    title_length: FloatArray
    entry_part: IntArray  # which of ``loaded`` each row is in
    loaded: list[PartitionRegions]
    loaded_at: IntArray   # partition number -> index in ``loaded``


@dataclass(slots=True)
class _TermCounts:
    """Region-weighted frequencies (T x m), title hits, positions per term, and the anchor-text
    positions (term, link record, row, weight) of each term that has some."""

    freq: FloatArray
    title_hits: FloatArray
    title_terms: FloatArray  # distinct query terms in the title
    positions: list[tuple[IntArray, IntArray]]
    link_hits: list[tuple[IntArray, IntArray, IntArray, FloatArray]]


def score_matches(shard: MatchSource, parsed: ParsedQuery, n: int,
                  options: SearchOptions) -> Candidates:
    """The first ``n`` matches of ``parsed`` in ``shard``, scored (see the module docstring);
    called under the shard's lock. The bounded search of earlier versions: the default one is
    :func:`ranking.core.shard.exact.exact_matches`."""
    terms, _ = query_word_terms(parsed)
    stats = shard.collection_stats()
    if stats.documents == 0 or parsed.is_empty:
        return Candidates.empty(shard.name, terms)
    budget = Budget(options.intersect_time_budget, shard.clock)
    block, exhausted, plan = candidate_block(shard.reader, parsed, n, budget,
                                             shard.importance_ranks(), shard.filter_keys,
                                             shard.decoded_list, shard.limits)
    # lists left unread (a bound reached, the budget run out) are not the end of the matches
    partial = budget.partial or plan.truncated
    exhausted = exhausted and not partial
    found = score_block(shard, parsed, block, plan, options)
    return replace(found, estimate=_estimate(plan, exhausted, len(block)), exhausted=exhausted,
                   partial=partial, messages=plan_messages(plan))


def plan_messages(plan: Plan) -> tuple[str, ...]:
    """The messages of an answer whose plan ran out of time or reached a read bound."""
    return ((TIME_BUDGET_MESSAGE,) if plan.budget.partial else ()) + \
        ((TRUNCATED_MESSAGE,) if plan.truncated else ())


def score_block(shard: MatchSource, parsed: ParsedQuery, block: Block, plan: Plan,
                options: SearchOptions) -> Candidates:
    """The matches ``block`` of ``parsed`` (read by ``plan``: its word iterators and positions
    decoder serve every row), scored by steps 2 to 6 of the module docstring; ``estimate``
    is the number of rows, ``exhausted`` and ``partial`` are False (the caller sets them)."""
    terms, mult = query_word_terms(parsed)
    stats = shard.collection_stats()
    m = len(block)
    parts, index = key_partition(block.keys), key_index(block.keys)
    entries = _entries(shard, parts, index, shard.importance_ranks(), stats)
    counts = _term_counts(shard, block, plan, terms, entries, index, options)
    occurrences = tuple(shard.term_occurrences(t) for t in terms)
    rel, parts_rel = _relevance(counts, entries, occurrences, stats, m)
    if parsed.word_count >= 2 and terms:
        prox, prox_raw = proximity(counts.positions, mult, entries.doc_length, m)
        prox = prox * options.proximity_bonus
    else:
        prox = prox_raw = np.zeros(m)
    bonuses = shard.bonuses(BonusInputs(parts, index, terms, counts.title_hits,
                                        entries.title_length, counts.title_terms, parsed.lang,
                                        options))
    bonuses[BONUS_NAMES.index("common_phrase")] = _phrase_bonus(
        shard.phrases, parsed, terms, counts.positions, m, options)
    at = BONUS_NAMES.index("definition")
    bonuses[at:at + 2] = definition_bonuses(shard, parsed, block.keys, options)
    if any(options.classifier_weights):
        for k, regions in enumerate(entries.loaded):
            rows = np.flatnonzero(entries.entry_part == k)
            bonuses[BONUS_NAMES.index("classifier"), rows] = regions.classifier_bonus(
                index[rows], options.classifier_weights)
    return Candidates(entries.doc_ids, parts, index, entries.docs_after, entries.doc_rank, rel,
                      prox, prox_raw, entries.doc_length, counts.freq,
                      parts_rel if terms else np.zeros((0, m)), tuple(terms), occurrences,
                      stats.documents, stats.average_length, m, False, False, shard.name, (),
                      bonuses)


def _entries(shard: MatchSource, parts: IntArray, index: IntArray,
             ranks: ImportanceRanks | None, stats: CollectionStats) -> _Entries:
    reader = shard.reader
    m = parts.size
    dr = np.zeros(m)
    after = np.zeros(m, dtype=np.int64)
    ld = np.zeros(m, dtype=np.int64)
    page_len = np.zeros(m, dtype=np.int64)
    ids = np.zeros((m, DOC_ID_LEN), dtype=np.uint8)
    entry_part = np.zeros(m, dtype=np.int64)
    title_len = np.zeros(m)
    sizes = list(stats.partition_sizes)
    numbers = [p.number for p in reader.partitions]
    loaded: list[PartitionRegions] = []
    for p in np.unique(parts):
        rows = np.flatnonzero(parts == p)
        idx = index[rows]
        dm = reader.doc_map(int(p))
        if ranks is None:
            dr[rows] = reader.doc_rank(int(p), idx)
            after[rows] = documents_after(sizes, numbers.index(int(p)), idx)
        else:  # Doc Rank from the documents after it in global importance order
            after[rows] = ranks.after[int(p)][idx]
            dr[rows] = ranks.doc_rank(int(p), idx)
        ld[rows] = dm.length[idx]
        ids[rows] = dm.doc_ids[idx]
        regions = shard.partition_regions(int(p))
        page_len[rows] = regions.page_length[idx]
        title_len[rows] = regions.title_length[idx]
        entry_part[rows] = len(loaded)
        loaded.append(regions)
    loaded_at = np.zeros(max(numbers, default=0) + 1, dtype=np.int64)
    for k, p in enumerate(np.unique(parts).tolist()):
        loaded_at[p] = k
    return _Entries(ids, dr, after, ld, page_len, title_len, entry_part, loaded, loaded_at)


def _term_counts(shard: MatchSource, block: Block, plan: Plan, terms: Sequence[str],
                 entries: _Entries, index: IntArray, options: SearchOptions) -> _TermCounts:
    m = len(block)
    kind_weight = np.array([options.title_weight, options.description_weight,
                            options.link_weight])
    out = _TermCounts(np.zeros((len(terms), m)), np.zeros(m), np.zeros(m), [], [])
    for j, term in enumerate(terms):
        pos, counts, decoded, flat = _term_positions(block, plan, term)
        out.positions.append((pos, counts))
        prow = np.repeat(np.arange(m, dtype=np.int64), counts)
        w, kind, region = _position_weights(shard, entries, index, pos, prow, decoded, flat,
                                            plan, kind_weight, options)
        page = kind != LINK
        out.freq[j] = np.bincount(prow[page], weights=w[page], minlength=m)
        in_title = np.bincount(prow[kind == TITLE], minlength=m)
        out.title_hits += in_title
        out.title_terms += in_title > 0
        lk = ~page
        if lk.any():
            out.link_hits.append((np.full(int(lk.sum()), j), region[lk], prow[lk], w[lk]))
    return out


def _term_positions(block: Block, plan: Plan, term: str
                    ) -> tuple[IntArray, IntArray, DecodedList | None, IntArray | None]:
    """A term's positions in every match (flat, with each match's count); from its whole
    decoded list when the plan kept one that covers every match (then also the decoded
    list and the positions' indexes in it)."""
    keys = block.keys
    col = block.column(term)
    word = plan.words.get(term)
    decoded = word.decoded if isinstance(word, DecodedWordIterator) and \
        (col.freq > 0).all() else None
    # a long list read whole by the exact search: only the rows scored are decoded, unless
    # the whole list's positions already are (ranking.core.shard.exact)
    if decoded is not None and not decoded.positions_decoded and \
            decoded.docs > WHOLE_POSITIONS_DOCS and len(block) * 4 < decoded.docs:
        decoded = None
    if decoded is not None:
        flat, counts = decoded.position_rows(plan.decoder, keys)
        return decoded.all_positions(plan.decoder)[0][flat], counts, decoded, flat
    pos, counts = decode_column_positions(plan.decoder, keys, col)
    return pos, counts, None, None


def _position_weights(shard: MatchSource, entries: _Entries, index: IntArray, pos: IntArray,
                      prow: IntArray, decoded: DecodedList | None, flat: IntArray | None,
                      plan: Plan, kind_weight: FloatArray, options: SearchOptions
                      ) -> tuple[FloatArray, IntArray, IntArray]:
    """(weight, kind, link record) of every position. Each position's region is looked up in
    its partition's (entry, last position) codes: title positions weigh the title weight,
    description positions their (rescaled) sentence score times the description weight,
    anchor text its weight times the link weight; positions after the last region the
    description weight. A link record is (index in ``entries.loaded`` << 40) | region, -1
    for none."""
    if decoded is not None and flat is not None:  # looked up once for the list, kept with it
        memo = shard.list_regions(decoded, plan.decoder)
        kind = memo["region_kind"][flat]
        at = memo["region_at"][flat]
        w = np.where(kind == TITLE, kind_weight[TITLE],
                     memo["region_weight"][flat] * kind_weight[kind])
        region = np.where(at >= 0, (entries.loaded_at[memo["region_part"][flat]] << 40) | at,
                          -1)
        return w, kind, region
    w = np.full(pos.size, float(options.description_weight))
    kind = np.full(pos.size, DESCRIPTION, dtype=np.int64)
    region = np.full(pos.size, -1, dtype=np.int64)
    for k, regions in enumerate(entries.loaded):
        sel = np.flatnonzero(entries.entry_part[prow] == k) if len(entries.loaded) > 1 else \
            np.arange(pos.size)
        if not sel.size or not regions.codes.size:
            continue
        ok, at = regions.locate(index[prow[sel]], pos[sel])
        sel, at = sel[ok], at[ok]
        rk = regions.kinds[at]
        kind[sel] = rk
        w[sel] = np.where(rk == TITLE, kind_weight[TITLE], regions.weights[at] * kind_weight[rk])
        region[sel] = (k << 40) | at
    return w, kind, region


def _relevance(counts: _TermCounts, entries: _Entries, occurrences: Sequence[int],
               stats: CollectionStats, m: int) -> tuple[FloatArray, FloatArray]:
    """Every match's relevance and its per-term parts: the page part's (0 for a match with no
    page text) plus its link records' (:func:`ranking.core.scoring.formulas.record_relevance`)."""
    page_len = entries.page_length
    rel, parts_rel = dfr_relevance(counts.freq, occurrences, stats.documents,
                                   stats.average_length, page_len)
    has_page = page_len > 0
    rel = np.where(has_page, rel, 0.0)
    parts_rel = np.where(has_page[None, :], parts_rel, 0.0)
    if counts.link_hits:
        term_of, rec, rec_prow, rec_w = (np.concatenate(x) for x in zip(*counts.link_hits,
                                                                         strict=True))
        records, first, rec_id = np.unique(rec, return_index=True, return_inverse=True)
        link_freq = np.zeros((counts.freq.shape[0], records.size))
        np.add.at(link_freq, (term_of, rec_id.ravel()), rec_w)
        link_len = record_lengths(entries.loaded, records)
        link_rel, link_parts = record_relevance(rec_prow[first], link_freq, link_len,
                                                occurrences, stats.documents,
                                                stats.average_length, m)
        rel = rel + link_rel
        parts_rel = parts_rel + link_parts
    return rel, parts_rel


def _estimate(plan: Plan, exhausted: bool, m: int) -> int:
    """The estimated number of matches in the shard: ``m`` when the lists ran out, else the
    plan's estimate, or the rate at which the smallest list that drove the matching matched."""
    est = plan.root.estimate
    if exhausted:
        est = m
    elif m:
        drivers = [w for w in plan.words.values() if w.consumed]
        if drivers:
            smallest = min(drivers, key=lambda w: w.estimate)
            est = max(m, min(est, int(m * smallest.estimate / max(smallest.consumed, 1))))
    return int(est)


def _phrase_bonus(phrases: CachedPhraseLexicon | None, parsed: ParsedQuery,
                  terms: Sequence[str], positions: Sequence[tuple[IntArray, IntArray]], m: int,
                  options: SearchOptions) -> FloatArray:
    """The common phrase bonus of every candidate: the query's runs of adjacent words that
    the bundle's lexicon knows as common phrases, found in order in the positions decoded for
    scoring (:mod:`indexer.core.signals.phrases`)."""
    lexicon = phrases.get() if phrases is not None and options.common_phrase_bonus else None
    runs = [run for d in parsed.disjuncts for run in d.runs]
    if lexicon is None or not runs or not m:
        return np.zeros(m)
    found = lexicon.phrases_in(runs)
    at = {t: j for j, t in enumerate(terms)}
    counts = [in_order_counts([positions[at[t]] for t in phrase], m)
              for phrase in found if all(t in at for t in phrase)]
    return common_phrase_bonus(options.common_phrase_bonus, counts, m)


