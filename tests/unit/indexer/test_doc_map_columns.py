"""Every position_score_list of a doc_map decoded at once (DocMap.position_score_columns) is what
decoding entry by entry gives; bytes that are not pack_psl's give None (the caller then decodes
entry by entry, which names the damaged entry)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.partition.doc_map import (
    DocMap,
    DocMapEntry,
    DocMapFormatError,
    MemberRow,
    encode_doc_map,
)

ints = st.one_of(st.integers(-1, 300), st.integers(-(2 ** 40), 2 ** 40),
                 st.sampled_from([0xFE, 0xFF, 0xFEFF, 0xFFFF, 0xFFFE, 2 ** 31, -1]))
floats = st.floats(allow_nan=False)
entry = st.tuples(st.lists(st.tuples(ints, floats), max_size=6),
                  st.lists(floats, max_size=3), st.integers(0, 2 ** 31), floats)


def doc_map(items) -> DocMap:
    entries = [DocMapEntry(bytes([i % 256]) * 24, i, score, 10, tuple(regions), tuple(cls))
               for i, (regions, cls, _, score) in enumerate(items)]
    members = [MemberRow(e.doc_id, i, 0, 0, 0, 0) for i, e in enumerate(entries)]
    return DocMap(encode_doc_map(entries, members))


def by_entry(dm: DocMap):
    decoded = [dm.position_score_list(i) for i in range(dm.n)]
    return ([k for k, _ in decoded], [len(rows) for _, rows in decoded],
            [p for _, rows in decoded for p, _ in rows],
            [w for _, rows in decoded for _, w in rows])


def assert_columns(dm: DocMap) -> None:
    got = dm.position_score_columns()
    assert got is not None
    nregions, nrows, pos, score = by_entry(dm)
    assert got.nregions.tolist() == nregions and got.nrows.tolist() == nrows
    assert got.position.tolist() == pos
    assert got.score.view(np.int64).tolist() == np.array(score).view(np.int64).tolist()


@given(st.lists(entry, max_size=12))
@settings(max_examples=150, deadline=None)
def test_columns_are_the_entries(items) -> None:
    assert_columns(doc_map(items))


def test_long_lists_and_escaped_bytes() -> None:
    """Row counts of two and three varint bytes, values and scores holding 0xFE and 0xFF
    (escaped in the blob)."""
    items = [([(i, 0.5) for i in range(n)], [], 0, 1.0) for n in (126, 127, 128, 16383, 16384)]
    items += [([(0xFEFF, float.fromhex("0x1.fefefefefefefp+1")), (-1, -2.5)], [0.25, 1e300],
               0, 0.0)] * 30
    assert_columns(doc_map(items))


def test_damaged_blob_gives_none_and_the_entry_decode_names_it() -> None:
    dm = doc_map([([(3, 1.0)], [0.5], 0, 1.0), ([(9, 2.0), (12, 1.0)], [], 0, 1.0)])
    blob = bytearray(dm._blob)
    blob[0] = 0x7E  # the first entry's row count: 126 rows it does not have
    dm._blob = bytes(blob)
    assert dm.position_score_columns() is None
    with pytest.raises(DocMapFormatError):
        by_entry(dm)
