"""Each iterator against a brute-force reference on random small indexes."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.core.ids import hash8
from ranking.core.postings.combinators import (
    DifferenceIterator,
    IntersectIterator,
    PhraseIterator,
    UnionIterator,
)
from ranking.core.postings.iterators import (
    Budget,
    DecodedList,
    DecodedWordIterator,
    WordIterator,
    collect,
)
from ranking.core.postings.plan import build_plan
from ranking.core.query.parser import Phrase, QueryParser

from .helpers import Doc, build, keys_by_url

VOCAB = ("a", "b", "c", "d", "e")
docs_strategy = st.lists(
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12), min_size=1, max_size=14)
SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _fixture(word_lists, partition_docs):
    tmp = tempfile.mkdtemp(prefix="rk-it-")
    docs = [Doc(f"https://h{i % 3}.test/p{i}", tuple(ws)) for i, ws in enumerate(word_lists)]
    reader = build(Path(tmp) / "b", docs, partition_docs)
    keys = keys_by_url(reader)
    truth = {keys[hash8(d.url)]: d for d in docs}
    return reader, truth


def word(reader, term, positional=True):
    return WordIterator(reader.postings(term), term, positional)


def ref(truth, pred):
    return sorted(k for k, d in truth.items() if pred(d))


def has_phrase(words, phrase):
    """Brute force: consecutive segments, None = any run (possibly empty)."""
    segs, cur = [], []
    for t in phrase:
        if t is None:
            if cur:
                segs.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        segs.append(cur)
    start = 0
    for seg in segs:
        hit = next((i for i in range(start, len(words) - len(seg) + 1)
                    if list(words[i:i + len(seg)]) == seg), None)
        if hit is None:
            return False
        start = hit + len(seg)
    return True


@SETTINGS
@given(docs_strategy, st.integers(1, 5), st.sampled_from(VOCAB))
def test_word_iterator(word_lists, pdocs, term):
    reader, truth = _fixture(word_lists, pdocs)
    got = word(reader, term).drain()
    assert got.keys.tolist() == ref(truth, lambda d: term in d.words)
    if len(got):
        for key, f in zip(got.keys.tolist(), got.columns[term].freq.tolist(), strict=True):
            assert f == truth[key].words.count(term)


@SETTINGS
@given(docs_strategy, st.integers(1, 5), st.lists(st.sampled_from(VOCAB), min_size=2,
                                                  max_size=3, unique=True))
def test_intersect_and_union(word_lists, pdocs, terms):
    reader, truth = _fixture(word_lists, pdocs)
    inter = IntersectIterator([word(reader, t) for t in terms]).drain()
    assert inter.keys.tolist() == ref(truth, lambda d: all(t in d.words for t in terms))
    union = UnionIterator([word(reader, t) for t in terms]).drain()
    assert union.keys.tolist() == ref(truth, lambda d: any(t in d.words for t in terms))
    for j, key in enumerate(union.keys.tolist()):
        for t in terms:
            col = union.columns.get(t)
            assert (0 if col is None else col.freq[j]) == truth[key].words.count(t)


@SETTINGS
@given(docs_strategy, st.integers(1, 5), st.sampled_from(VOCAB), st.sampled_from(VOCAB))
def test_negation(word_lists, pdocs, pos, neg):
    reader, truth = _fixture(word_lists, pdocs)
    got = DifferenceIterator(word(reader, pos), [word(reader, neg, False)]).drain()
    assert got.keys.tolist() == ref(truth, lambda d: pos in d.words and neg not in d.words)


@SETTINGS
@given(docs_strategy, st.integers(1, 5),
       st.lists(st.one_of(st.sampled_from(VOCAB), st.none()), min_size=2, max_size=4))
def test_phrase(word_lists, pdocs, raw):
    terms = list(raw)
    while terms and terms[0] is None:
        terms.pop(0)
    while terms and terms[-1] is None:
        terms.pop()
    if len([t for t in terms if t]) < 2:
        terms = ["a", "b"]
    phrase = Phrase(tuple(terms), "")
    reader, truth = _fixture(word_lists, pdocs)
    words = list(dict.fromkeys(phrase.words))
    child = IntersectIterator([word(reader, t) for t in words]) if len(words) > 1 \
        else word(reader, words[0])
    decoder = reader.postings("a")
    got = PhraseIterator(child, phrase, decoder).drain()
    assert got.keys.tolist() == ref(truth, lambda d: has_phrase(d.words, terms))


@SETTINGS
@given(docs_strategy, st.integers(1, 4), st.data())
def test_skip_to(word_lists, pdocs, data):
    reader, truth = _fixture(word_lists, pdocs)
    keys = sorted(truth)
    target = data.draw(st.sampled_from(keys))
    it = IntersectIterator([word(reader, "a"), word(reader, "b")])
    first = it.skip_to(target)
    rest = it.drain()
    got = [] if first is None else first.keys.tolist() + rest.keys.tolist()
    assert got == [k for k in ref(truth, lambda d: "a" in d.words and "b" in d.words)
                   if k >= target]


def test_multi_block_leapfrog(tmp_path):
    """Lists longer than a postings block (128) in several partitions."""
    rnd = random.Random(7)
    lists = []
    for _ in range(900):
        lists.append([rnd.choice("abcdefgh") for _ in range(rnd.randint(1, 6))]
                     + (["rare"] if rnd.random() < 0.03 else []))
    docs = [Doc(f"https://h.test/{i}", tuple(ws)) for i, ws in enumerate(lists)]
    reader = build(tmp_path / "b", docs, 400)
    keys = keys_by_url(reader)
    truth = {keys[hash8(d.url)]: d for d in docs}
    for terms in (["a", "b"], ["a", "rare"], ["rare", "c", "d"], ["a", "b", "c"]):
        got = IntersectIterator([word(reader, t) for t in terms]).drain()
        assert got.keys.tolist() == ref(truth, lambda d, ts=terms: all(t in d.words
                                                                        for t in ts))
    got = DifferenceIterator(word(reader, "a"), [word(reader, "b", False)]).drain()
    assert got.keys.tolist() == ref(truth, lambda d: "a" in d.words and "b" not in d.words)


def test_plan_from_query_with_meta_and_disjuncts(tmp_path):
    docs = [Doc("https://x.test/1", ("a", "b"), ("filetype:pdf",)),
            Doc("https://x.test/2", ("a", "c")),
            Doc("https://y.test/3", ("b", "c"))]
    reader = build(tmp_path / "b", docs)
    keys = keys_by_url(reader)
    parser = QueryParser()

    def urls(q):
        plan = build_plan(reader, parser.parse(q, add_auto_meta=False).disjuncts, Budget(0))
        block, _ = collect(plan.root, 100)
        inv = {v: k for k, v in keys.items()}
        return sorted(d.url for d in docs if hash8(d.url) in {inv[k] for k in block.keys})

    assert urls("a") == ["https://x.test/1", "https://x.test/2"]
    assert urls("a filetype:pdf") == ["https://x.test/1"]
    assert urls("c -site:y.test") == ["https://x.test/2"]
    assert urls("b | c") == ["https://x.test/1", "https://x.test/2", "https://y.test/3"]
    assert urls("-a") == []  # only negations: the parser reports an empty query
    assert urls("site:all -a") == ["https://y.test/3"]
    assert urls("zzz") == []


def test_time_budget_stops_and_marks_partial(tmp_path):
    docs = [Doc(f"https://h.test/{i}", ("a", "b") if i % 2 else ("a",)) for i in range(400)]
    reader = build(tmp_path / "b", docs, 50)
    ticks = iter(np.arange(0, 100, 1.0))
    budget = Budget(2.5, clock=lambda: float(next(ticks)))
    it = IntersectIterator([word(reader, "a"), word(reader, "b")], budget)
    found, exhausted = collect(it, 1000)
    assert exhausted and budget.partial
    assert 0 < len(found) < 200  # stopped early with what it had


@SETTINGS
@given(docs_strategy, st.integers(1, 5), st.lists(st.sampled_from(VOCAB), min_size=1,
                                                  max_size=3, unique=True),
       st.integers(0, 40))
def test_decoded_word_iterator_matches_brute_force(word_lists, pdocs, terms, skip):
    """The decoded-postings cache's iterator: same matches, frequencies, skipping and
    positions as the block-decoding word iterator and the documents themselves."""
    reader, truth = _fixture(word_lists, pdocs)
    lists = {t: DecodedList.of(reader.postings(t), True) for t in terms}
    DecodedWordIterator.CHUNK = 3  # several chunks even on small lists
    its = [DecodedWordIterator(lists[t], t) for t in terms]
    got = IntersectIterator(its).drain() if len(its) > 1 else its[0].drain()
    assert got.keys.tolist() == ref(truth, lambda d: all(t in d.words for t in terms))
    decoder = reader.postings(terms[0])
    for t in terms:
        if not len(got):
            break
        pos, counts = lists[t].positions(decoder, got.keys)
        assert counts.tolist() == [truth[k].words.count(t) for k in got.keys.tolist()]
        expect = [i for k in got.keys.tolist() for i, w in enumerate(truth[k].words) if w == t]
        assert pos.tolist() == expect
    keys = sorted(truth)
    target = keys[min(skip, len(keys) - 1)]
    it = DecodedWordIterator(lists[terms[0]], terms[0])
    block = it.skip_to(target)
    expect = [k for k in ref(truth, lambda d: terms[0] in d.words) if k >= target]
    assert (block.keys.tolist()[:1] if block is not None else []) == expect[:1]
