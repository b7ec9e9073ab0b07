"""Exact top results by dynamic pruning (ranking.core.shard.exact, ranking.core.scoring.bounds):
the score bounds are true upper bounds, and the default (pruned) search returns the exhaustive
search's top 10 on random queries over a generated index (docs/exact-topk.md)."""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.documents.document import fancy_words
from indexer.core.ids import DocType
from ranking.core.options import SearchOptions
from ranking.core.postings.iterators import Budget, collect
from ranking.core.postings.limits import UNBOUNDED
from ranking.core.postings.plan import build_plan
from ranking.core.query.parser import query_word_terms
from ranking.core.scoring.bounds import pool_size, relevance_bound, title_bound_inputs
from ranking.core.scoring.formulas import (
    dfr_relevance,
    fuse,
    record_relevance,
    title_keyword_bonus,
)
from ranking.core.search.pipeline import Searcher
from ranking.core.shard import exact
from ranking.core.shard.local import LocalShard
from ranking.core.shard.matching import score_block

from .helpers import Doc, build

VOCAB = ["ab", "bo", "ca", "du", "ek", "fo", "ga", "hi", "jo", "ku", "lo", "ma"]
WEIGHTS = np.array([40, 25, 15, 10, 8, 6, 5, 4, 3, 2, 1, 1], dtype=float)


# -- the bounds, pure -------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3), st.integers(1, 8), st.integers(0, 2**31 - 1))
def test_relevance_bound_is_an_upper_bound(terms: int, rows: int, seed: int) -> None:
    """Page part plus decayed link records never exceed relevance_bound, whatever the region
    weights of the positions (each at most the entry's page weight) and the records."""
    rng = np.random.default_rng(seed)
    n_docs = int(rng.integers(1, 10_000))
    occurrences = rng.integers(1, 50_000, terms).astype(float)
    avg = float(rng.uniform(1, 500))
    page_len = rng.integers(0, 2000, rows)
    page_weight = rng.uniform(0.5, 6.0, rows)
    page_counts = rng.integers(0, 6, (terms, rows))
    # each page position weighs at most the entry's page weight
    freq = page_counts * page_weight[None, :] * rng.uniform(0, 1, (terms, rows))
    rel, _ = dfr_relevance(freq, occurrences, n_docs, avg, page_len)
    rel = np.where(page_len > 0, rel, 0.0)
    records = rng.integers(0, 4, rows)
    record_row = np.repeat(np.arange(rows), records)
    link_counts = rng.integers(0, 3, (terms, record_row.size))
    link_freq = link_counts * rng.uniform(0, 5, (terms, record_row.size))
    link_rel, _ = record_relevance(record_row, link_freq, rng.integers(1, 50, record_row.size),
                                   occurrences, n_docs, avg, rows)
    counts = page_counts + np.stack([np.bincount(record_row, weights=link_counts[j],
                                                 minlength=rows) for j in range(terms)])
    bound = relevance_bound(counts, occurrences, n_docs, avg, page_len, page_weight, records)
    assert np.all(bound >= rel + link_rel - 1e-9)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=3), st.integers(0, 12))
def test_title_bound_inputs_bound_the_title_bonus(counts: list[int], title_len: int) -> None:
    c = np.array(counts, dtype=float)[:, None]
    hits_ub, held_ub = title_bound_inputs(c, np.array([float(title_len)]))
    # any split of the positions between title and body
    for in_title in range(int(c.sum()) + 1):
        hits = min(in_title, title_len)
        held = min(int((c > 0).sum()), hits)
        got = title_keyword_bonus(2.0, np.array([hits]), np.array([title_len]),
                                  np.array([held]), len(counts))
        bound = title_keyword_bonus(2.0, hits_ub, np.array([title_len]), held_ub, len(counts))
        assert bound[0] >= got[0] - 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=40), st.lists(st.integers(0, 60), max_size=40),
       st.booleans())
def test_common_codes_are_those_isin_finds(first: list[int], second: list[int],
                                           ordered: bool) -> None:
    """The phrase check's intersection of position codes (a binary search when both are
    ascending, as decoded) keeps exactly the values np.isin keeps, in order."""
    a = np.array(sorted(first) if ordered else first, dtype=np.int64)
    b = np.array(sorted(second) if ordered else second, dtype=np.int64)
    assert exact._common(a, b).tolist() == a[np.isin(a, b)].tolist()


@pytest.mark.parametrize("k,share", [(10, 1.0), (20, 1.0), (10, 0.5), (1, 1.0), (3, 0.8)])
def test_pool_holds_every_group_that_can_enter_the_fused_top_k(k: int, share: float) -> None:
    """Over R + 1 groups of distinct S, the group of S rank R = pool_size(k) holding the best
    proximity still fuses below the k-th group by S holding the worst (Yioop's constants,
    fuse)."""
    r = pool_size(k, share)
    s = -np.arange(r + 1, dtype=float)  # dense S ranks 0..r
    prox = np.arange(r + 1, dtype=float)  # the group at S rank r has the best proximity
    fused = fuse(s, prox, share)[0]
    assert fused[r] < fused[k - 1]
    assert pool_size(10, 1.0) == 102


# -- a generated index ------------------------------------------------------------------------

def corpus(seed: int, n: int = 400, fancy: bool = True) -> list[Doc]:
    """Random pages over a small Zipf vocabulary: hosts with roots and deeper paths, titles,
    a few pages of equal text and a few link documents filed under pages' urls, some pages
    with ``defines:`` and ``topic:`` keys; with ``fancy``, title and anchor words posted as
    fancy hits, as the crawler posts them."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        host = f"h{rng.randrange(40)}.test"
        path = "/" if rng.random() < 0.2 else "/" + "/".join(
            rng.choice(VOCAB) for _ in range(rng.randint(1, 3))) + f"/{i}.html"
        length = rng.randint(3, 60)
        words = tuple(rng.choices(VOCAB, weights=WEIGHTS, k=length))
        text_key = f"dup{i % 7}" if rng.random() < 0.03 else None
        title = rng.randint(0, min(6, length))
        # the crawler posts title and anchor words as fancy hits too (ranking.core.shard.
        # exact bounds the title bonus and the anchor records with them)
        meta = tuple(fancy_words(words[:title])) if fancy else ()
        # what a page defines and its headings, as the plugins post them (a name key of one
        # of the queries' words, topic keys of two or three: ranking.core.shard.definitions)
        if rng.random() < 0.15:
            meta += (f"defines:{rng.choice(VOCAB[:8])}",)
        if rng.random() < 0.15:
            meta += (f"topic:{'_'.join(rng.choices(VOCAB[:8], k=rng.randint(2, 3)))}",)
        docs.append(Doc(f"https://{host}{path}", words, meta=meta, title_len=title,
                        text_key=text_key))
    for j in range(n // 10):
        target = rng.choice(docs[: n // 2])
        anchor = tuple(rng.choices(VOCAB, weights=WEIGHTS, k=3))
        docs.append(Doc(target.url, anchor, meta=tuple(fancy_words(anchor)) if fancy else (),
                        doc_type=DocType.LINK, text_key=f"link{j}"))
    return docs


def queries(seed: int, count: int = 24) -> list[str]:
    rng = random.Random(seed + 1)
    out = []
    for i in range(count):
        words = rng.choices(VOCAB[:8], k=1 + i % 3)
        out.append(f'"{" ".join(words)}"' if i % 4 == 3 else " ".join(words))
    return out


@pytest.fixture(autouse=True)
def always_bound(monkeypatch):
    """Bounds and pruning even on these small indexes (a shard scores every match of a query
    with at most SCORE_ALL of them without bounding them)."""
    monkeypatch.setattr(exact, "SCORE_ALL", 0)


@pytest.fixture(scope="module", params=[(3, True), (11, True), (5, False)])
def generated(request, tmp_path_factory):
    seed, fancy = request.param
    reader = build(tmp_path_factory.mktemp(f"exact{seed}") / "b", corpus(seed, fancy=fancy),
                   partition_docs=150)
    yield seed, reader
    reader.close()


def reference(reader, options: SearchOptions) -> Searcher:
    """The exhaustive search: every match a candidate, no bound, no budget."""
    full = replace(options, min_results_to_group=10**6, intersect_time_budget=0.0)
    return Searcher([LocalShard(reader, name="s", limits=UNBOUNDED, exact=False)], full)


def test_pruned_top_10_is_the_exhaustive_one(generated) -> None:
    """The default search's top 10 (urls, in order) equal the exhaustive search's on random
    one- to three-word queries and phrases, though few matches are scored (a small
    min_results_to_group: the first-n rule alone misses most of them)."""
    seed, reader = generated
    options = SearchOptions(min_results_to_group=10)
    pruned = Searcher([LocalShard(reader, name="s")], options)
    full = reference(reader, options)
    compared = 0
    for q in queries(seed):
        got = [r.url for r in pruned.search(q, snippets=False).results]
        want = [r.url for r in full.search(q, snippets=False).results]
        assert got == want, q
        compared += bool(want)
    assert compared >= 12


def test_row_bounds_reach_every_scored_row(generated) -> None:
    """Every match's bound is at least its exact score S (Doc Rank, relevance, link score,
    bonuses) as the shard scores it."""
    seed, reader = generated
    shard = LocalShard(reader, name="s")
    options = SearchOptions()
    for q in queries(seed):
        parsed = Searcher([shard], options).parser.parse(q)
        terms, _ = query_word_terms(parsed)
        budget = Budget(0.0)
        plan = build_plan(reader, parsed.disjuncts, budget, shard.filter_keys,
                          shard.decoded_list, phrase_filters=False)
        block, _ = collect(plan.root, sys.maxsize)
        if not len(block):
            continue
        doc_ids, parts = exact._row_bounds(shard, parsed, block, terms, options)
        bound = parts[:4].sum(axis=0)
        found = score_block(shard, parsed, block, plan, options)
        relative, trust = shard.link_values(found.doc_ids)
        s = (options.doc_rank_weight * found.doc_rank
             + options.relevance_weight * found.relevance
             + options.link_score_weight * (np.log10(1 + relative) + trust)
             + found.bonuses.sum(axis=0))
        assert np.all(bound >= s - 1e-9), q
        assert np.array_equal(doc_ids, found.doc_ids)


def test_pruning_scores_fewer_than_every_match(generated) -> None:
    """On a frequent word the bound stops the scoring before every match is scored."""
    _, reader = generated
    shard = LocalShard(reader, name="s")
    parsed = Searcher([shard]).parser.parse("ab")
    stats = exact.Pruning()
    found = exact.exact_matches(shard, parsed, 5, SearchOptions(), stats)
    assert stats.matches > 100
    assert len(found) == stats.scored_rows < stats.matches


def test_few_matches_are_all_scored(generated, monkeypatch) -> None:
    """At most SCORE_ALL matches: every one scored at once, the same top 10."""
    seed, reader = generated
    options = SearchOptions(min_results_to_group=10)
    q = queries(seed)[0]
    pruned = [r.url for r in Searcher([LocalShard(reader, name="s")], options).search(
        q, snippets=False).results]
    monkeypatch.setattr(exact, "SCORE_ALL", 10**6)
    stats = exact.Pruning()
    shard = LocalShard(reader, name="s")
    parsed = Searcher([shard]).parser.parse(q)
    exact.exact_matches(shard, parsed, 5, options, stats)
    assert stats.scored_rows == stats.matches > 0
    assert [r.url for r in Searcher([shard], options).search(q, snippets=False).results] \
        == pruned


def test_old_partitions_path_unchanged(tmp_path: Path) -> None:
    """A shard with ``exact=False`` still reads its first n matches (the bounded search)."""
    reader = build(tmp_path / "b", corpus(5, 60))
    shard = LocalShard(reader, name="s", exact=False)
    res = Searcher([shard]).search("ab", snippets=False)
    assert res.results
    reader.close()
