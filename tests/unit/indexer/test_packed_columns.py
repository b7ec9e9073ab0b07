"""The column-wise fast path (indexer.core.files.packed_columns) writes exactly the record codec's
bytes and hands damaged tables to the record-by-record decoder, which names the problem."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.files.packed_columns import _unpack_columns_fast, pack_columns, unpack_columns
from indexer.core.files.packed_table import PackedTableTool, RecordFormatError

INTS = st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1)

COLUMN_TOOL = PackedTableTool.of("key:BLOB a:INT b:INT", repeat="p:INT q:INT")
TABLE_TOOL = PackedTableTool.of("key:BLOB a:INT b:INT c:INT")  # no repeated group
# bytes and values that the escaping rewrites (0xFE, 0xFF) or that sit next to them
ESCAPY = st.binary(max_size=20) | st.lists(st.sampled_from([0xFD, 0xFE, 0xFF, 0x00]),
                                           max_size=12).map(bytes)
ESCAPY_INTS = INTS | st.sampled_from([0xFE, 0xFF, 0xFEFF, 0xFFFE, -1, -2, 0xFDFE, 2 ** 40 - 2])


@given(st.lists(st.tuples(st.binary(max_size=20), INTS, INTS,
                          st.lists(st.tuples(INTS, INTS), max_size=4)), max_size=40))
@settings(max_examples=100)
def test_column_wise_codec_matches_record_codec(rows) -> None:
    keys = [r[0] for r in rows]
    ints = np.array([[r[1], r[2]] for r in rows], dtype=np.int64).reshape(len(rows), 2)
    counts = np.array([len(r[3]) for r in rows], dtype=np.int64)
    rep = np.array([x for r in rows for x in r[3]], dtype=np.int64).reshape(-1, 2)
    expected = b"".join(COLUMN_TOOL.pack((r[0], r[1], r[2]), r[3]) for r in rows)
    data = pack_columns(COLUMN_TOOL, keys, ints, counts, rep)
    assert data == expected
    got_keys, got_ints, got_counts, got_rep = unpack_columns(COLUMN_TOOL, data)
    assert got_keys == keys
    assert got_ints.tolist() == ints.tolist() and got_counts.tolist() == counts.tolist()
    assert got_rep.tolist() == rep.tolist()


def test_column_wise_decoder_reports_damage() -> None:
    data = pack_columns(COLUMN_TOOL, [b"abc"], np.array([[1, 2]]), np.array([1]),
                        np.array([[3, 4]]))
    with pytest.raises(RecordFormatError):
        unpack_columns(COLUMN_TOOL, data[:-3] + b"\xff")


@given(st.lists(st.tuples(ESCAPY, ESCAPY_INTS, ESCAPY_INTS, ESCAPY_INTS), max_size=40))
@settings(max_examples=150)
def test_table_without_repeats_round_trips_on_the_fast_path(rows) -> None:
    """Tables of one BLOB and INT columns only (last_entries) take the column-wise path both
    ways: the record codec's bytes, decoded (escapes and keys of mixed lengths included)
    without falling back to the record-by-record decoder."""
    keys = [r[0] for r in rows]
    ints = np.array([r[1:] for r in rows], dtype=np.int64).reshape(len(rows), 3)
    data = pack_columns(TABLE_TOOL, keys, ints)
    assert data == b"".join(TABLE_TOOL.pack(r, []) for r in rows)
    fast = _unpack_columns_fast(TABLE_TOOL, data, 3, 0)
    assert fast is not None
    assert fast[0] == keys and fast[1].tolist() == ints.tolist()
    assert unpack_columns(TABLE_TOOL, data)[0] == keys


def test_fast_decoder_refuses_a_bad_escape() -> None:
    """0xFE followed by anything but 0xFD or 0xFE is no escape: the record decoder names it."""
    data = pack_columns(TABLE_TOOL, [b"k"], np.array([[1, 2, 3]]))
    with pytest.raises(RecordFormatError):
        unpack_columns(TABLE_TOOL, data[:-2] + b"\xfe\x01\xff")
