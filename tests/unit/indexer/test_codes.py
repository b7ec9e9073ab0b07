from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.files.codes import BitReader, choose_rice_k, gamma_width, pack_fields, to_bits
from indexer.core.partition.positions import decode_positions, encode_positions


@given(st.lists(st.integers(min_value=1, max_value=2 ** 40), min_size=1, max_size=200))
@settings(max_examples=100)
def test_gamma_round_trip(values: list[int]) -> None:
    arr = np.array(values, dtype=np.int64)
    widths = gamma_width(arr)
    assert list(widths) == [2 * (v.bit_length() - 1) + 1 for v in values]
    starts = np.cumsum(widths) - widths
    data = pack_fields(starts, arr, widths, int(widths.sum()))
    reader = BitReader(data, 0)
    assert [reader.gamma() for _ in values] == values


@given(st.lists(st.integers(min_value=0, max_value=5000), min_size=1, max_size=200),
       st.integers(min_value=0, max_value=12))
@settings(max_examples=100)
def test_rice_round_trip(values: list[int], k: int) -> None:
    arr = np.array(values, dtype=np.int64)
    q = arr >> k
    fields_v, fields_w = [], []
    for v, qq in zip(values, q.tolist(), strict=True):
        fields_v += [1, v & ((1 << k) - 1)]
        fields_w += [qq + 1, k]
    widths = np.array(fields_w, dtype=np.int64)
    starts = np.cumsum(widths) - widths
    data = pack_fields(starts, np.array(fields_v), widths, int(widths.sum()))
    bits = to_bits(data, 0, len(data))
    out = []
    pos = 0
    for _ in values:
        zeros = 0
        while bits[pos + zeros] == 0:
            zeros += 1
        pos += zeros + 1
        r = BitReader(data, pos).bits(k)
        pos += k
        out.append((zeros << k) | r)
    assert out == values


def test_rice_parameter_minimises_size() -> None:
    values = np.array([0, 1, 2, 100, 120, 90, 7, 7, 7], dtype=np.int64)
    group = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2], dtype=np.int64)
    k = choose_rice_k(values, group, 4)
    for g in range(3):
        vals = values[group == g]
        costs = [int(((vals >> kk) + kk + 1).sum()) for kk in range(12)]
        assert costs[int(k[g])] == min(costs)
    assert k[3] == 0


position_lists = st.lists(
    st.lists(st.integers(min_value=0, max_value=3000), max_size=40, unique=True)
    .map(sorted), min_size=1, max_size=60)


@given(position_lists, st.integers(min_value=1, max_value=4))
@settings(max_examples=100)
def test_positions_round_trip(entries: list[list[int]], nlists: int) -> None:
    counts = np.array([len(e) for e in entries], dtype=np.int64)
    flat = np.array([p for e in entries for p in e], dtype=np.int64)
    entry_list = np.sort(np.arange(len(entries)) % nlists)
    nlists = int(entry_list.max()) + 1
    data, entry_bits, k, total = encode_positions(flat, counts, entry_list, nlists)
    assert total == int(entry_bits.sum())
    starts = np.cumsum(entry_bits) - entry_bits
    for lst in range(nlists):
        sel = np.flatnonzero(entry_list == lst)
        pos, got_counts = decode_positions(data, starts[sel], counts[sel], entry_bits[sel],
                                           int(k[lst]))
        expected = [p for i in sel for p in entries[i]]
        assert pos.tolist() == expected
        assert got_counts.tolist() == counts[sel].tolist()
