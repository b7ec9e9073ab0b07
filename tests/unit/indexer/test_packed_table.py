from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.files.packed_table import (
    PackedTableTool,
    RecordFormatError,
    escape,
    split_records,
    unescape,
)

TOOL = PackedTableTool.of("key:BLOB n:INT x:FLOAT flag:BOOL name:TEXT other:BOOL",
                          repeat="p:INT w:FLOAT")
INTS = st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1)
FLOATS = st.floats(allow_nan=False)


def test_every_byte_value_is_escaped_and_restored() -> None:
    raw = bytes(range(256)) * 3
    escaped = escape(raw)
    assert 0xFF not in escaped
    assert unescape(escaped) == raw
    assert escape(b"\xff") == b"\xfe\xfe" and escape(b"\xfe") == b"\xfe\xfd"


@given(st.binary(max_size=300))
@settings(max_examples=200)
def test_escape_round_trip(raw: bytes) -> None:
    assert 0xFF not in escape(raw)
    assert unescape(escape(raw)) == raw


@given(st.binary(max_size=64), INTS, FLOATS, st.booleans(), st.text(max_size=20), st.booleans(),
       st.lists(st.tuples(INTS, FLOATS), max_size=20))
@settings(max_examples=200)
def test_record_round_trip(key: bytes, n: int, x: float, flag: bool, name: str, other: bool,
                           rows: list[tuple[int, float]]) -> None:
    record = TOOL.pack((key, n, x, flag, name, other), rows)
    assert record[-1] == 0xFF and 0xFF not in record[:-1]
    values, got_rows = TOOL.unpack(record[:-1])
    assert values == (key, n, x, flag, name, other)
    assert got_rows == [tuple(r) for r in rows]


@given(st.lists(st.tuples(st.binary(max_size=30), INTS), max_size=30))
@settings(max_examples=100)
def test_many_records_split_on_separator(rows: list[tuple[bytes, int]]) -> None:
    tool = PackedTableTool.of("k:BLOB v:INT")
    data = tool.pack_many(rows)
    assert [values for values, _ in tool.unpack_many(data)] == rows
    assert len(split_records(data)) == len(rows)


def test_int_sizes_use_two_bit_codes() -> None:
    tool = PackedTableTool.of("a:INT b:INT c:INT d:INT")
    record = tool.pack((1, 300, 70000, 2 ** 40))
    # preamble: codes 00 01 10 11 -> one byte 0b00011011, then 1 + 2 + 4 + 8 bytes
    assert unescape(record[:-1])[0] == 0b00011011
    assert len(unescape(record[:-1])) == 1 + 1 + 2 + 4 + 8


@pytest.mark.parametrize("bad", [b"", b"\x00", b"\xfe", b"\xfe\x01", b"\x00" * 40])
def test_malformed_records_raise(bad: bytes) -> None:
    with pytest.raises(RecordFormatError):
        TOOL.unpack(bad)


def test_out_of_range_int_rejected() -> None:
    with pytest.raises(OverflowError):
        PackedTableTool.of("a:INT").pack((2 ** 63,))
