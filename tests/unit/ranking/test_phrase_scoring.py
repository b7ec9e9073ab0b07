"""The query side of common phrases: how often a phrase's terms stand in order in a document
(:func:`ranking.core.scoring.formulas.in_order_counts`) and the bonus it gives
(:func:`ranking.core.scoring.formulas.common_phrase_bonus`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.core.scoring.formulas import common_phrase_bonus, in_order_counts

A = np.array


def test_in_order_counts_by_hand():
    # row 0: a at 3, 7; b at 4, 9 -> "a b" once (3, 4); row 1: a at 0, b at 2 -> none;
    # row 2: a at 5, 8; b at 6, 9 -> twice
    a = (A([3, 7, 0, 5, 8]), A([2, 1, 2]))
    b = (A([4, 9, 2, 6, 9]), A([2, 1, 2]))
    assert in_order_counts([a, b], 3).tolist() == [1, 0, 2]
    assert in_order_counts([b, a], 3).tolist() == [0, 0, 0]
    assert in_order_counts([], 2).tolist() == [0, 0]


def _naive_in_order(lists, rows):
    out = []
    for r in range(rows):
        sets = [set(ps[r]) for ps in lists]
        out.append(sum(1 for p in sets[0] if all(p + i in s for i, s in enumerate(sets))))
    return out


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_in_order_counts_match_brute_force(rows, terms, data):
    lists = [[sorted(data.draw(st.sets(st.integers(0, 12), max_size=6))) for _ in range(rows)]
             for _ in range(terms)]
    arrays = [(A([p for row in t for p in row], dtype=np.int64),
               A([len(row) for row in t], dtype=np.int64)) for t in lists]
    assert in_order_counts(arrays, rows).tolist() == _naive_in_order(lists, rows)


def test_common_phrase_bonus_by_hand():
    # two phrases: row 0 holds both, row 1 one, row 2 none -> bonus * 1, 1/2, 0
    got = common_phrase_bonus(2.0, [A([1, 0, 0]), A([3, 2, 0])], 3)
    assert got.tolist() == [2.0, 1.0, 0.0]
    assert common_phrase_bonus(2.0, [], 3).tolist() == [0.0, 0.0, 0.0]
    assert common_phrase_bonus(0.0, [A([1, 1, 1])], 3).tolist() == [0.0, 0.0, 0.0]
