"""Block-max pruning: the exact best groups of a query without reading every match of long lists.

Layer: ``ranking.core``. Step 2 of docs/exact-topk.md (sections 3, 4 and 9): the partitions'
block maxima (:mod:`indexer.core.partition.block_maxima`, written at build time beside the
postings: per block of 128 postings its doc range and largest frequency, and where it starts)
bound the score S (the seed's, "Yioop Search Engine Ranking Mechanisms", as
:mod:`ranking.core.scoring.bounds` decomposes it) of every document of a block's doc range
before the block is read, as
Lucene's and tantivy's block-max WAND use per-block impacts. :func:`block_max_matches` is tried
first by :meth:`ranking.core.shard.local.LocalShard.candidates`; it answers None (and the
exact search of :mod:`ranking.core.shard.exact`, which reads every match, answers) when the
query is not one it prunes: several disjuncts, a quoted phrase, no word, a shortest word list
of fewer than :data:`MIN_DOCS` documents (all its matches are then cheap to bound one by
one), a partition holding the lists without block maxima (made before them), or grouped
entries in most ranges (:data:`GROUPED`).

1. **Ranges.** The query's shortest word list drives: each of its blocks (per partition) is a
   doc range; a list of one block in a partition (no maxima kept) is the whole partition. For
   every range an upper bound of S of any document in it that matches
   (:func:`_range_bounds`): the query-independent part Q (weighted Doc Rank and link score,
   url bonuses, classifier scores), the host and path keyword bonuses and the definition and
   topic bonuses (:mod:`ranking.core.shard.definitions`) are exact per doc_map entry (cached per partition and Page Options), so their maxima over the range; the
   DFR relevance of each word at the largest frequency of its blocks overlapping the range
   (the driver's own block's) and the largest normalised page weight of the range, plus the
   anchor records' part at the range's most link records; the title keyword bonus at its
   most (title hits per title word 1) for the words whose fancy-hit list (``fancy:<term>``)
   has a document in the range, and the common phrase bonus; the same inequalities as
   :mod:`ranking.core.scoring.bounds` (row by row), taken over a range, so never below any
   row bound there.
2. **Groups.** A result group can gather matches from several ranges (a url's page and link
   documents, pages of equal text): the doc_map entries sharing their url hash or (pages) their
   text hash with another entry of the shard are *grouped* (found once per snapshot): the
   ranges holding them are read in the first round (and when they are most ranges, as a
   crawl's link documents make them, the exact search answers instead); every other match is
   a group alone, whose S its range bounds.
3. **Rounds.** Ranges are read best bound first (the plan's iterators jump to them through the
   block maxima, :meth:`indexer.core.partition.postings.PostingListReader.skip_to`) and their
   matches, with the scored ones of the rounds before, go to the exact search's steps
   (:func:`ranking.core.shard.exact.best_of_block`: row bounds, units, scoring best bound
   first), which gives ``theta``, the ``n``-th highest distinct group score among complete
   groups: never above the exhaustive search's, and never falling from round to round (so a
   match left unscored need not be kept). The next round reads the best ranges whose bound
   reaches ``theta``, twice as many postings as the round before; none left means every group
   that can reach the ``n`` best was scored whole: the answer is the exhaustive search's
   (``bench/exactness.py``). Quoted phrases are left to the exact search: with fewer matches
   than the pool, ``theta`` stays unknown and every range would be read, round after round
   (docs/exact-topk.md, section 9).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from indexer.core.documents.document import fancy_words
from indexer.core.ids import DOC_TYPE, DocType
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import Block, concat_blocks, key_index, make_keys
from ranking.core.postings.iterators import Budget, DocIterator
from ranking.core.postings.plan import Plan, build_plan
from ranking.core.query.parser import ParsedQuery, query_word_terms
from ranking.core.scoring.bounds import term_bounds
from ranking.core.scoring.formulas import BONUS_NAMES
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.definitions import bonus_lists, entry_bonus
from ranking.core.shard.exact import (
    ExactSource,
    Pruning,
    best_of_block,
    link_scores,
    phrase_bound,
)
from ranking.core.shard.url_features import BonusInputs, UrlFeatures

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# a query whose shortest word list is shorter is left to the exact search (it reads and
# bounds every match: cheap for so few)
MIN_DOCS = 16_384
# a query whose ranges hold grouped entries (module docstring, step 2) in a larger share is
# left to the exact search: they would all be read in the first round
GROUPED = 0.5
# the first round reads ranges holding about this many times the groups asked for
FIRST_ROWS = 16


class BlockMaxSource(ExactSource, Protocol):
    """What :func:`block_max_matches` reads of a shard beyond :class:`ExactSource`."""

    block_bounds: BoundCache
    link_scores: Any  # the crawl's link scores, reloaded when they change (or None)
    block_max_min_docs: int  # MIN_DOCS: shorter shortest lists are left to the exact search
    block_max_grouped: float  # GROUPED: a larger share of ranges holding grouped entries too

    def url_features(self, partition: int, lang: str) -> UrlFeatures:
        """Every entry's url features of ``partition`` for ``lang``."""

    def url_word_ids(self, terms: Sequence[str]) -> IntArray:
        """The url word ids of ``terms`` that some url holds."""


@dataclass(slots=True)
class BoundCache:
    """What the pruning keeps per snapshot of the bundle: per partition the entries'
    query-independent bound parts (by Page Options, language and average length), the url
    words' inverted index (by features object) and the grouped keys."""

    snapshot: object = None
    entries: dict[tuple, tuple[FloatArray, FloatArray, FloatArray, FloatArray]] = \
        field(default_factory=dict)
    words: dict[tuple[int, str], tuple[object, IntArray, IntArray]] = field(default_factory=dict)
    grouped: IntArray | None = None
    scores: object = None  # the link scores the entries' Q holds

    def of(self, partitions: object) -> BoundCache:
        if partitions is not self.snapshot:
            self.snapshot, self.grouped = partitions, None
            self.entries.clear()
            self.words.clear()
        return self


@dataclass(slots=True)
class _Ranges:
    """Doc ranges (inclusive doc_map indexes of a partition), their bounds and postings."""

    part: IntArray
    lo: IntArray
    hi: IntArray
    bound: FloatArray
    rows: IntArray


def block_max_matches(shard: BlockMaxSource, parsed: ParsedQuery, n: int,
                      options: SearchOptions, stats_out: Pruning | None = None
                      ) -> Candidates | None:
    """The exact search's answer (:func:`ranking.core.shard.exact.exact_matches`: every
    group among the best ``n`` by S, ``options.exact_groups`` when set, with all its
    members), reading only the ranges whose bound reaches ``theta`` (module docstring); None
    when the query is not one this prunes. Called under the shard's lock."""
    if len(parsed.disjuncts) != 1 or parsed.is_empty or parsed.disjuncts[0].phrases or \
            shard.collection_stats().documents == 0:
        return None
    terms, _ = query_word_terms(parsed)
    words = list(dict.fromkeys(parsed.disjuncts[0].all_terms))
    if not words:
        return None
    reader = shard.reader
    infos = {t: {r.partition: r for r in reader.term_info(t)} for t in words}
    driver = min(words, key=lambda t: sum(r.docs for r in infos[t].values()))
    if sum(r.docs for r in infos[driver].values()) < shard.block_max_min_docs:
        return None
    if any(reader.block_maxima(p) is None for p in infos[driver]):
        return None
    cache = shard.block_bounds.of(reader.partitions)
    ranges = _ranges(shard, parsed, terms, words, driver, infos, options, cache)
    count = options.exact_groups if options.exact_groups > 0 else n
    budget = Budget(options.intersect_time_budget, shard.clock)
    ordered = shard.importance_ranks() is not None

    def plan() -> Plan:  # iterators move forward only: a new plan for every read
        return build_plan(reader, parsed.disjuncts, budget, shard.filter_keys,
                          lambda t, pos: shard.decoded_list(t, pos, False), shard.limits,
                          ordered, phrase_filters=False)

    # the ranges holding grouped entries are read in the first round (module docstring)
    must = _holding(ranges, _grouped_keys(shard, cache, parsed.controls.raw)) & \
        np.isfinite(ranges.bound)
    if int(must.sum()) > shard.block_max_grouped * int(np.isfinite(ranges.bound).sum()):
        return None  # most ranges (a crawl's link documents): the exact search reads all
    block = Block(np.zeros(0, np.int64), {})
    order = np.argsort(-ranges.bound, kind="stable")
    order = order[np.isfinite(ranges.bound[order])]  # -inf: a word missing from the range
    taken = np.zeros(ranges.bound.size, dtype=bool)
    want = FIRST_ROWS * max(count, 1)
    theta = -np.inf
    found, pruning, last = Candidates.empty(shard.name, terms), Pruning(), None
    matches = len(block)
    while not budget.expired():
        left = order[~taken[order]]
        left = left[ranges.bound[left] >= theta]
        if not left.size and last is not None:
            break
        # the best ranges holding about `want` postings, twice as many each round: theta
        # rises with the groups scored, and every round's theta leaves out more ranges
        left = left[:int(np.searchsorted(np.cumsum(ranges.rows[left]), want)) + 1]
        want *= 2
        if last is None:
            left = np.union1d(left, np.flatnonzero(must))
        taken[left] = True
        left = np.sort(left)  # ranges in key order: the iterators only move forward
        last = plan()
        new = _match(last.root, ranges.part[left], ranges.lo[left], ranges.hi[left])
        matches += len(new)
        block = _union([block, new])
        found, pruning, theta = best_of_block(shard, parsed, block, last, count, options,
                                              True, theta_wanted=True)
        # a match left unscored has its unit's bound below theta, which only rises: the next
        # round needs the scored ones only (a unit is scored whole or not at all)
        block = block.take(np.flatnonzero(np.isin(block.keys, make_keys(found.partition,
                                                                        found.index))))
    if stats_out is not None:
        stats_out.matches, stats_out.units = matches, pruning.units
        stats_out.scored_units, stats_out.scored_rows = pruning.scored_units, \
            pruning.scored_rows
    read, total = int(ranges.rows[taken].sum()), int(ranges.rows.sum())
    estimate = found.estimate if read >= total else \
        int(round(found.estimate * total / max(read, 1)))
    unread = bool((ranges.bound[order][~taken[order]] >= theta).any())
    return replace(found, estimate=max(estimate, len(found)), exhausted=False,
                   partial=budget.partial or unread or (last is not None and last.truncated))


def _union(blocks: list[Block]) -> Block:
    """Matches of several reads as one block of ascending distinct keys."""
    block = concat_blocks([b for b in blocks if len(b)])
    if not len(block):
        return block
    order = np.argsort(block.keys, kind="stable")
    keys = block.keys[order]
    keep = np.ones(keys.size, dtype=bool)
    keep[1:] = keys[1:] != keys[:-1]
    return block.take(order[keep])


def _match(root: DocIterator, part: IntArray, lo: IntArray, hi: IntArray) -> Block:
    """The matches of ``root`` in the ranges (ascending, disjoint) of doc_map indexes
    ``lo..hi`` of partitions ``part``: a skip to each range's start, blocks until its end."""
    starts, ends = make_keys(part, lo), make_keys(part, hi)
    out: list[Block] = []
    current: Block | None = None
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        if current is None or int(current.keys[-1]) < start:
            current = root.skip_to(start)
        while current is not None:
            keys = current.keys
            a, b = np.searchsorted(keys, [start, end + 1])
            if b > a:
                out.append(current.take(slice(int(a), int(b))))
            if int(keys[-1]) >= end:  # what follows is past the range: not read
                break
            current = root.next_block()
        if current is None:
            break
    return concat_blocks(out)


def _holding(ranges: _Ranges, keys: IntArray) -> npt.NDArray[np.bool_]:
    """Which ranges hold one of ``keys`` (ascending)."""
    a = np.searchsorted(keys, make_keys(ranges.part, ranges.lo))
    z = np.searchsorted(keys, make_keys(ranges.part, ranges.hi), side="right")
    return z > a


def _grouped_keys(shard: BlockMaxSource, cache: BoundCache, raw: bool) -> IntArray:
    """The keys of the doc_map entries that share their url hash, or (pages) their text
    hash, with another entry of the shard (none for a raw query, whose rows are results
    alone), found once per snapshot."""
    if raw:
        return np.zeros(0, dtype=np.int64)
    if cache.grouped is None:
        reader = shard.reader
        parts = [p.number for p in reader.partitions]
        ids = [reader.doc_map(p).doc_ids for p in parts]
        if not ids:
            cache.grouped = np.zeros(0, dtype=np.int64)
            return cache.grouped
        keys = np.concatenate([make_keys(p, np.arange(i.shape[0])) for p, i in
                               zip(parts, ids, strict=True)])
        doc_ids = np.concatenate(ids)
        grouped = _repeated(_hash64(doc_ids, 0, 8))
        page = doc_ids[:, DOC_TYPE] != DocType.LINK
        grouped[page] |= _repeated(_hash64(doc_ids[page], 9, 16))
        cache.grouped = np.sort(keys[grouped])
    return cache.grouped


def _repeated(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    """Which of ``values`` occur more than once."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    return counts[inverse.ravel()] > 1


def _hash64(ids: npt.NDArray[np.uint8], lo: int, hi: int) -> npt.NDArray[np.uint64]:
    cols = np.zeros((ids.shape[0], 8), dtype=np.uint8)
    cols[:, :hi - lo] = ids[:, lo:hi]
    return cols.view("<u8").ravel()


def _ranges(shard: BlockMaxSource, parsed: ParsedQuery, terms: Sequence[str],
            words: Sequence[str], driver: str, infos: dict[str, dict[int, Any]],
            options: SearchOptions, cache: BoundCache) -> _Ranges:
    """The driver's ranges in every partition holding all the words, and their bounds."""
    reader = shard.reader
    stats = shard.collection_stats()
    b, rho = term_bounds([shard.term_occurrences(t) for t in terms], stats.documents)
    fancy = [shard.decoded_list(w, False, True) for w in fancy_words(terms)]
    fancy_keys: list[IntArray] | None = [f.keys if f is not None else np.zeros(0, np.int64)
                                         for f in fancy]
    if not any(k.size for k in fancy_keys):  # a bundle made before fancy words
        fancy_keys = None
    constant = phrase_bound(shard, parsed, options)
    out: list[tuple] = []
    for p, info in sorted(infos[driver].items()):
        if any(p not in infos[w] for w in words):
            continue
        maxima = reader.block_maxima(p)
        n = reader.doc_map(p).n
        blocks = maxima.of_list(info.offset) if maxima is not None else None
        if blocks is None or not len(blocks):
            lo, hi, rows = np.zeros(1, np.int64), np.full(1, n - 1), np.full(1, info.docs)
        else:
            lo, hi, rows = blocks.first, blocks.last, blocks.count
        freq = np.zeros((len(terms), lo.size))
        for j, t in enumerate(terms):
            got = maxima.of_list(infos[t][p].offset) if maxima is not None else None
            freq[j] = np.inf if got is None or not len(got) else \
                _overlap_max(got.first, got.last, got.max_freq, lo, hi)
        bound = _range_bounds(shard, p, (lo, hi), freq, (b, rho), fancy_keys, parsed,
                              terms, options, cache) + constant
        bound[(freq < 0).any(axis=0)] = -np.inf  # a word with no posting in the range
        out.append((np.full(lo.size, p), lo, hi, bound, rows))
    if not out:
        z = np.zeros(0, dtype=np.int64)
        return _Ranges(z, z, z, np.zeros(0), z)
    return _Ranges(*(np.concatenate(c) for c in zip(*out, strict=True)))


def _held(keys: list[IntArray] | None, p: int, n: int, terms: int) -> FloatArray:
    """Per entry of partition ``p`` (``n`` entries), how many query terms its fancy-hit
    lists (``keys``, one ascending array per term) hold it in: at most those terms are in its
    title or anchor text; every term for each entry without fancy lists (None)."""
    if keys is None:
        return np.full(n, float(terms))
    held = np.zeros(n)
    lo, hi = make_keys(p, np.array([0])), make_keys(p + 1, np.array([0]))
    for k in keys:
        a, z = int(np.searchsorted(k, lo[0])), int(np.searchsorted(k, hi[0]))
        held[key_index(k[a:z])] += 1.0
    return held


def _range_bounds(shard: BlockMaxSource, p: int, span: tuple[IntArray, IntArray],
                  freq: FloatArray, term: tuple[FloatArray, FloatArray],
                  fancy: list[IntArray] | None, parsed: ParsedQuery, terms: Sequence[str],
                  options: SearchOptions, cache: BoundCache) -> FloatArray:
    """An upper bound of S (without the common phrase bonus) of every entry of each range
    ``span`` of partition ``p`` holding the words with at most ``freq`` (terms x ranges;
    inf: unknown) positions (module docstring, step 1). The parts exact or bounded per entry
    (Q, url keywords, the definition and topic bonuses, and where the fancy-hit lists
    ``fancy`` hold the entry the title bonus and the anchor records' relevance) are summed per
    entry before the range's maximum is
    taken; the page relevance is bounded per range."""
    lo, hi = span
    q, g, records, titled = _entries(shard, p, parsed.lang, options, cache)
    per_entry = q + _url_keywords(shard, p, parsed.lang, terms, options, cache) + \
        entry_bonus(bonus_lists(shard, parsed, options), p, q.size)
    b, rho = term
    held = _held(fancy, p, q.size, len(terms))
    at = np.flatnonzero(held)
    decay = np.where(records[at] > 0, 2.0 - 2.0 ** (1.0 - records[at]), 0.0)
    per_entry[at] += (options.title_bonus * held[at] / max(len(terms), 1) * titled[at]
                      + options.relevance_weight * b.sum() * decay)
    gmax = _range_max(g, lo, hi)
    unknown = np.isinf(freq)  # a list of one block: its frequencies unknown, B_t bounds it
    f = np.where(unknown, 0.0, np.maximum(freq, 0.0)) * gmax[None, :]
    page = np.where(unknown, b[:, None], b[:, None] * (f + rho[:, None]) / (f + 1.0))
    page = np.where(gmax[None, :] > 0, page, 0.0)
    return _range_max(per_entry, lo, hi) + options.relevance_weight * page.sum(axis=0)


def _entries(shard: BlockMaxSource, p: int, lang: str, options: SearchOptions,
             cache: BoundCache) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per doc_map entry of ``p``: Q exact (weighted Doc Rank and link score, url bonuses,
    classifier), the largest page position weight times the page length normalisation (0
    without page text), the link records and 1 where it has a title; kept per snapshot,
    Page Options, language, average length and link scores."""
    stats = shard.collection_stats()
    # the crawl's link scores are reloaded when their file changes, within a snapshot
    scores = shard.link_scores.get() if shard.link_scores is not None else None
    if scores is not cache.scores:
        cache.scores = scores
        cache.entries.clear()
    key = (p, lang, options, stats.average_length)
    got = cache.entries.get(key)
    if got is not None:
        return got
    reader = shard.reader
    n = reader.doc_map(p).n
    index = np.arange(n, dtype=np.int64)
    ranks = shard.importance_ranks()
    dr = reader.doc_rank(p, index) if ranks is None else ranks.doc_rank(p, index)
    z = np.zeros(n)
    url = shard.bonuses(BonusInputs(np.full(n, p, np.int64), index, (), z, z, z, lang,
                                    options))
    q = options.doc_rank_weight * dr + url[:4].sum(axis=0) + options.link_score_weight * \
        link_scores(shard, reader.doc_map(p).doc_ids)
    regions = shard.partition_regions(p)
    if any(options.classifier_weights):
        q = q + regions.classifier_bonus(index, options.classifier_weights)
    avg = stats.average_length if stats.average_length > 0 else 1.0
    page_len = regions.page_length.astype(np.float64)
    g = regions.page_weight(options.title_weight, options.description_weight) * \
        np.log2(1.0 + avg / np.maximum(page_len, 1.0))
    g = np.where(page_len > 0, g, 0.0)
    got = (q, g, regions.link_records.astype(np.float64),
           (regions.title_length > 0).astype(np.float64))
    cache.entries[key] = got
    return got


def _url_keywords(shard: BlockMaxSource, p: int, lang: str, terms: Sequence[str],
                  options: SearchOptions, cache: BoundCache) -> FloatArray:
    """The host and path keyword bonuses of every entry of ``p`` (exact; 0 for the entries
    whose url holds no query word, found through an inverted index of the url words)."""
    n = shard.reader.doc_map(p).n
    out = np.zeros(n)
    if not (options.host_keyword_bonus or options.path_bonus):
        return out
    features = shard.url_features(p, lang)  # first: it names the url words it reads
    ids = shard.url_word_ids(terms)
    if not ids.size:
        return out
    kept = cache.words.get((p, lang))
    if kept is None or kept[0] is not features:
        kept = cache.words[(p, lang)] = (features, *_word_index(features))
    _, words, owner = kept
    a = np.searchsorted(words, ids)
    z = np.searchsorted(words, ids, side="right")
    rows = np.unique(np.concatenate([owner[x:y] for x, y in zip(a.tolist(), z.tolist(),
                                                                 strict=True)]))
    if rows.size:
        zr = np.zeros(rows.size)
        got = shard.bonuses(BonusInputs(np.full(rows.size, p, np.int64), rows, terms, zr, zr,
                                        zr, lang, options))
        out[rows] = got[BONUS_NAMES.index("host_keyword")] + \
            got[BONUS_NAMES.index("path_keyword")]
    return out


def _word_index(features: UrlFeatures) -> tuple[IntArray, IntArray]:
    """Every url word id of the entries (host and path) sorted, with its entry."""
    words, owners = [], []
    for at, length in ((features.host_at, features.host_len),
                       (features.path_at, features.path_len)):
        total = int(length.sum())
        start = np.cumsum(length) - length
        flat = np.repeat(at - start, length) + np.arange(total, dtype=np.int64)
        words.append(features.words[flat])
        owners.append(np.repeat(np.arange(length.size, dtype=np.int64), length))
    word = np.concatenate(words)
    order = np.argsort(word, kind="stable")
    return word[order], np.concatenate(owners)[order]


def _range_max(values: FloatArray, lo: IntArray, hi: IntArray) -> FloatArray:
    """The largest of ``values[lo[i]..hi[i]]`` (inclusive, non-empty ranges)."""
    if not lo.size:
        return np.zeros(0)
    idx = np.empty(2 * lo.size, dtype=np.int64)
    idx[0::2] = lo
    idx[1::2] = hi + 1
    ext = np.append(np.asarray(values, dtype=np.float64), 0.0)
    return np.maximum.reduceat(ext, idx)[0::2]


def _overlap_max(first: IntArray, last: IntArray, values: IntArray, lo: IntArray,
                 hi: IntArray) -> FloatArray:
    """Per range ``lo..hi``, the largest of ``values`` over the blocks ``first..last``
    (ascending, disjoint) overlapping it; -1 where none does."""
    a = np.searchsorted(last, lo)
    z = np.searchsorted(first, hi, side="right")
    has = z > a
    out = np.full(lo.size, -1.0)
    if has.any():
        idx = np.empty(2 * int(has.sum()), dtype=np.int64)
        idx[0::2] = a[has]
        idx[1::2] = z[has]
        ext = np.append(np.asarray(values, dtype=np.float64), 0.0)
        out[has] = np.maximum.reduceat(ext, idx)[0::2]
    return out


__all__ = ["GROUPED", "MIN_DOCS", "BlockMaxSource", "BoundCache", "block_max_matches"]
