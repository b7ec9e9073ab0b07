"""TermPositions, the analyzer's terms with positions in arrays: the same mapping as the dict
of tuples it replaces, whatever the terms (property tests), through a plugin's merge, a pickle
and the index encoders' gathering of mixed documents."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from indexer.core.documents.doc_index import gathered_positions
from indexer.core.text import TermPositions

terms_lists = st.lists(st.sampled_from(["a", "b", "cc", "d", "é", "the", "x1"]), max_size=60)


def reference(flat: list[str], start: int = 0) -> dict[str, tuple[int, ...]]:
    grouped: dict[str, list[int]] = {}
    for offset, term in enumerate(flat):
        grouped.setdefault(term, []).append(start + offset)
    return {term: tuple(at) for term, at in grouped.items()}


@given(terms_lists, st.integers(0, 1000))
def test_grouped_is_the_dict_of_tuples(flat: list[str], start: int) -> None:
    got = TermPositions.grouped(flat, start)
    expected = reference(flat, start)
    assert got == expected
    assert list(got) == list(expected)  # first occurrence order
    assert got.items() == list(expected.items())
    assert all(got[term] == at for term, at in expected.items())
    assert len(got) == len(expected) and ("zz" in got) is False
    assert got.counts.dtype == np.int64 and got.positions.dtype == np.int64
    assert TermPositions.of(expected) == got and TermPositions.of(got) is got


@given(terms_lists, terms_lists)
def test_followed_by_is_a_merge_after_the_page(first: list[str], later: list[str]) -> None:
    page = TermPositions.grouped(first)
    merged = page.followed_by(TermPositions.grouped(later, len(first)))
    expected = reference(first + later)
    assert merged == expected
    assert list(merged) == list(expected)
    assert merged.positions.tolist() == [p for at in expected.values() for p in at]


@given(terms_lists)
def test_pickle_keeps_it(flat: list[str]) -> None:
    got = TermPositions.grouped(flat, 3)
    again = pickle.loads(pickle.dumps(got))
    assert isinstance(again, TermPositions) and again == got


def test_gathered_positions_of_mixed_documents() -> None:
    page = TermPositions.grouped(["a", "b", "a"])
    links = [{"x": (0,), "y": (1, 2)}, {"z": (0,)}]
    other = TermPositions.grouped(["q"], 5)
    counts, positions = gathered_positions([links[0], page, *links[1:], other])
    assert counts.tolist() == [1, 2, 2, 1, 1, 1]
    assert positions.tolist() == [0, 1, 2, 0, 2, 1, 0, 5]
    empty_counts, empty_positions = gathered_positions([])
    assert empty_counts.size == 0 and empty_positions.size == 0
