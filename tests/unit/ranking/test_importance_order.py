"""Global importance order across partitions: the first n candidates (ranking.core.postings.collect) and
Doc Rank (indexer.core.partition.grouping.ImportanceRanks), against brute-force references and on a
two-partition bundle re-ordered with indexer.core.bundle.reorder."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.reorder import reorder_partition
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.ids import hash8
from indexer.core.partition.grouping import ImportanceRanks, crawl_order_keys, is_key_ordered
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import key_index, key_partition, make_keys
from ranking.core.postings.collect import collect_by_key
from ranking.core.postings.combinators import IntersectIterator
from ranking.core.postings.iterators import Budget, KeysIterator, WordIterator, collect
from ranking.core.query.parser import QueryParser
from ranking.core.search.pipeline import search
from ranking.core.shard.local import LocalShard

from .helpers import Doc, index_document

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
STAR = "https://late.example/star"


# -- Doc Rank in global key order -----------------------------------------------------------


def test_ranks_hand_computed() -> None:
    ranks = ImportanceRanks.of([(0, np.array([3.0, 2.0, 1.0])), (1, np.array([2.5, 2.0, 0.5]))])
    # global order: (0,0) 3, (1,0) 2.5, (0,1) 2, (1,1) 2 (tie: partition order), (0,2) 1, (1,2) .5
    assert ranks.after[0].tolist() == [5, 3, 1]
    assert ranks.after[1].tolist() == [4, 2, 0]
    assert ranks.doc_rank(1, [0, 2]).tolist() == [math.log10(4), 0.0]  # clamped at 1


def test_crawl_order_keys_and_ordered_check() -> None:
    assert crawl_order_keys(3).tolist() == pytest.approx([math.log10(3), math.log10(2), 0.0])
    assert is_key_ordered([2.0, 2.0, 1.0]) and is_key_ordered([])
    assert not is_key_ordered([1.0, 2.0]) and not is_key_ordered([np.nan])


key_lists = st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0]), max_size=12)
                     .map(lambda k: sorted(k, reverse=True)), min_size=1, max_size=4)


@SETTINGS
@given(key_lists)
def test_ranks_count_the_entries_after_in_key_order(lists: list[list[float]]) -> None:
    ranks = ImportanceRanks.of([(p, np.array(k, dtype=np.float64)) for p, k in enumerate(lists)])
    entries = [(-k, p, j) for p, ks in enumerate(lists) for j, k in enumerate(ks)]
    for p, ks in enumerate(lists):
        for j, k in enumerate(ks):
            assert ranks.after[p][j] == sum(1 for e in entries if e > (-k, p, j))


# -- candidates: the first n in global key order --------------------------------------------


@st.composite
def matches(draw):
    lists = draw(key_lists)
    keys = {p: np.array(k, dtype=np.float64) for p, k in enumerate(lists)}
    found = [(p, j) for p, k in enumerate(lists) for j in range(len(k))
             if draw(st.booleans())]
    other = [(p, j) for p, k in enumerate(lists) for j in range(len(k)) if draw(st.booleans())]
    return keys, found, other, draw(st.integers(1, 30)), draw(st.integers(1, 6)), \
        draw(st.booleans())


def _keys_of(pairs: list[tuple[int, int]]) -> np.ndarray:
    arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return np.sort(make_keys(arr[:, 0], arr[:, 1]))


class _Counted(KeysIterator):
    """Counts the matches it hands out (skipped ones are not read)."""

    def __init__(self, keys: np.ndarray, chunk: int) -> None:
        super().__init__(keys)
        self.CHUNK = chunk  # blocks that straddle partitions, and skips inside a block
        self.returned = 0

    def next_block(self):
        block = super().next_block()
        self.returned += len(block) if block is not None else 0
        return block


def _iterator(keys: np.ndarray, chunk: int) -> _Counted:
    return _Counted(keys, chunk)


@SETTINGS
@given(matches())
def test_collect_by_key_is_the_brute_force_top_n(case) -> None:
    keys, found, other, n, chunk, intersect = case
    match = _keys_of(found)
    if intersect:  # skipping through an intersection (the array leapfrog)
        root = IntersectIterator([_iterator(match, chunk), _iterator(_keys_of(other), chunk)])
        match = np.intersect1d(match, _keys_of(other))
    else:
        root = _iterator(match, chunk)
    block, exhausted = collect_by_key(root, n, keys)
    parts, index = key_partition(match), key_index(match)
    key = np.array([keys[int(p)][int(i)] for p, i in zip(parts, index, strict=True)])
    best = sorted(range(match.size), key=lambda r: (-key[r], int(match[r])))[:n]
    assert block.keys.tolist() == sorted(int(match[r]) for r in best)
    if exhausted:
        assert block.keys.tolist() == match.tolist()
    if match.size < n:
        assert exhausted


def test_collect_by_key_reads_at_most_n_of_a_partition_and_skips_the_rest() -> None:
    keys = {0: crawl_order_keys(1000), 1: crawl_order_keys(1000)}
    match = make_keys(np.repeat([0, 1], 1000), np.tile(np.arange(1000), 2))
    it = _iterator(match, 8)
    block, exhausted = collect_by_key(it, 5, keys)
    # equal keys entry by entry: ties go to the earlier partition, then to the lower index
    assert block.keys.tolist() == make_keys(np.array([0, 0, 0, 1, 1]),
                                            np.array([0, 1, 2, 0, 1])).tolist()
    assert not exhausted
    assert it.returned <= 16  # a block of each partition, then a skip: never a full scan


def test_collect_by_key_stops_a_partition_at_the_held_threshold() -> None:
    """Once n matches are held, a later partition is read only while its keys beat the n-th
    held key: an equal key loses the tie to the earlier partition."""
    keys = {0: np.full(10, 3.0), 1: np.full(10, 3.0)}
    match = make_keys(np.repeat([0, 1], 10), np.tile(np.arange(10), 2))
    it = _iterator(match, 2)
    block, _ = collect_by_key(it, 3, keys)
    assert block.keys.tolist() == make_keys(0, np.arange(3)).tolist()
    # partition 0: two blocks (the second fills n); partition 1: its first block, nothing taken
    assert it.returned == 6


def test_collect_by_key_stops_at_the_budget_across_partitions() -> None:
    ticks = iter(range(100))
    budget = Budget(2.5, clock=lambda: float(next(ticks)))
    keys = {p: crawl_order_keys(50) for p in range(3)}
    match = make_keys(np.repeat([0, 1, 2], 50), np.tile(np.arange(50), 3))
    root = IntersectIterator([_iterator(match, 4), _iterator(match, 4)], budget)
    root.chunk = 4  # blocks of 4, then 8: the clock passes the budget at the third block
    block, _ = collect_by_key(root, 100, keys)
    assert budget.partial
    assert block.keys.tolist() == make_keys(0, np.arange(12)).tolist()


# -- a two-partition bundle ordered by importance --------------------------------------------


def _importance(table: dict[str, float]):
    values = {int.from_bytes(hash8(u), "big"): v for u, v in table.items()}
    return lambda hashes: np.array([values.get(int(h), 0.0) for h in hashes.tolist()])


def _crawl(path: Path, pages: int = 20, per_partition: int = 10) -> list[str]:
    """``pages`` pages alike but for one word each, crawled in order in partitions of
    ``per_partition``; the last, in the last partition, is STAR. Every partition finished."""
    urls = [f"https://early.example/p{i}" for i in range(pages - 1)] + [STAR]
    docs = [Doc(u, ("common", "word", f"w{i}")) for i, u in enumerate(urls)]
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=per_partition)) as writer:
        writer.append([index_document(d) for d in docs])
        writer.close_partition()
    return urls


def _candidates(reader: IndexBundleReader, query: str, n: int):
    """The first ``n`` matches (the bounded search: ``exact=False``)."""
    return LocalShard(reader, exact=False).candidates(
        query, QueryParser().parse(query), n, SearchOptions(min_results_to_group=n))


def _urls(reader: IndexBundleReader, cands) -> list[str]:
    return [reader.summary_head(int(p), int(i))[0]
            for p, i in zip(cands.partition, cands.index, strict=True)]


def test_best_page_of_a_later_partition_is_a_candidate_once_ordered(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    _crawl(path)
    options = SearchOptions(min_results_to_group=3)
    with IndexBundleReader(path) as reader:
        assert [p.number for p in reader.partitions] == [0, 1]
        assert LocalShard(reader).importance_ranks() is None
        assert STAR not in _urls(reader, _candidates(reader, "common", 3))
        assert STAR not in [r.url for r in search([LocalShard(reader, exact=False)], "common",
                                                   options).results]
    for partition in (0, 1):
        reorder_partition(path, partition, _importance({STAR: 3.0}), "scores")
    with IndexBundleReader(path) as reader:
        cands = _candidates(reader, "common", 3)
        urls = _urls(reader, cands)
        assert STAR in urls
        star = urls.index(STAR)
        # the explanation's inputs: where it is, and the documents after it (all the others)
        assert (int(cands.partition[star]), int(cands.index[star])) == (1, 0)
        assert int(cands.docs_after[star]) == 19
        assert float(cands.doc_rank[star]) == pytest.approx(math.log10(19))
        assert float(cands.doc_rank[star]) == cands.doc_rank.max()
        results = search([LocalShard(reader)], "common", options).results
        assert results[0].url == STAR


def test_doc_rank_is_monotone_in_key_across_partitions(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    urls = _crawl(path, pages=30)
    reorder_partition(path, 1, _importance({urls[12]: 0.3, urls[19]: 1.5, urls[25]: 0.2}), "s")
    with IndexBundleReader(path) as reader:
        shard = LocalShard(reader, exact=False)  # its first n matches in importance order
        ranks = shard.importance_ranks()
        assert ranks is not None
        # partitions 0 and 2 were never re-ordered: their crawl-order keys
        assert ranks.keys[0].tolist() == crawl_order_keys(reader.doc_map(0).n).tolist()
        assert ranks.keys[2].tolist() == crawl_order_keys(reader.doc_map(2).n).tolist()
        assert ranks.keys[1].tolist() == reader.doc_map(1).score.tolist()
        # urls[19], crawled last in partition 1, is first there: log10(10 - 9) + 1.5
        assert ranks.keys[1][0] == pytest.approx(1.5)
        key = np.concatenate([ranks.keys[p] for p in (0, 1, 2)])
        after = np.concatenate([ranks.after[p] for p in (0, 1, 2)])
        rank = np.concatenate([ranks.doc_rank(p, np.arange(ranks.keys[p].size))
                               for p in (0, 1, 2)])
        assert sorted(after.tolist()) == list(range(30))
        higher = key[:, None] > key[None, :]
        assert np.all((after[:, None] > after[None, :])[higher])
        assert np.all((rank[:, None] >= rank[None, :])[higher])
        assert int(np.argmax(rank)) == 10  # urls[19]: partition 1, index 0
        # the candidates of a mixed snapshot are the brute-force top n of every match by key
        cands = shard.candidates("common", QueryParser().parse("common"), 7, SearchOptions())
        every = sorted((-float(ranks.keys[p][i]), p, i) for p in (0, 1, 2)
                        for i in range(ranks.keys[p].size))[:7]
        assert sorted((p, i) for _, p, i in every) == \
            sorted(zip(cands.partition.tolist(), cands.index.tolist(), strict=True))


def test_unordered_bundle_keeps_the_crawl_order(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    _crawl(path)
    with IndexBundleReader(path) as reader:
        cands = _candidates(reader, "common", 4)
        first, _ = collect(WordIterator(reader.postings("common"), "common"), 4)
        assert make_keys(cands.partition, cands.index).tolist() == first.keys.tolist()
        assert cands.doc_rank.tolist() == [float(reader.doc_rank(int(p), int(i)))
                                           for p, i in zip(cands.partition, cands.index,
                                                           strict=True)]


def test_intersect_skip_starts_a_small_chunk_again() -> None:
    """After a skip (to the next partition) the array leapfrog reads a first-size chunk, not
    the grown one: collect_by_key wants only a partition's first matches."""
    keys = np.arange(1 << 16, dtype=np.int64)
    root = IntersectIterator([KeysIterator(keys), KeysIterator(keys)])
    sizes = [len(root.next_block()) for _ in range(4)]
    assert sizes == [256, 512, 1024, 2048]
    assert len(root.skip_to(40_000)) == IntersectIterator.FIRST_CHUNK


@pytest.mark.parametrize("n", [1, 4, 9, 25, 40])
def test_collect_by_key_over_postings_cursors(tmp_path: Path, n: int) -> None:
    """The block-decoded word iterator (long lists are not kept decoded) skips partitions
    through its postings cursor; the result is the brute-force top n by key."""
    path = tmp_path / "bundle"
    urls = _crawl(path, pages=30)
    rng = np.random.default_rng(n)
    table = {u: float(v) for u, v in zip(urls, rng.exponential(0.5, len(urls)), strict=True)}
    for partition in (0, 2):
        reorder_partition(path, partition, _importance(table), "s")
    with IndexBundleReader(path) as reader:
        ranks = LocalShard(reader).importance_ranks()
        assert ranks is not None
        block, _ = collect_by_key(WordIterator(reader.postings("common"), "common"), n,
                                  ranks.keys)
        every = sorted((-float(ranks.keys[p][i]), p, i) for p in (0, 1, 2)
                       for i in range(ranks.keys[p].size))[:n]
        assert block.keys.tolist() == sorted(int(make_keys(p, np.array([i]))[0])
                                             for _, p, i in every)
        assert len(block.columns["common"]) == len(block)
