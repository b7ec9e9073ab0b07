"""The intersection's array leapfrog (every child a decoded list or a filter's keys) against
the block-by-block leapfrog over the same postings and a brute-force reference."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.core.ids import hash8
from ranking.core.postings.combinators import IntersectIterator
from ranking.core.postings.iterators import (
    Budget,
    DecodedList,
    DecodedWordIterator,
    KeysIterator,
    WordIterator,
    collect,
)

from .helpers import Doc, build, keys_by_url

VOCAB = ("a", "b", "c", "d")
SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _fixture(seed: int, docs: int, partition_docs: int):
    rnd = random.Random(seed)
    lists = [[rnd.choice(VOCAB) for _ in range(rnd.randint(1, 5))] for _ in range(docs)]
    metas = [("filetype:x",) if rnd.random() < 0.5 else () for _ in range(docs)]
    documents = [Doc(f"https://h{i % 4}.test/p{i}", tuple(ws), m)
                 for i, (ws, m) in enumerate(zip(lists, metas, strict=True))]
    reader = build(Path(tempfile.mkdtemp(prefix="rk-ai-")) / "b", documents, partition_docs)
    keys = keys_by_url(reader)
    return reader, {keys[hash8(d.url)]: d for d in documents}


def _array_children(reader, terms, with_filter):
    kids = [DecodedWordIterator(DecodedList.of(reader.postings(t), True), t) for t in terms]
    if with_filter:
        filt = DecodedList.of(reader.postings("filetype:x"), False).keys
        kids.append(KeysIterator(filt))
    return kids


def _block_children(reader, terms, with_filter):
    kids = [WordIterator(reader.postings(t), t) for t in terms]
    if with_filter:
        kids.append(WordIterator(reader.postings("filetype:x"), "filetype:x", False))
    return kids


def _same_columns(a, b):
    assert a.keys.tolist() == b.keys.tolist()
    assert sorted(a.columns) == sorted(b.columns)
    for term, col in a.columns.items():
        other = b.columns[term]
        for f in ("freq", "pos_offset", "pos_length", "rice_k"):
            assert getattr(col, f).tolist() == getattr(other, f).tolist(), (term, f)


@SETTINGS
@given(st.integers(0, 10_000), st.integers(1, 300), st.integers(1, 120),
       st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3, unique=True), st.booleans(),
       st.sampled_from([1, 2, 7, 256]))
def test_array_leapfrog_matches_blocks_and_brute_force(seed, docs, pdocs, terms, with_filter,
                                                      first_chunk):
    reader, truth = _fixture(seed, docs, pdocs)
    arrays = IntersectIterator(_array_children(reader, terms, with_filter))
    arrays.chunk = first_chunk  # several rounds, even on small lists
    assert arrays.arrays is not None
    got = arrays.drain()
    expect = sorted(k for k, d in truth.items()
                    if all(t in d.words for t in terms)
                    and (not with_filter or "filetype:x" in d.meta))
    assert got.keys.tolist() == expect
    _same_columns(got, IntersectIterator(_block_children(reader, terms, with_filter)).drain())
    for j, key in enumerate(got.keys.tolist()):
        for t in terms:
            assert int(got.columns[t].freq[j]) == truth[key].words.count(t)


@SETTINGS
@given(st.integers(0, 10_000), st.integers(2, 200), st.integers(1, 60), st.data())
def test_array_leapfrog_skip_to_and_collect(seed, docs, pdocs, data):
    reader, truth = _fixture(seed, docs, pdocs)
    terms = ["a", "b"]
    expect = sorted(k for k, d in truth.items() if all(t in d.words for t in terms))
    target = data.draw(st.sampled_from(sorted(truth)))
    it = IntersectIterator(_array_children(reader, terms, False))
    it.chunk = data.draw(st.sampled_from([1, 3, 256]))
    first = it.skip_to(target)
    rest = it.drain()
    got = [] if first is None else first.keys.tolist() + rest.keys.tolist()
    assert got == [k for k in expect if k >= target]
    n = data.draw(st.integers(1, 50))
    it = IntersectIterator(_array_children(reader, terms, True))
    it.chunk = 2
    block, exhausted = collect(it, n)
    with_meta = [k for k in expect if "filetype:x" in truth[k].meta]
    assert block.keys.tolist() == with_meta[:n]
    assert exhausted or len(block) == n


def test_array_leapfrog_stops_at_the_time_budget(tmp_path):
    docs = [Doc(f"https://h.test/{i}", ("a", "b") if i % 2 else ("a",)) for i in range(400)]
    reader = build(tmp_path / "b", docs, 50)
    ticks = iter(np.arange(0, 100, 1.0))
    budget = Budget(2.5, clock=lambda: float(next(ticks)))
    it = IntersectIterator(_array_children(reader, ["a", "b"], False), budget)
    it.chunk = it.MAX_CHUNK = 16  # one round of 16 driver keys per clock tick
    found, exhausted = collect(it, 1000)
    assert exhausted and budget.partial
    assert 0 < len(found) < 200  # stopped early with what it had
