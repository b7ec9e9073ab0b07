"""One shard's exact best matches of a query: every match bounded, the best scored, the rest pruned.

Layer: ``ranking.core``. :func:`exact_matches` is the default matching of
:meth:`ranking.core.shard.local.LocalShard.candidates` (docs/exact-topk.md, sections 2, 5 and 6).
The seed ("Yioop Search Engine Ranking Mechanisms", Introduction) scores the first ``n``
matches in index order, assuming they are the best; at a million pages they are not (a host's
root page holding a rare word in its title beats the first documents by several points of url
and title bonus). Here the top ``n`` groups by the score S are found exactly, by dynamic
pruning with score upper bounds and a top-k threshold ``theta``:

1. match: every document the query's lists have in common (the plan's iterators, no read
   bound but the safety valve of :attr:`LocalShard.limits` and the time budget, either of which
   marks the answer partial); a single disjunct's quoted phrases are not checked here but on
   the documents scored (step 4), since a phrase check decodes positions;
2. bound: per match, an upper bound of its S with no position decoded
   (:mod:`ranking.core.scoring.bounds`): the query-independent part Q exact (Doc Rank, link
   score, url bonuses and classifier scores of the entry), the DFR relevance bounded from the
   term's position count and the entry's page length and largest region weight, the title
   keyword bonus from the title's length, the host and path keyword bonuses and the definition
   and topic bonuses exact; the
   fancy-hit lists (``fancy:<term>``) tell which entries can hold a term in their title or
   anchor text at all; a query of at most :data:`SCORE_ALL` matches skips this and step 3
   (every match is scored);
3. units: matches that can end in one result group (:mod:`ranking.core.scoring.grouping`: one
   url hash, or pages of equal text) form one unit, scored together or not at all; a unit's
   bound is that of the group it can form (maxima of Doc Rank, link score and bonuses, best
   page relevance plus every link document's);
4. score, best bound first, a batch of units at a time (the steps of
   :func:`ranking.core.shard.matching.score_block`); ``theta`` is the ``n``-th highest distinct
   group score among the units scored; it stops when no unit left has a bound reaching it.

Every group whose score reaches the ``n``-th highest distinct one is then among those scored,
with every member: the pipeline's best ``n`` groups by S, and the fusion's pool
(:func:`ranking.core.scoring.bounds.pool_size`, the ``n`` the pipeline asks for through
``SearchOptions.exact_groups``) are those of the exhaustive search. The url features of the
bound come from the partition's url columns, written at build time (a partition made before
them reads each entry's url from its stored summary on first use, about 50 us an entry:
:class:`ranking.core.shard.url_features.UrlFeatures`; docs/exact-topk.md, section 9). Groups
spanning shards (link documents filed in another shard) are bounded per shard only.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from indexer.core.documents.document import fancy_words
from indexer.core.ids import DOC_ID_LEN, DOC_TYPE, DocType
from indexer.core.partition.postings import BLOCK_SIZE
from indexer.core.signals.link_scores import link_score
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import (
    Block,
    decode_column_positions,
    key_index,
    key_partition,
)
from ranking.core.postings.combinators import phrase_mask
from ranking.core.postings.iterators import Budget, collect
from ranking.core.postings.plan import Plan, build_plan
from ranking.core.query.parser import ParsedQuery, query_word_terms
from ranking.core.scoring.bounds import relevance_bound, title_bound_inputs
from ranking.core.scoring.formulas import BONUS_NAMES, combine
from ranking.core.scoring.grouping import group_bonus, group_rows
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.definitions import definition_bonuses
from ranking.core.shard.matching import MatchSource, plan_messages, score_block
from ranking.core.shard.url_features import BonusInputs

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class ExactSource(MatchSource, Protocol):
    """What :func:`exact_matches` reads of a shard beyond :class:`MatchSource`."""

    def link_values(self, doc_ids: npt.NDArray[np.uint8]) -> tuple[FloatArray, FloatArray]:
        """The LinkRank (relative) and trust of each doc_id's url (zeros: no scores)."""


@dataclass(slots=True)
class Pruning:
    """What the pruning did: matches read, units, units taken and matches checked (phrases)
    or scored."""

    matches: int = 0
    units: int = 0
    scored_units: int = 0
    scored_rows: int = 0


def exact_matches(shard: ExactSource, parsed: ParsedQuery, n: int, options: SearchOptions,
                  stats_out: Pruning | None = None) -> Candidates:
    """The matches of every group among the best ``n`` by S of ``parsed`` in ``shard`` (the
    best ``options.exact_groups`` when it is set: the search pipeline sets it to the fusion's
    pool), and any other scored on the way (see the module docstring); called under the
    shard's lock."""
    terms, _ = query_word_terms(parsed)
    stats = shard.collection_stats()
    if stats.documents == 0 or parsed.is_empty:
        return Candidates.empty(shard.name, terms)
    lift = len(parsed.disjuncts) == 1  # its phrases are checked on the rows scored
    # what a first query loads (the importance order, the dictionary) is not the query's time
    ordered = shard.importance_ranks() is not None
    whole = _whole_lists(shard, parsed)
    budget = Budget(options.intersect_time_budget, shard.clock)
    plan = build_plan(shard.reader, parsed.disjuncts, budget, shard.filter_keys,
                      lambda t, pos: shard.decoded_list(t, pos, t in whole), shard.limits,
                      ordered, phrase_filters=not lift)
    block, _ = collect(plan.root, sys.maxsize)
    partial = budget.partial or plan.truncated
    count = options.exact_groups if options.exact_groups > 0 else n
    found, pruning, _ = best_of_block(shard, parsed, block, plan, count, options, lift)
    if stats_out is not None:
        stats_out.matches, stats_out.units = pruning.matches, pruning.units
        stats_out.scored_units, stats_out.scored_rows = pruning.scored_units, \
            pruning.scored_rows
    return replace(found, partial=partial,
                   exhausted=pruning.scored_units == pruning.units and not partial,
                   messages=plan_messages(plan))


def best_of_block(shard: ExactSource, parsed: ParsedQuery, block: Block, plan: Plan, n: int,
                  options: SearchOptions, lift: bool, theta_wanted: bool = False
                  ) -> tuple[Candidates, Pruning, float]:
    """Steps 2 to 4 of the module docstring over the matches ``block`` (read through
    ``plan``; with ``lift`` a single disjunct's phrases are checked on the rows scored): the
    matches of every group among the best ``n`` by S of those the block forms (with every
    member the block holds), the pruning's counts, and with ``theta_wanted`` the ``n``-th
    highest distinct group score among the groups scored (-inf: fewer), else -inf. The
    estimate of the number of matches is the block's (at the phrases' rate when they were
    checked on some)."""
    terms, _ = query_word_terms(parsed)
    phrases = parsed.disjuncts[0].phrases if lift else ()
    if len(block) <= SCORE_ALL:  # few matches: scoring them all is cheaper than bounding
        doc_ids = _doc_ids(shard, block)
        bound = np.zeros((5, len(block)))
        bound[1] = options.link_score_weight * link_scores(shard, doc_ids)
        unit, unit_bound = np.zeros(len(block), np.int64), np.zeros(1)
    else:
        doc_ids, bound = _row_bounds(shard, parsed, block, terms, options)
        unit, unit_bound = _units(doc_ids, bound, parsed.controls.raw)
    found, scored_units, checked, theta = _prune(shard, parsed, block, plan,
                                                 _Order.of(unit, unit_bound), n, phrases,
                                                 options, bound[1], theta_wanted)
    # the matches' number: every one, or, when phrases were checked on some, at their rate
    estimate = len(block) if not phrases or not checked else \
        int(round(len(block) * len(found) / checked))
    return (replace(found, estimate=max(estimate, len(found))),
            Pruning(len(block), int(unit_bound.size), scored_units, checked), theta)


# at most this many matches are all scored, in one batch, with no bound computed
SCORE_ALL = 1024
_ROW = np.int64(1) << 33  # a row's code in _pair_rows (positions < 2**32, shifted by < 2**32)

# a list at most this many times as long as the shortest of its conjunction is decoded whole:
# every match is read, and with fewer than one of the shortest list's documents per few blocks
# (of 128 postings) of the longer one the leapfrog decodes most of its blocks anyway, a round
# of Python at a time
WHOLE_RATIO = 32


def _whole_lists(shard: ExactSource, parsed: ParsedQuery) -> frozenset[str]:
    """The word lists of a single-disjunct query read whole: those at most WHOLE_RATIO times
    as long as its shortest list (the array intersection then finds every match at once) and
    within the shard's safety valve."""
    if len(parsed.disjuncts) != 1:
        return frozenset()
    conjunct = parsed.disjuncts[0]
    docs = {t: shard.reader.term_stats(t).docs
            for t in dict.fromkeys((*conjunct.all_terms, *conjunct.meta))}
    if not docs or min(docs.values()) == 0:
        return frozenset()
    shortest = min(docs.values())
    # a list longer than the safety valve lets a query read is read block by block, so that
    # the valve binds (and marks the answer partial)
    valve = shard.limits.blocks_per_shard * BLOCK_SIZE or sys.maxsize
    return frozenset(t for t in conjunct.all_terms
                     if docs[t] <= min(WHOLE_RATIO * shortest, valve))


def _row_bounds(shard: ExactSource, parsed: ParsedQuery, block: Block, terms: Sequence[str],
                options: SearchOptions) -> tuple[npt.NDArray[np.uint8], FloatArray]:
    """Every match's doc_id and the parts of the upper bound of its S (Q exact, relevance and
    title bonus bounded; see :mod:`ranking.core.scoring.bounds`): rows weighted Doc Rank,
    weighted link score, bonuses, weighted relevance, and 1 for a link document."""
    m = len(block)
    parts, index = key_partition(block.keys), key_index(block.keys)
    stats = shard.collection_stats()
    dr, page_len, title_len, weight, records, doc_ids = _entry_facts(shard, parts, index,
                                                                     options)
    counts = np.zeros((len(terms), m))
    for j, term in enumerate(terms):
        col = block.columns.get(term)
        if col is not None:
            counts[j] = col.freq
    occurrences = [shard.term_occurrences(t) for t in terms]
    fancy = _fancy_counts(shard, block, terms, counts)
    # a link record scored holds a query term in its anchor text: at most one per fancy hit
    records = np.minimum(records, fancy.sum(axis=0)).astype(np.int64)
    rel = relevance_bound(counts, occurrences, stats.documents, stats.average_length,
                          page_len, weight, records)
    hits, held = title_bound_inputs(fancy, title_len)
    bonuses = shard.bonuses(BonusInputs(parts, index, terms, hits, title_len, held,
                                        parsed.lang, options))
    bonuses[BONUS_NAMES.index("common_phrase")] = phrase_bound(shard, parsed, options)
    at = BONUS_NAMES.index("definition")  # exact: known per entry
    bonuses[at:at + 2] = definition_bonuses(shard, parsed, block.keys, options)
    if any(options.classifier_weights):
        for p in np.unique(parts).tolist():
            rows = np.flatnonzero(parts == p)
            bonuses[BONUS_NAMES.index("classifier"), rows] = shard.partition_regions(
                p).classifier_bonus(index[rows], options.classifier_weights)
    link = link_scores(shard, doc_ids)
    return doc_ids, np.stack([options.doc_rank_weight * dr, options.link_score_weight * link,
                     bonuses.sum(axis=0), options.relevance_weight * rel,
                     (doc_ids[:, DOC_TYPE] == DocType.LINK).astype(np.float64)])


def link_scores(shard: ExactSource, doc_ids: npt.NDArray[np.uint8]) -> FloatArray:
    """Every doc_id's link score (:func:`indexer.core.signals.link_scores.link_score`)."""
    relative, trust = shard.link_values(doc_ids)
    return link_score(relative, trust)


def _doc_ids(shard: ExactSource, block: Block) -> npt.NDArray[np.uint8]:
    """The doc_ids of ``block``'s doc_map entries."""
    parts, index = key_partition(block.keys), key_index(block.keys)
    out = np.zeros((len(block), DOC_ID_LEN), np.uint8)
    for p in np.unique(parts).tolist():
        rows = np.flatnonzero(parts == p)
        out[rows] = shard.reader.doc_map(p).doc_ids[index[rows]]
    return out


def _fancy_counts(shard: ExactSource, block: Block, terms: Sequence[str], counts: FloatArray
                  ) -> FloatArray:
    """``counts`` where the entry may hold the term in its title or anchor text, 0 elsewhere:
    every title and anchor-text word is also posted as ``fancy:<term>``
    (:func:`indexer.core.documents.document.fancy_words`), so an entry missing from that list
    has no title hit and no anchor record holding the term. A bundle with no fancy posting of
    any query term (made before fancy words existed) leaves ``counts`` as they are."""
    out = np.zeros_like(counts)
    found = False
    for j, word in enumerate(fancy_words(terms)):
        got = shard.decoded_list(word, False, True)
        if got is None or not got.keys.size:
            continue
        found = True
        at = np.minimum(np.searchsorted(got.keys, block.keys), got.keys.size - 1)
        out[j] = np.where(got.keys[at] == block.keys, counts[j], 0.0)
    return out if found else counts


def _entry_facts(shard: ExactSource, parts: IntArray, index: IntArray, options: SearchOptions
                 ) -> tuple[FloatArray, IntArray, FloatArray, FloatArray, IntArray,
                            npt.NDArray[np.uint8]]:
    """Doc Rank, page length, title length, largest page position weight, link records and
    doc_id of every match's doc_map entry."""
    reader = shard.reader
    m = parts.size
    dr, weight, title_len = np.zeros(m), np.zeros(m), np.zeros(m)
    page_len, records = np.zeros(m, np.int64), np.zeros(m, np.int64)
    doc_ids = np.zeros((m, DOC_ID_LEN), np.uint8)
    ranks = shard.importance_ranks()
    for p in np.unique(parts).tolist():
        rows = np.flatnonzero(parts == p)
        idx = index[rows]
        dr[rows] = reader.doc_rank(p, idx) if ranks is None else ranks.doc_rank(p, idx)
        regions = shard.partition_regions(p)
        page_len[rows] = regions.page_length[idx]
        title_len[rows] = regions.title_length[idx]
        records[rows] = regions.link_records[idx]
        weight[rows] = regions.page_weight(options.title_weight,
                                           options.description_weight)[idx]
        doc_ids[rows] = reader.doc_map(p).doc_ids[idx]
    return dr, page_len, title_len, weight, records, doc_ids


def phrase_bound(shard: ExactSource, parsed: ParsedQuery, options: SearchOptions) -> float:
    """The most the common phrase bonus can give: its value when the bundle's lexicon knows a
    run of the query's words as a common phrase, else 0."""
    phrases = shard.phrases
    lexicon = phrases.get() if phrases is not None and options.common_phrase_bonus else None
    runs = [run for d in parsed.disjuncts for run in d.runs]
    if lexicon is None or not runs or not lexicon.phrases_in(runs):
        return 0.0
    return float(options.common_phrase_bonus)


def _components(labels: IntArray, other: IntArray) -> IntArray:
    """Connected components of rows linked by equal ``labels`` or equal ``other`` (-1: no
    link): the smallest row label reachable, by propagation until nothing changes."""
    comp = labels.copy()
    has = other >= 0
    while True:
        best = np.full(int(other.max(initial=-1)) + 1, np.iinfo(np.int64).max)
        np.minimum.at(best, other[has], comp[has])
        moved = comp.copy()
        moved[has] = np.minimum(comp[has], best[other[has]])
        low = np.full(int(labels.max(initial=-1)) + 1, np.iinfo(np.int64).max)
        np.minimum.at(low, labels, moved)
        moved = low[labels]
        if np.array_equal(moved, comp):
            return comp
        comp = moved


def _hash64(ids: npt.NDArray[np.uint8], lo: int, hi: int) -> npt.NDArray[np.uint64]:
    """Bytes ``lo:hi`` (at most 8) of every doc_id as one integer (a url or text hash)."""
    cols = np.zeros((ids.shape[0], 8), dtype=np.uint8)
    cols[:, :hi - lo] = ids[:, lo:hi]
    return cols.view("<u8").ravel()


def _units(doc_ids: npt.NDArray[np.uint8], parts: FloatArray, raw: bool
           ) -> tuple[IntArray, FloatArray]:
    """Each match's unit and each unit's bound (see the module docstring, step 3); ``parts``
    are the matches' bound components (:func:`_row_bounds`)."""
    m = doc_ids.shape[0]
    if raw or not m:  # every row its own result
        return np.arange(m, dtype=np.int64), parts[:4].sum(axis=0)
    dr, link, bonus, rel, is_link = parts
    url = np.unique(_hash64(doc_ids, 0, 8), return_inverse=True)[1].ravel()
    page = is_link == 0
    text = np.full(m, -1, np.int64)
    if page.any():
        text[page] = np.unique(_hash64(doc_ids[page], 9, 16), return_inverse=True)[1].ravel()
    unit = np.unique(_components(url, text), return_inverse=True)[1].ravel()
    k = int(unit.max()) + 1
    # a url group's relevance: its best page's plus every link document's
    n_url = int(url.max()) + 1
    page_rel = np.zeros(n_url)
    np.maximum.at(page_rel, url[page], rel[page])
    url_rel = page_rel + np.bincount(url, weights=np.where(page, 0.0, rel), minlength=n_url)
    first_of_url = np.zeros(n_url, np.int64)
    first_of_url[url] = unit
    best = np.zeros((4, k))
    for j, values in enumerate((dr, link, bonus)):
        np.maximum.at(best[j], unit, values)
    np.maximum.at(best[3], first_of_url, url_rel)
    return unit, best.sum(axis=0)


@dataclass(slots=True)
class _Order:
    """Matches by unit, units by decreasing bound: ``rows`` lists the matches unit after unit,
    ``ends[i]`` is where the i-th unit's rows end, ``bounds`` the units' bounds."""

    rows: IntArray
    ends: IntArray
    bounds: FloatArray

    @staticmethod
    def of(unit: IntArray, unit_bound: FloatArray) -> _Order:
        order = np.argsort(-unit_bound, kind="stable")
        if order.size == unit.size:  # a unit per match (pages of distinct urls and texts)
            row_of = np.empty(unit.size, np.int64)
            row_of[unit] = np.arange(unit.size)
            return _Order(row_of[order], np.arange(1, unit.size + 1), unit_bound[order])
        rank = np.empty(order.size, np.int64)
        rank[order] = np.arange(order.size)
        rows = np.argsort(rank[unit], kind="stable")
        ends = np.cumsum(np.bincount(unit, minlength=order.size)[order])
        return _Order(rows, ends, unit_bound[order])

    def reaching(self, theta: float) -> int:
        """How many units have a bound of at least ``theta``."""
        return int(np.searchsorted(-self.bounds, -theta, side="right"))

    def batch(self, done: int, limit: int, rows: int) -> tuple[int, IntArray]:
        """Units ``done`` up to the first ``limit`` holding about ``rows`` matches (at least
        one unit): the new count of units done and their matches, ascending."""
        start = int(self.ends[done - 1]) if done else 0
        upto = int(np.searchsorted(self.ends, start + rows, side="left")) + 1
        upto = min(limit, max(done + 1, upto))
        return upto, np.sort(self.rows[start:int(self.ends[upto - 1])])


def _prune(shard: ExactSource, parsed: ParsedQuery, block: Block, plan: Plan, order: _Order,
           n: int, phrases: Sequence, options: SearchOptions, link: FloatArray,
           theta_wanted: bool = False) -> tuple[Candidates, int, int, float]:
    """Score units best bound first until none left reaches ``theta`` (the module's step 4):
    the scored matches, the units scored, the matches checked (phrases) or scored, and (with
    ``theta_wanted``, else -inf) the final ``theta``. ``link`` is every match's weighted link
    score."""
    theta, done, checked = -np.inf, 0, 0
    size = max(n, 64)
    scored: list[Candidates] = []
    links: list[FloatArray] = []
    while True:
        limit = order.reaching(theta)
        if done >= limit or (scored and plan.budget.expired()):
            break  # out of time: the best bounds of what was read are scored, no more
        done, rows = order.batch(done, limit, size)
        checked += rows.size
        if phrases:
            rows = rows[_phrase_rows(plan, block.take(rows), phrases)]
        if rows.size:
            scored.append(score_block(shard, parsed, block.take(rows), plan, options))
            links.append(link[rows])
            if done < order.bounds.size and sum(map(len, scored)) >= n:
                theta = _theta(scored, links, n, options, parsed.controls.raw)
        size *= 2
    terms, _ = query_word_terms(parsed)
    found = _concat(scored) if scored else Candidates.empty(shard.name, terms)
    if theta_wanted and scored and sum(map(len, scored)) >= n:
        theta = _theta(scored, links, n, options, parsed.controls.raw)
    return found, done, checked, theta if theta_wanted else -np.inf


def _phrase_rows(plan: Plan, block: Block, phrases: Sequence) -> npt.NDArray[np.bool_]:
    """Which matches of ``block`` hold every one of the quoted ``phrases``. A phrase of three
    or more words (no ``*``) is first checked on its two words with the fewest positions, at
    their distance in the phrase: the third word's positions are decoded only where those two
    stand right."""
    ok = np.ones(len(block), dtype=bool)
    for phrase in phrases:
        rows = np.flatnonzero(ok)
        if len(phrase.terms) >= 3 and None not in phrase.terms and rows.size:
            rows = rows[_pair_rows(plan, block.take(rows), phrase.terms)]
        sub = block.take(rows)
        positions = {t: decode_column_positions(plan.decoder, sub.keys, sub.column(t))
                     for t in set(phrase.words)}
        hit = np.zeros(len(block), dtype=bool)
        hit[rows[phrase_mask(phrase.terms, positions, len(sub))]] = True
        ok &= hit
    return ok


def _pair_rows(plan: Plan, block: Block, terms: Sequence[str]) -> IntArray:
    """The rows of ``block`` where the two phrase ``terms`` with the fewest positions stand at
    their distance in the phrase (a necessary condition of the phrase)."""
    counts = {t: int(block.column(t).freq.sum()) for t in dict.fromkeys(terms)}
    a, b = sorted(range(len(terms)), key=lambda i: counts[terms[i]])[:2]
    if terms[a] == terms[b]:
        return np.arange(len(block))
    codes = []
    for i in (a, b):
        pos, n = decode_column_positions(plan.decoder, block.keys, block.column(terms[i]))
        row = np.repeat(np.arange(len(block), dtype=np.int64), n)
        keep = pos >= i  # the phrase's i-th word stands at position i or later
        codes.append(row[keep] * _ROW + pos[keep] - i)
    rows = _common(*codes) // _ROW
    if np.any(rows[1:] < rows[:-1]):
        return np.unique(rows)
    return rows[np.concatenate(([True], rows[1:] != rows[:-1]))] if rows.size else rows


def _common(first: IntArray, second: IntArray) -> IntArray:
    """The values of ``first`` that ``second`` holds. Both come ascending from the positions
    decoded row after row (ascending within a row): a binary search of ``second`` then
    finds them without the hash table or sort of ``np.isin`` (half of a phrase query's
    time on frequent words); any other order takes ``np.isin``."""
    if not second.size or not first.size:
        return first[:0]
    if np.any(second[1:] < second[:-1]):
        return first[np.isin(first, second)]
    at = np.minimum(np.searchsorted(second, first), second.size - 1)
    return first[second[at] == first]


def _theta(scored: list[Candidates], links: list[FloatArray], n: int, options: SearchOptions,
           raw: bool) -> float:
    """The ``n``-th highest distinct group score S among the groups of the matches scored so
    far (every one complete: its units are scored whole), as the pipeline scores groups
    (``links``: the rows' weighted link scores); -inf while there are fewer than ``n``."""
    doc_ids = np.concatenate([c.doc_ids for c in scored])
    dr = np.concatenate([c.doc_rank for c in scored])
    rel = np.concatenate([c.relevance for c in scored])
    bonus = np.concatenate([c.bonuses.sum(axis=0) for c in scored])
    groups = group_rows(doc_ids, dr, rel, np.zeros(dr.size), options, raw)
    link = np.full(len(groups), -np.inf)
    np.maximum.at(link, groups.member_group, np.concatenate(links))
    s = combine(groups.doc_rank, groups.relevance, np.zeros(len(groups)), options,
                group_bonus(groups, bonus), 1.0) + link
    values = np.unique(s)
    return float(values[-n]) if values.size >= n else -np.inf


def _concat(parts: list[Candidates]) -> Candidates:
    """Candidates of one shard and query scored in batches, as one."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]

    def cat(name: str, axis: int = 0) -> np.ndarray:
        return np.concatenate([getattr(c, name) for c in parts], axis=axis)

    return replace(first, doc_ids=cat("doc_ids"), partition=cat("partition"),
                   index=cat("index"), docs_after=cat("docs_after"), doc_rank=cat("doc_rank"),
                   relevance=cat("relevance"), proximity=cat("proximity"),
                   proximity_raw=cat("proximity_raw"), doc_length=cat("doc_length"),
                   freq=cat("freq", 1), term_relevance=cat("term_relevance", 1),
                   bonuses=cat("bonuses", 1))
