"""Each scoring component against values worked out by hand from the seed's formulas."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.text import TextAnalyzer
from ranking.core.options import SearchOptions
from ranking.core.scoring.formulas import (
    BONUS_NAMES,
    combine,
    dense_ranks,
    dfr_relevance,
    fuse,
    minimal_spans,
    proximity,
    proximity_frequency,
    record_relevance,
    region_weighted_frequency,
    title_keyword_bonus,
    url_items,
)
from ranking.core.shard.url_features import BonusInputs, UrlFeatures, candidate_bonuses

from .helpers import Doc, build

A = np.array


def test_dfr_by_hand():
    # N = 10, l_t = 5, l_avg = 8, l_d = 4, f = 2:
    # f' = 2 * log2(1 + 8/4) = 2 * 1.5849625 = 3.169925
    # (log2(1.5) + 3.169925 * log2(3)) / (3.169925 + 1)
    #   = (0.5849625 + 5.0241...) / 4.169925 = 1.3451500
    total, parts = dfr_relevance(A([[2.0]]), [5], 10, 8.0, A([4]))
    assert total[0] == pytest.approx(1.3451500, abs=1e-6)
    # a term absent from the document (f = 0) contributes log2(1 + l_t/N): l_t = 3 -> 0.3785116
    total, parts = dfr_relevance(A([[2.0], [0.0]]), [5, 3], 10, 8.0, A([4]))
    assert parts[1, 0] == pytest.approx(0.3785116, abs=1e-6)
    assert total[0] == pytest.approx(1.3451500 + 0.3785116, abs=1e-6)


def test_dfr_common_term_by_hand():
    # a term with more occurrences than documents: N = 10, l_t = 40 (lambda = 4),
    # A = log2(5) = 2.3219281, B = log2(1.25) = 0.3219281, rho = B/A = 0.1386468.
    # f = 2, l_avg = 8, l_d = 4: f' = 3.169925,
    # B (f' + rho) / (f' + 1) = 0.3219281 * 3.3085718 / 4.169925 = 0.2554296
    # (the seed's (A + f' B)/(f' + 1) = 0.8015530 would rank f = 0.5 above it: 1.4376999)
    total, _ = dfr_relevance(A([[2.0, 0.5]]), [40], 10, 8.0, A([4, 4]))
    assert total[0] == pytest.approx(0.2554296, abs=1e-6)
    # f = 0.5: f' = 0.7924813, 0.3219281 * 0.9311281 / 1.7924813 = 0.1672298 < 0.2554296
    assert total[1] == pytest.approx(0.1672298, abs=1e-6)
    # at l_t = N both intercepts are 1: every frequency scores B = 1, as in the seed
    total, _ = dfr_relevance(A([[0.0, 0.5, 7.0]]), [10], 10, 8.0, A([4, 4, 4]))
    assert total.tolist() == pytest.approx([1.0, 1.0, 1.0])


def _seed_dfr(f, lt, n, avg, ld):
    """The seed's formula as written in "Yioop Search Engine Ranking Mechanisms"."""
    fp = f * np.log2(1 + avg / ld)
    return (np.log2(1 + lt / n) + fp * np.log2(1 + n / lt)) / (fp + 1)


_freqs = st.floats(0.0, 1e4, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(_freqs, min_size=2, max_size=8), st.integers(1, 10**9),
       st.integers(1, 10**7), st.floats(0.0, 1e5, allow_nan=False), st.integers(0, 10**6))
def test_dfr_never_decreases_with_frequency(freqs, lt, n, avg, ld):
    freqs = sorted(freqs)
    total, parts = dfr_relevance(A([freqs]), [lt], n, avg, A([ld] * len(freqs)))
    assert np.all(np.isfinite(total)) and np.all(total >= 0)
    steps = np.diff(total)
    assert np.all(steps >= -1e-12 * np.maximum(total[1:], 1.0)), (total, lt, n)


@settings(max_examples=200, deadline=None)
@given(_freqs, st.integers(1, 10**6), st.integers(1, 10**6), st.floats(1.0, 1e4),
       st.integers(1, 10**5))
def test_dfr_is_the_seed_formula_when_terms_are_rarer_than_documents(f, lt, n, avg, ld):
    lt = min(lt, n)
    total, _ = dfr_relevance(A([[f]]), [lt], n, avg, A([ld]))
    assert total[0] == pytest.approx(_seed_dfr(f, lt, n, avg, ld), rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(_freqs, st.integers(1, 10**5), st.floats(1.0, 50.0), st.floats(1.0, 50.0))
def test_dfr_common_terms_weigh_less_the_more_common(f, n, k1, k2):
    # above l_t = N a more common term never outscores a less common one at equal frequency
    lo, hi = sorted((k1, k2))
    _, parts = dfr_relevance(A([[f], [f]]), [n * lo, n * hi], n, 8.0, A([4]))
    assert parts[1, 0] <= parts[0, 0] + 1e-12


def test_record_relevance_by_hand():
    # one term, N = 10, l_t = 5, l_avg = 8. Row 0 has three link records: lengths 4, 4, 2
    # with f = 2, 0, 2; row 1 one record of length 4 with f = 2.
    # f = 2, l = 4: 1.3451500 (test_dfr_by_hand). f = 2, l = 2: f' = 2 log2(5) = 4.643856,
    #   (log2 1.5 + 4.643856 log2 3) / 5.643856 = (0.5849625 + 7.360340) / 5.643856 = 1.4077787
    # the record with f = 0 holds no query term and counts nothing; row 0's records by
    # decreasing relevance weigh 1 and 1/2: 1.4077787 + 1.3451500 / 2 = 2.0803537
    total, per_term = record_relevance(A([0, 0, 0, 1]), A([[2.0, 0.0, 2.0, 2.0]]),
                                       A([4, 4, 2, 4]), [5], 10, 8.0, rows=3)
    assert total[0] == pytest.approx(2.0803537, abs=1e-6)
    assert total[1] == pytest.approx(1.3451500, abs=1e-6)
    assert total[2] == 0.0
    assert per_term.shape == (1, 3)
    assert per_term[0].tolist() == pytest.approx(total.tolist())


def test_region_weighted_frequency_by_hand():
    # row 0 regions: positions 0..2 weigh 4 (title), 3..9 weigh 0.5; position 12 is past the
    # regions and weighs the default 1. Positions 1, 5, 12 -> 4 + 0.5 + 1 = 5.5
    # row 1 has one region 0..5 weight 2; positions 0, 5 -> 4
    f = region_weighted_frequency(
        pos=A([1, 5, 12, 0, 5]), counts=A([3, 2]), region_row=A([0, 0, 1]),
        region_end=A([2, 9, 5]), region_weight=A([4.0, 0.5, 2.0]), default_weight=1.0,
        rows=2)
    assert f.tolist() == [5.5, 4.0]


def test_proximity_by_hand():
    # a at 0, 10; b at 3, 11 -> minimal spans [0,3], [3,10], [10,11]
    # sum 1/4 + 1/8 + 1/2 = 0.875; k = 2 terms; l_d = 20 -> 19 start positions
    prox, raw = proximity([(A([0, 10]), A([2])), (A([3, 11]), A([2]))], [1, 1], A([20]), 1)
    assert raw[0] == pytest.approx(0.875)
    assert prox[0] == pytest.approx(0.875 * 2 / 19)


def test_proximity_frequency_by_hand():
    # span sum 0.875 on a page of 20 words, l_avg 60: 0.875 * log2(1 + 3) = 1.75;
    # the same sum on a page of 180 words: 0.875 * log2(4/3) = 0.875 * 0.4150375 = 0.3631578
    got = proximity_frequency(A([0.875, 0.875, 0.0]), A([20, 180, 5]), 60.0)
    assert got.tolist() == pytest.approx([1.75, 0.3631578, 0.0], abs=1e-6)


def test_proximity_counts_repeats():
    # query "a a": a at 1, 4, 6 -> spans [1,4], [4,6]: 1/4 + 1/3
    _, raw = proximity([(A([1, 4, 6]), A([3]))], [2], A([10]), 1)
    assert raw[0] == pytest.approx(1 / 4 + 1 / 3)


def test_proximity_needs_two_terms():
    prox, _ = proximity([(A([1, 4]), A([2]))], [1], A([10]), 1)
    assert prox[0] == 0


def _naive_spans(lists, mult):
    """All intervals holding every term (with repeats) that contain no smaller such one."""
    occ = sorted((p, j) for j, ps in enumerate(lists) for p in ps)
    if not occ:
        return []
    pts = [p for p, _ in occ]

    def holds(u, v):
        return all(sum(1 for p in ps if u <= p <= v) >= mult[j] for j, ps in enumerate(lists))

    good = [(u, v) for u, v in itertools.combinations_with_replacement(pts, 2) if holds(u, v)]
    return sorted((u, v) for u, v in good
                  if not any((a, b) != (u, v) and u <= a and b <= v for a, b in good))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sets(st.integers(0, 25), max_size=6), min_size=1, max_size=3),
       st.lists(st.integers(1, 2), min_size=3, max_size=3))
def test_minimal_spans_match_brute_force(sets, mult):
    # distinct terms occupy distinct positions
    taken: set[int] = set()
    lists = []
    for s in sets:
        lists.append(sorted(s - taken))
        taken |= s
    mult = mult[:len(lists)]
    r, u, v = minimal_spans([(A(ps, dtype=np.int64), A([len(ps)])) for ps in lists], mult, 1)
    assert sorted(zip(u.tolist(), v.tolist(), strict=True)) == _naive_spans(lists, mult)


def test_doc_rank_is_log10_of_documents_after(tmp_path):
    docs = [Doc(f"https://h.test/{i}", ("x", str(i))) for i in range(5)]
    reader = build(tmp_path / "b", docs, partition_docs=3)
    # partitions of 3 and 2 entries: entry 0 of partition 0 has 2 + 2 documents after it
    assert reader.doc_rank(0, 0) == pytest.approx(np.log10(4))
    assert reader.doc_rank(1, 0) == pytest.approx(np.log10(1))


def _bonuses(url: str, title_hits: float, title_len: float, title_terms: float,
             terms: list[str], lang: str = "en") -> dict[str, float]:
    """The bonus factors of one page as the shard computes them: its url features
    (:class:`UrlFeatures`, filled from :func:`url_items`), its title counts as the title
    region gives them, through :func:`candidate_bonuses`."""
    o, a = SearchOptions(), TextAnalyzer()
    word_ids: dict[str, int] = {}
    features = UrlFeatures(1)
    features.add(0, url_items(url, "", a, lang), word_ids)
    zero = np.zeros(1, dtype=np.int64)
    got = candidate_bonuses(lambda p, rows: features, word_ids, BonusInputs(
        zero, zero, terms, A([title_hits]), A([title_len]), A([title_terms]), lang, o))
    return dict(zip(BONUS_NAMES, got[:, 0].tolist(), strict=True))


def test_url_bonuses_by_hand():
    # title "threading - Thread-based parallelism": terms thread, thread, base, parallel;
    # query "thread" -> 2 hits of 4 title words, 1 of 1 query terms held
    b = _bonuses("https://docs.python.org/3/library/threading.html", 2, 4, 1, ["thread"])
    # path terms 3, librari, thread -> 1 of 3 -> path bonus 1 * 1/3
    assert b["path_keyword"] == pytest.approx(1 / 3)
    # title terms thread, thread, base, parallel -> 2 of 4 -> 2 * 2/4
    assert b["title_keyword"] == pytest.approx(1.0)
    assert b["host_keyword"] == 0.0          # docs, python, org
    assert b["num_slashes"] == pytest.approx(0.5 / 4)   # three slashes after the host
    assert b["host_url"] == b["cld_url"] == 0.0
    # query "thread queue": the title holds 1 of its 2 terms -> 2 * 2/4 * 1/2
    two = _bonuses("https://docs.python.org/3/library/threading.html", 2, 4, 1,
                   ["thread", "queue"])
    assert two["title_keyword"] == pytest.approx(0.5)
    root = _bonuses("https://www.yahoo.co.uk/", 0, 0, 0, ["yahoo"])
    assert root["host_url"] == 0.5 and root["cld_url"] == 2.0 and root["num_slashes"] == 0.5
    # host keywords yahoo, co, uk: 1 of 3 -> host keyword bonus 2 * 1/3
    assert root["host_keyword"] == pytest.approx(2 / 3)
    sub = _bonuses("https://docs.python.org/", 0, 0, 0, [])
    assert sub["host_url"] == 0.5 and sub["cld_url"] == 0.0
    wiki = _bonuses("https://en.wikipedia.org/wiki/X", 0, 0, 0, [])
    assert wiki["wiki"] == 0.5


def test_combine_weights():
    o = SearchOptions(doc_rank_weight=2.0, relevance_weight=3.0, proximity_weight=0.5)
    s = combine(A([1.0]), A([2.0]), A([4.0]), o, bonuses=1.0, weight=2.0)
    assert s[0] == pytest.approx(2 * (2 * 1 + 3 * 2 + 0.5 * 4 + 1))


def test_dense_ranks_share_ties():
    # descending; equal values share a rank and the next value takes the next rank
    assert dense_ranks(A([3.0, 5.0, 3.0, 1.0, 5.0])).tolist() == [1, 0, 1, 2, 0]
    assert dense_ranks(A([])).tolist() == []


def test_fuse_by_hand():
    # S = [10, 8, 9], Prox = [0.5, 2.0, 0.5]: S ranks 0, 2, 1; Prox ranks 1, 0, 1
    # 200 * (2/(59 + rS) + 1/(59 + rP)):
    #   row 0: 200 * (2/59 + 1/60) = 6.7796610 + 3.3333333 = 10.1129944
    #   row 1: 200 * (2/61 + 1/59) = 6.5573770 + 3.3898305 = 9.9472075
    #   row 2: 200 * (2/60 + 1/60) = 6.6666667 + 3.3333333 = 10.0
    fused, rs, rp = fuse(A([10.0, 8.0, 9.0]), A([0.5, 2.0, 0.5]))
    assert rs.tolist() == [0, 2, 1] and rp.tolist() == [1, 0, 1]
    assert fused.tolist() == pytest.approx([10.1129944, 9.9472075, 10.0], abs=1e-6)
    # the proximity bonus weighs the proximity's share, a w: weight multiplies the whole:
    #   row 1 with share 0.5, weight 2: 400 * (2/61 + 0.5/59) = 400 * 0.0412615 = 16.5045846
    fused, _, _ = fuse(A([10.0, 8.0, 9.0]), A([0.5, 2.0, 0.5]), proximity_share=0.5,
                       weight=2.0)
    assert fused[1] == pytest.approx(16.5045846, abs=1e-6)


def test_fuse_weighs_the_score_twice():
    # S ranks 0, 1, 2, 3; proximity ranks 3, 0, 1, 2:
    #   row 0: 2/59 + 1/62 = 0.0500273; row 1: 2/60 + 1/59 = 0.0502825 (the close pair wins
    #   over the score one rank better); row 2: 2/61 + 1/60 = 0.0494536
    fused, _, _ = fuse(A([20.0, 19.5, 19.0, 5.0]), A([0.01, 3.0, 2.0, 0.02]))
    assert fused[:3].tolist() == pytest.approx([200 * 0.0500273, 200 * 0.0502825,
                                                200 * 0.0494536], abs=1e-4)
    assert int(np.argmax(fused)) == 1
    # but the best proximity does not lift a score two ranks down past the first: rows
    # with S ranks 0 and 2 and proximity ranks 1 and 0: 2/59 + 1/60 = 0.0505650 against
    # 2/61 + 1/59 = 0.0497360
    fused, _, _ = fuse(A([20.0, 19.0, 18.0]), A([2.0, 1.0, 3.0]))
    assert int(np.argmax(fused)) == 0


def test_title_keyword_bonus_by_hand():
    # query "default value" (2 distinct terms), bonus 2:
    #   title "VALUES": 1 hit of 1 word, 1 of 2 query terms: 2 * 1/1 * 1/2 = 1.0
    #   title "5.2. Default Values": 2 hits of 4 words, 2 of 2 terms: 2 * 2/4 * 2/2 = 1.0
    #   title "Column Defaults Default": 2 hits of 3 words, 1 term: 2 * 2/3 * 1/2 = 0.6666667
    #   no title: 0
    got = title_keyword_bonus(2.0, A([1.0, 2.0, 2.0, 0.0]), A([1.0, 4.0, 3.0, 0.0]),
                              A([1.0, 2.0, 1.0, 0.0]), 2)
    assert got.tolist() == pytest.approx([1.0, 1.0, 0.6666667, 0.0], abs=1e-6)
    # one query term: the seed's share of title words
    assert title_keyword_bonus(2.0, A([1.0]), A([4.0]), A([1.0]), 1)[0] == pytest.approx(0.5)
