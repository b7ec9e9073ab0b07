"""The exactness measure of bench/exactness.py: the exhaustive reference search and the top-k
overlap, on small hand-built bundles (the whole measure runs in
tests/integration/bench/test_scale_bench.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import exactness as ex  # noqa: E402

from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from ranking.core.options import SearchOptions  # noqa: E402
from ranking.core.postings.limits import UNBOUNDED, ReadLimits  # noqa: E402
from ranking.core.search.fanout import per_shard_results  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402
from tests.unit.ranking.helpers import Doc, build  # noqa: E402

DOCS = 400  # > 3 posting blocks of 128
BEST = DOCS - 1  # the best match of "zeta" is the last document in index (crawl) order
QUERIES = ["zeta", "alpha zeta", "alpha beta zeta", '"alpha zeta"', "nosuchword"]


def _doc(i: int) -> Doc:
    if i == BEST:  # a site's root, the query word in its host name and text: bonuses and
        return Doc("https://zeta.test/", ("zeta", "alpha", "beta", "zeta", "zeta"))  # relevance
    return Doc(f"https://h{i % 7}.test/p{i}", ("alpha", "zeta", "beta", f"w{i}", "filler"))


class BlockShard(LocalShard):
    """Every list read block by block (none kept decoded whole), so that read bounds bind."""

    WHOLE_LIST_DOCS = 0


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("exactness") / "b"
    build(path, [_doc(i) for i in range(DOCS)]).close()
    return path


def test_exhaustive_search_overlaps_itself_fully(bundle: Path) -> None:
    """Two exhaustive searches of the same bundle (UNBOUNDED limits, n = every entry) agree:
    overlap 1.0 for every shape; the query without a match is skipped and counted, not
    scored 0 or 1."""
    one = ex.exhaustive_searcher([LocalShard(IndexBundleReader(bundle))])
    two = ex.exhaustive_searcher([BlockShard(IndexBundleReader(bundle), limits=UNBOUNDED)])
    result = ex.top_overlap(one, two, QUERIES)
    assert result.mean == dict.fromkeys(ex.SHAPES, 1.0)
    assert result.counted == {"one_word": 2 - 1, "two_words": 1, "three_words": 1,
                              "phrase": 1}
    assert result.skipped == {"one_word": 1, "two_words": 0, "three_words": 0, "phrase": 0}
    assert result.reference_partial == 0 and result.minimum() == 1.0


def test_tight_read_limits_miss_the_best_match_past_the_bound(bundle: Path) -> None:
    """One posting block per list (crawl order: the first 128 documents): the best "zeta"
    page, the last one, is never read, so the bounded top 10 misses it and the overlap with
    the exhaustive top 10 falls below 1; the exhaustive answer has it first and is complete."""
    tight = ReadLimits(blocks_per_shard=1, min_blocks=1, phrase_checks_per_shard=64,
                       min_phrase_checks=64)
    bounded = Searcher([BlockShard(IndexBundleReader(bundle), limits=tight)])
    reference = ex.exhaustive_searcher(bounded.shards)  # type: ignore[arg-type]
    want = ex.answer(reference, ["zeta"])
    assert want.urls[0][0] == "https://zeta.test/" and want.partial == [False]
    got = ex.answer(bounded, ["zeta"])
    assert "https://zeta.test/" not in got.urls[0] and got.partial == [True]
    result = ex.top_overlap(bounded, reference, QUERIES)
    assert result.mean["one_word"] == pytest.approx(0.9)
    assert result.minimum() is not None and result.minimum() < 1.0
    assert result.reference_partial == 0


def test_overlap_is_a_share_of_the_reference() -> None:
    assert ex.overlap(["a", "b", "c"], ["c", "d"]) == 0.5
    assert ex.overlap([], ["a"]) == 0.0
    assert ex.overlap(["a"], []) is None
    got = ex.Answers([["a"], ["x"], []], [0.0] * 3, [False] * 3)
    want = ex.Answers([["a"], ["y"], []], [0.0] * 3, [True, False, False])
    result = ex.compare(["one_word", "one_word", "phrase"], got, want)
    assert result.mean == {"one_word": 0.5} and result.kinds == ("one_word", "phrase")
    assert result.skipped == {"one_word": 0, "phrase": 1} and result.reference_partial == 1


def test_reference_options_give_every_shard_every_entry() -> None:
    """Each shard's share of n (n * alpha / shards) holds all the entries of every shard."""
    options = SearchOptions()
    for documents, shards in ((10, 1), (1000, 2), (70_001, 3)):
        ref = ex.reference_options(options, documents, shards)
        assert per_shard_results(ref.min_results_to_group, ref.server_alpha, shards) >= documents
        assert ref.intersect_time_budget == 0
        assert ex.reference_options(options, 10, 1).min_results_to_group == \
            options.min_results_to_group


def test_query_shape() -> None:
    parser = Searcher([]).parser
    assert [ex.query_shape(parser.parse(q)) for q in QUERIES] == [
        "one_word", "two_words", "three_words", "phrase", "one_word"]
    assert ex.query_shape(parser.parse("alpha beta gamma delta")) == "three_words"
