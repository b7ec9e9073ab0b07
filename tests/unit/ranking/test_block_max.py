"""Block-max pruning (ranking.core.shard.block_max): the bound of every doc range of the driver
list is at least the exact score S of every match in it, and the pruned top 10 equal the
exhaustive search's on random queries over generated indexes; a partition without block
maxima falls back to the exact search that reads every match (docs/exact-topk.md, step 2)."""

from __future__ import annotations

import dataclasses
import shutil
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.core.bundle.layout import (
    BLOCK_MAXIMA,
    read_partition_manifest,
    write_partition_manifest,
)
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.reorder import reorder_partition
from indexer.core.bundle.verify import verify_bundle
from indexer.core.files.storage import frame
from indexer.core.ids import DocType, hash8
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import key_index, key_partition
from ranking.core.postings.iterators import Budget, collect
from ranking.core.postings.plan import build_plan
from ranking.core.query.parser import query_word_terms
from ranking.core.search.pipeline import Searcher
from ranking.core.shard import block_max, exact
from ranking.core.shard.block_max import GROUPED
from ranking.core.shard.local import LocalShard
from ranking.core.shard.matching import score_block

from .helpers import build
from .test_exact_topk import VOCAB, corpus, reference

WORDS = st.lists(st.sampled_from(VOCAB[:8]), min_size=1, max_size=3)


@pytest.fixture(scope="module", params=[(3, True), (11, True), (5, False)])
def generated(request, tmp_path_factory):
    """Indexes of 900 pages (and link documents) in partitions of 300: the frequent words'
    lists have several blocks of 128 postings in each."""
    seed, fancy = request.param
    reader = build(tmp_path_factory.mktemp(f"blockmax{seed}") / "b",
                   corpus(seed, n=900, fancy=fancy), partition_docs=300)
    assert all(reader.block_maxima(p.number) is not None for p in reader.partitions)
    yield seed, reader
    reader.close()


def pruned_shard(reader) -> LocalShard:
    shard = LocalShard(reader, name="s")
    shard.block_max_min_docs = 0  # every query of these small indexes takes the block-max path
    shard.block_max_grouped = 1.0  # though their link documents and copies are everywhere
    return shard


def query_of(words: list[str], phrase: bool) -> str:
    return f'"{" ".join(words)}"' if phrase and len(words) > 1 else " ".join(words)


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(words=WORDS, phrase=st.booleans(), k=st.sampled_from([1, 3, 10]),
       proximity=st.sampled_from([0.0, SearchOptions().proximity_bonus]))
def test_pruned_top_10_is_the_exhaustive_one(generated, words, phrase, k, proximity) -> None:
    """The block-max search's top k (urls, in order) are the exhaustive search's (without a
    proximity bonus the fusion's pool is the k best groups: most ranges go unread)."""
    _, reader = generated
    q = query_of(words, phrase)
    options = SearchOptions(min_results_to_group=10, proximity_bonus=proximity)
    shard = pruned_shard(reader)
    parsed = Searcher([shard], options).parser.parse(q)
    # quoted phrases are left to the exact search (docs/exact-topk.md, section 9)
    quoted = phrase and len(words) > 1
    assert (block_max.block_max_matches(shard, parsed, k, options) is None) == quoted
    got = [r.url for r in Searcher([shard], options).search(q, num=k, snippets=False).results]
    want = [r.url for r in reference(reader, options).search(q, num=k,
                                                            snippets=False).results]
    assert got == want, q


@pytest.fixture(scope="module")
def singles(tmp_path_factory):
    """Pages only, each its own group (distinct urls and texts): no grouped entry."""
    docs = []
    for i, d in enumerate(corpus(17, n=900)):
        if d.doc_type == DocType.PAGE and d.text_key is None:
            host, _, path = d.url.removeprefix("https://").partition("/")
            docs.append(dataclasses.replace(d, url=f"https://{host}.{i}.test/{path}"))
    reader = build(tmp_path_factory.mktemp("singles") / "b", docs, partition_docs=300)
    yield reader
    reader.close()


def test_pruning_reads_fewer_matches(singles) -> None:
    """On the most frequent word the first ranges' theta leaves ranges unread."""
    reader = singles
    shard = pruned_shard(reader)
    shard.block_max_grouped = GROUPED
    assert block_max._grouped_keys(shard, shard.block_bounds.of(reader.partitions),
                                   False).size == 0
    parsed = Searcher([shard]).parser.parse("ab")
    options = SearchOptions(exact_groups=3)
    stats = exact.Pruning()
    found = block_max.block_max_matches(shard, parsed, 3, options, stats)
    everything = exact.Pruning()
    exact.exact_matches(LocalShard(reader, name="s"), parsed, 3, options, everything)
    assert found is not None and len(found)
    assert stats.matches < everything.matches


@settings(max_examples=30, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(words=WORDS)
def test_range_bounds_reach_every_match(generated, words) -> None:
    """Every match's exact S (as the shard scores it) is at most the bound of the driver's
    range holding it."""
    _, reader = generated
    shard = pruned_shard(reader)
    options = SearchOptions()
    parsed = Searcher([shard], options).parser.parse(" ".join(words))
    terms, _ = query_word_terms(parsed)
    distinct = list(dict.fromkeys(parsed.disjuncts[0].all_terms))
    infos = {t: {r.partition: r for r in reader.term_info(t)} for t in distinct}
    driver = min(distinct, key=lambda t: sum(r.docs for r in infos[t].values()))
    ranges = block_max._ranges(shard, parsed, terms, distinct, driver, infos, options,
                               shard.block_bounds.of(reader.partitions))
    plan = build_plan(reader, parsed.disjuncts, Budget(0.0), shard.filter_keys,
                      shard.decoded_list, phrase_filters=False)
    block, _ = collect(plan.root, sys.maxsize)
    if not len(block):
        return
    found = score_block(shard, parsed, block, plan, options)
    relative, trust = shard.link_values(found.doc_ids)
    s = (options.doc_rank_weight * found.doc_rank
         + options.relevance_weight * found.relevance
         + options.link_score_weight * (np.log10(1 + relative) + trust)
         + found.bonuses.sum(axis=0))
    part, index = key_partition(block.keys), key_index(block.keys)
    for p, i, score in zip(part.tolist(), index.tolist(), s.tolist(), strict=True):
        at = np.flatnonzero((ranges.part == p) & (ranges.lo <= i) & (ranges.hi >= i))
        assert at.size == 1, (p, i)
        assert ranges.bound[at[0]] >= score - 1e-9, (words, p, i)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=40), st.data())
def test_range_max_is_the_brute_force_one(values, data) -> None:
    n = len(values)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, n), max_size=6))) | {n})
    lo = np.array([0, *cuts[:-1]], dtype=np.int64)
    hi = np.array(cuts, dtype=np.int64) - 1
    got = block_max._range_max(np.array(values), lo, hi)
    assert got.tolist() == [max(values[a:b + 1]) for a, b in zip(lo, hi, strict=True)]
    first, last = lo, hi  # blocks; ranges anywhere
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a, n + 3))
    over = block_max._overlap_max(first, last, np.arange(lo.size), np.array([a]),
                                  np.array([b]))
    want = [j for j in range(lo.size) if lo[j] <= b and hi[j] >= a]
    assert over.tolist() == [float(max(want)) if want else -1.0]


def test_partitions_without_maxima_take_the_exact_search(generated, tmp_path) -> None:
    """A bundle whose MANIFESTs name no block maxima (made before them) is searched by the
    exact search, with the same top 10."""
    _, reader = generated
    copy = tmp_path / "old"
    shutil.copytree(reader.path, copy)
    for part in reader.partitions:
        manifest = read_partition_manifest(copy, part.number)
        manifest["files"].pop(BLOCK_MAXIMA)
        write_partition_manifest(copy, part.number, manifest)
    options = SearchOptions(min_results_to_group=10)
    with IndexBundleReader(copy) as old:
        shard = pruned_shard(old)
        parsed = Searcher([shard], options).parser.parse("ab bo")
        assert block_max.block_max_matches(shard, parsed, 10, options) is None
        got = [r.url for r in Searcher([shard], options).search("ab bo",
                                                                snippets=False).results]
    want = [r.url for r in Searcher([pruned_shard(reader)], options).search(
        "ab bo", snippets=False).results]
    assert got == want and got


def test_verify_checks_the_block_maxima(generated, tmp_path) -> None:
    """verify accepts the maxima as written and names a file that does not decode; a reader
    then searches that partition through the exact search."""
    _, reader = generated
    copy = tmp_path / "damaged"
    shutil.copytree(reader.path, copy)
    assert verify_bundle(copy).ok
    manifest = read_partition_manifest(copy, 0)
    path = copy / "positions_doc_map" / "0" / manifest["files"][BLOCK_MAXIMA]
    path.write_bytes(frame(BLOCK_MAXIMA, b"not an npz"))
    report = verify_bundle(copy)
    assert not report.ok and any(str(path) in p for p in report.problems)
    with IndexBundleReader(copy) as damaged:
        assert damaged.block_maxima(0) is None
        shard = pruned_shard(damaged)
        parsed = Searcher([shard]).parser.parse("ab")
        assert block_max.block_max_matches(shard, parsed, 10, SearchOptions()) is None


def test_grouped_entries_everywhere_take_the_exact_search(generated) -> None:
    """When most ranges hold grouped entries (link documents, pages of equal text), the
    exact search answers (it reads every match anyway), with the same top 10."""
    _, reader = generated
    shard = pruned_shard(reader)
    shard.block_max_grouped = 0.0
    parsed = Searcher([shard]).parser.parse("ab")
    assert block_max.block_max_matches(shard, parsed, 10, SearchOptions()) is None
    got = [r.url for r in Searcher([shard]).search("ab", snippets=False).results]
    want = [r.url for r in Searcher([pruned_shard(reader)]).search("ab",
                                                                  snippets=False).results]
    assert got == want and got


def test_importance_ordered_partitions(tmp_path) -> None:
    """Partitions re-ordered by importance (new blocks, new maxima, Doc Rank by the global
    key order): the pruned top k are still the exhaustive search's."""
    rng = np.random.default_rng(5)
    docs = [d for d in corpus(23, n=900) if d.doc_type == DocType.PAGE]
    path = tmp_path / "b"
    build(path, docs, partition_docs=300).close()
    values = {int.from_bytes(hash8(d.url), "big"): float(rng.uniform(0, 3)) for d in docs}
    for partition in (0, 1):
        reorder_partition(path, partition, lambda hashes: np.array(
            [values.get(int(h), 0.0) for h in hashes.tolist()]), "test")
    with IndexBundleReader(path) as reader:
        assert all(reader.block_maxima(p.number) is not None for p in reader.partitions)
        shard = pruned_shard(reader)
        assert shard.importance_ranks() is not None
        for k, proximity in ((3, 0.0), (10, SearchOptions().proximity_bonus)):
            options = SearchOptions(min_results_to_group=10, proximity_bonus=proximity)
            for q in ("ab", "bo", "ab ca", "du ek fo"):
                parsed = Searcher([shard], options).parser.parse(q)
                assert block_max.block_max_matches(shard, parsed, k, options) is not None
                got = [r.url for r in Searcher([shard], options).search(
                    q, num=k, snippets=False).results]
                want = [r.url for r in reference(reader, options).search(
                    q, num=k, snippets=False).results]
                assert got == want, q
