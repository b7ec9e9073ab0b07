"""A shard's bounded work per query (ranking.core.postings.limits): long lists read a bounded number of
posting blocks per partition, phrases are checked on a bounded number of candidates, lazily,
the time budget returns the best found so far marked partial, and where the first documents
of each partition hold the best answers the bounded search finds the exhaustive one's top 10.
Counts, never timings."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.partition.grouping import ImportanceRanks, crawl_order_keys
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import key_partition
from ranking.core.postings.combinators import IntersectIterator, PhraseIterator
from ranking.core.postings.iterators import (
    Budget,
    DecodedList,
    DecodedWordIterator,
    KeysIterator,
    WordIterator,
    collect,
)
from ranking.core.postings.limits import TRUNCATED_MESSAGE, UNBOUNDED, ReadLimits
from ranking.core.postings.tiers import candidate_block
from ranking.core.query.parser import Phrase
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from .helpers import Doc, build
from .test_iterators import _fixture, docs_strategy, ref

PART = 2048  # documents per partition of the fixture
PARTS = 3
EARLY, LATE = 5, 1900  # "gamma delta" in order: the first EARLY and the last of each partition


def words(i: int) -> tuple[str, ...]:
    j = i % PART
    base = ("alpha", "beta", "odd" if i % 2 else "even", "delta", "gamma")
    return base + (("gamma", "delta") if j < EARLY or j >= LATE else ())


class CountingReader(IndexBundleReader):
    """Counts the posting blocks every cursor it hands out returns, by term."""

    def __init__(self, path) -> None:
        super().__init__(path)
        self.blocks: Counter[str] = Counter()

    def postings(self, term):
        cursor = super().postings(term)
        for name in ("next_block", "skip_to"):
            method = getattr(cursor, name)

            def counted(*args, _method=method, _term=term):
                block = _method(*args)
                if block is not None:
                    self.blocks[_term] += 1
                return block
            setattr(cursor, name, counted)
        return cursor


class LongListShard(LocalShard):
    """Every word list read block by block (none is short enough to keep decoded), two
    blocks per partition at most: the bounded search."""

    WHOLE_LIST_DOCS = 0
    exact = False
    limits = ReadLimits(blocks_per_shard=2 * PARTS, min_blocks=2,
                        phrase_checks_per_shard=256 * PARTS, min_phrase_checks=256)


class PhraseShard(LocalShard):
    """Word lists kept decoded (unbounded); phrases checked on 256 candidates a partition."""

    limits = ReadLimits(phrase_checks_per_shard=256 * PARTS, min_phrase_checks=256)
    exact = False  # the bounded search (the default is ranking.core.shard.exact's)


class ExhaustiveShard(LocalShard):
    limits = UNBOUNDED
    exact = False


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    path = tmp_path_factory.mktemp("limits") / "b"
    build(path, [Doc(f"https://h{i % 7}.test/p{i}", words(i)) for i in range(PART * PARTS)],
          partition_docs=PART).close()
    return path


def test_frequent_words_read_a_bounded_number_of_blocks(bundle):
    """Two lists of 3,072 postings (8 blocks a partition) that never meet: the whole lists
    would be read; bounded (crawl order: 6 blocks from the start), each reads 6 blocks and the
    answer says so."""
    reader = CountingReader(bundle)
    shard = LongListShard(reader)
    searcher = Searcher([shard])
    cands = shard.candidates("odd even", searcher.parser.parse("odd even"), 500,
                             searcher.options)
    assert len(cands) == 0
    assert reader.blocks["odd"] <= 2 * PARTS and reader.blocks["even"] <= 2 * PARTS
    assert reader.blocks["odd"] + reader.blocks["even"] > 0
    assert cands.partial and not cands.exhausted and TRUNCATED_MESSAGE in cands.messages
    # the same lists, unbounded: every block of both (what the bound saves)
    full = CountingReader(bundle)
    cands = ExhaustiveShard(full).candidates("odd even", searcher.parser.parse("odd even"),
                                             500, searcher.options)
    assert len(cands) == 0 and cands.exhausted and not cands.partial
    assert full.blocks["odd"] >= 8 * PARTS and full.blocks["even"] >= 8 * PARTS


def test_bounded_search_finds_the_exhaustive_top_ten(bundle):
    """Every page has the same words and length but the phrase pages, so scores follow Doc
    Rank: the top 10 are among partition 0's first pages, which the bound reads."""
    reader = CountingReader(bundle)
    bounded = Searcher([LongListShard(reader)])
    exhaustive = Searcher([ExhaustiveShard(IndexBundleReader(bundle))])
    got = bounded.search("alpha beta", num=10, snippets=False)
    want = exhaustive.search("alpha beta", num=10, snippets=False)
    assert [r.url for r in got.results] == [r.url for r in want.results]
    assert len(got.results) == 10
    assert reader.blocks["alpha"] <= 2 * PARTS and reader.blocks["beta"] <= 2 * PARTS


def test_phrase_checked_on_at_most_k_candidates_per_partition(bundle):
    """Every page holds both words; the phrase is in order in each partition's first EARLY
    pages and in its last ones. Partitions importance-ordered (by their crawl order's keys),
    checked on 256 candidates a partition: the early ones are found and the late ones are
    not, and the answer is marked partial. In crawl order, on 768 candidates from the start:
    partition 0's early ones."""
    reader = IndexBundleReader(bundle)
    shard = PhraseShard(reader)
    searcher = Searcher([shard])
    parsed = searcher.parser.parse('"gamma delta"')
    ranks = ImportanceRanks.of([(p.number, crawl_order_keys(reader.doc_map(p.number).n))
                                for p in reader.partitions])
    block, _, plan = candidate_block(reader, parsed, 500, Budget(0), ranks, shard.filter_keys,
                                     shard.decoded_list, shard.limits)
    phrases = [b for b in plan.bounded if isinstance(b, PhraseIterator)]
    assert phrases and all(p.checked <= 256 * PARTS for p in phrases)
    assert plan.truncated and not any(isinstance(b, WordIterator) for b in plan.bounded)
    index = block.keys & 0xFFFFFFFF
    assert sorted(Counter(key_partition(block.keys).tolist()).values()) == [EARLY] * PARTS
    assert (index < EARLY).all()
    cands = shard.candidates('"gamma delta"', parsed, 500, searcher.options)
    assert cands.partial and len(cands) == EARLY and set(cands.partition.tolist()) == {0}
    # exhaustive: every page holding the phrase
    full = ExhaustiveShard(IndexBundleReader(bundle)).candidates(
        '"gamma delta"', parsed, 5000, searcher.options)
    assert len(full) == PARTS * (EARLY + PART - LATE) and not full.partial


def test_phrase_positions_checked_lazily(bundle):
    """A consumer wanting the first matches gets them after one batch of checks, not after
    the whole candidate list's positions are decoded."""
    reader = IndexBundleReader(bundle)
    lists = [DecodedWordIterator(DecodedList.of(reader.postings(t), True), t)
             for t in ("gamma", "delta")]
    phrase = PhraseIterator(IntersectIterator(lists), Phrase(("gamma", "delta"), ""),
                            reader.postings("gamma"))
    first = phrase.next_block()
    assert first is not None and (first.keys & 0xFFFFFFFF).tolist()[:EARLY] == \
        list(range(EARLY))
    assert phrase.checked == PhraseIterator.FIRST_BATCH


def test_time_budget_returns_the_best_found_so_far_marked_partial(bundle):
    """A clock that moves a second per look: the 2.5 s budget runs out on the third look at
    it, and the shard answers with what it had, partial, not as if the lists had ended."""
    shard = LocalShard(IndexBundleReader(bundle), exact=False)
    ticks = iter(np.arange(0.0, 1000.0))
    shard.clock = lambda: float(next(ticks))
    options = SearchOptions(intersect_time_budget=2.5, min_results_to_group=5000)
    searcher = Searcher([shard], options)
    cands = shard.candidates("alpha beta", searcher.parser.parse("alpha beta"), 5000, options)
    assert 0 < len(cands) < PART * PARTS
    assert cands.partial and not cands.exhausted
    assert "search stopped at the time budget; results are partial" in cands.messages
    assert cands.estimate > len(cands)
    shard.clock = lambda: float(next(ticks))
    result = searcher.search("alpha beta", num=10, snippets=False)
    assert result.partial and len(result.results) == 10
    # the exact search too: the best bounds of what it read are scored, marked partial
    exact = LocalShard(shard.reader)
    exact.clock = lambda: float(next(ticks))
    result = Searcher([exact], options).search("alpha beta", num=10, snippets=False)
    assert result.partial and len(result.results) == 10


SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


class CountedKeys(KeysIterator):
    reads = 0

    def next_block(self):
        CountedKeys.reads += 1
        return super().next_block()


@SETTINGS
@given(docs_strategy, st.integers(1, 5), st.sampled_from("abcde"), st.sampled_from("abcde"),
       st.integers(0, 40))
def test_mixed_intersection_looks_up_lists_held_in_memory(word_lists, pdocs, a, b, skip):
    """A list read block by block, a decoded one and a filter's keys: the matches and their
    columns of brute force, and the in-memory keys are searched, never read in chunks."""
    reader, truth = _fixture(word_lists, pdocs)
    every = np.array(sorted(truth), dtype=np.int64)
    CountedKeys.reads = 0
    it = IntersectIterator([WordIterator(reader.postings(a), a),
                            DecodedWordIterator(DecodedList.of(reader.postings(b), True), b),
                            CountedKeys(every)])
    target = int(every[min(skip, every.size - 1)])
    first = it.skip_to(target)
    got = [] if first is None else first.keys.tolist() + it.drain().keys.tolist()
    assert got == [k for k in ref(truth, lambda d: a in d.words and b in d.words)
                   if k >= target]
    assert CountedKeys.reads == 0
    if first is not None:
        assert first.columns[a].freq.tolist() == [truth[k].words.count(a)
                                                  for k in first.keys.tolist()]


@SETTINGS
@given(docs_strategy, st.integers(1, 5), st.sampled_from("abcde"), st.integers(1, 2))
def test_bounded_word_iterator_reads_the_first_blocks_of_each_partition(
        word_lists, pdocs, term, max_blocks):
    """With a block size of 1 posting (the reader's lists are cut in blocks of 128; the
    fixture's partitions hold a few documents), the bound keeps each partition's first
    postings."""
    reader, truth = _fixture(word_lists * 60, pdocs * 60)
    everything = WordIterator(reader.postings(term), term).drain().keys
    it = WordIterator(reader.postings(term), term, max_blocks=max_blocks)
    got, _ = collect(it, 10 ** 6)
    parts = key_partition(everything)
    want = [k for p in np.unique(parts).tolist()
            for k in everything[parts == p][:128 * max_blocks].tolist()]
    assert got.keys.tolist() == want
    assert it.truncated == (len(want) < everything.size)
    assert it.blocks <= max_blocks * len(np.unique(parts))
    # bounded in all (crawl order): the first blocks of the list, whatever their partitions
    it = WordIterator(reader.postings(term), term, total_blocks=max_blocks)
    got, _ = collect(it, 10 ** 6)
    first = WordIterator(reader.postings(term), term)
    want = np.concatenate([first.next_block().keys for _ in range(
        min(max_blocks, it.blocks))]).tolist() if it.blocks else []
    assert got.keys.tolist() == want and it.blocks <= max_blocks
    assert it.truncated == (len(want) < everything.size)
