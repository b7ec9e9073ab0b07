"""The record codec's column-wise fast path: whole tables packed and unpacked with numpy.

Layer: ``indexer.core``. Used for the tables whose signature is one BLOB column, then INT
columns, then (optionally) a repeated group of INTs: documents/partition_N.ix
(:mod:`indexer.core.documents.store`), last_entries (:mod:`indexer.core.partition.build`) and the
dictionary's B+-tree nodes (:mod:`indexer.core.dictionary.tree`); :mod:`indexer.core.partition.doc_map` uses
:func:`size_codes` and :func:`terminate_records` for its position/score lists.

The bytes are exactly those of :meth:`~indexer.core.files.packed_table.PackedTableTool.pack` record
after record (the format is documented in :mod:`indexer.core.files.packed_table`);
:func:`unpack_columns` re-encodes what it decoded and compares, so any damage falls back to the
record-by-record decoder, which names the record and the problem.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .packed_table import SEPARATOR, ColumnType, PackedTableTool, escape

_COLUMN_CACHE: dict[int, bool] = {}


def _columnar(tool: PackedTableTool) -> bool:
    key = id(tool)
    ok = _COLUMN_CACHE.get(key)
    if ok is None:
        cols = tool.columns
        ok = (bool(cols) and cols[0].type is ColumnType.BLOB
              and all(c.type is ColumnType.INT for c in cols[1:])
              and all(c.type is ColumnType.INT for c in tool.repeat))
        _COLUMN_CACHE[key] = ok
    return ok


def size_codes(values: np.ndarray) -> np.ndarray:
    """The 2-bit size code of every value (0: 1 byte, 1: 2, 2: 4, 3: 8 bytes)."""
    magnitude = values ^ (values >> 63)  # v for v >= 0, -v - 1 below: one bound per size
    codes = (magnitude >= 0x80).astype(np.int64)
    codes += magnitude >= 0x8000
    codes += magnitude >= 0x80000000
    return codes


def pack_columns(tool: PackedTableTool, keys: Sequence[bytes], ints: np.ndarray,
                 counts: np.ndarray | None = None, rep: np.ndarray | None = None,
                 record_ends: bool = False) -> Any:
    """``b"".join(tool.pack((keys[i], *ints[i]), rows_i))`` computed column-wise, where the
    rows of record ``i`` are the next ``counts[i]`` rows of ``rep``. With ``record_ends``,
    returns ``(bytes, end offset of each record)``."""
    if not _columnar(tool):
        raise ValueError("signature is not BLOB + INT columns")
    n = len(keys)
    if n == 0:
        return (b"", np.zeros(0, dtype=np.int64)) if record_ends else b""
    k = len(tool.columns) - 1
    r = len(tool.repeat)
    ints = np.asarray(ints, dtype=np.int64).reshape(n, k)
    if r:
        counts = np.zeros(n, dtype=np.int64) if counts is None else np.asarray(counts, np.int64)
        rep = np.asarray(rep, dtype=np.int64).reshape(-1, r) if rep is not None \
            else np.zeros((0, r), dtype=np.int64)
        if int(counts.max()) >= 1 << 14:  # a count of three varint bytes: record by record
            data, ends = _pack_one_by_one(tool, keys, ints, counts, rep)
            return (data, ends) if record_ends else data
    else:
        counts = np.zeros(n, dtype=np.int64)
        rep = np.zeros((0, 0), dtype=np.int64)
    klen = np.fromiter(map(len, keys), dtype=np.int64, count=n)
    layout = _Layout(klen, ints, counts, rep, r)
    out = layout.heads(counts, r)
    layout.write_values(out)
    _write_keys(out, keys, klen, layout.body_start + layout.sizes[layout.int_start])
    data, ends = terminate_records(out, layout.length, layout.rec_start)
    return (data, ends) if record_ends else data


def _pack_one_by_one(tool: PackedTableTool, keys: Sequence[bytes], ints: np.ndarray,
                     counts: np.ndarray, rep: np.ndarray) -> tuple[bytes, np.ndarray]:
    """:func:`pack_columns` through ``tool.pack``, record after record."""
    starts = np.concatenate([[0], np.cumsum(counts)])
    records = [tool.pack((keys[i], *ints[i].tolist()),
                         [tuple(row) for row in rep[starts[i]:starts[i + 1]].tolist()])
               for i in range(len(keys))]
    return b"".join(records), np.cumsum([len(rec) for rec in records])


class _Layout:
    """Where every integer of a table goes (before escaping). Record ``i`` holds ``m[i]``
    integers: its key's length, its ``k`` INT columns, then ``counts[i]`` rows of ``r``;
    ``values`` holds them all, record after record, ``codes``/``sizes`` their size codes and
    byte sizes; record ``i`` is ``length[i]`` bytes from ``rec_start[i]``: its count varint
    (``vlen``), its preamble (``plen``), then its body from ``body_start[i]``."""

    __slots__ = ("values", "codes", "sizes", "int_start", "rec_of", "j", "vlen", "plen",
                 "klen", "m", "length", "rec_start", "body_start")

    def __init__(self, klen: np.ndarray, ints: np.ndarray, counts: np.ndarray,
                 rep: np.ndarray, r: int) -> None:
        n, k = ints.shape
        m = 1 + k + counts * r
        int_start = np.cumsum(m) - m
        if r and rep.size:
            values = np.empty(int(m.sum()), dtype=np.int64)
            first_pos = (int_start[:, None] + np.arange(1 + k)[None, :]).ravel()
            values[first_pos] = np.column_stack([klen, ints]).ravel()
            rep_counts = counts * r
            rep_pos = np.repeat(int_start + 1 + k, rep_counts) + (
                np.arange(int(rep_counts.sum())) - np.repeat(np.cumsum(rep_counts) - rep_counts,
                                                             rep_counts))
            values[rep_pos] = rep.ravel()
            self.rec_of = np.repeat(np.arange(n), m)
            self.j = np.arange(values.size) - int_start[self.rec_of]  # index within its record
        else:  # no repeated rows: every record holds 1 + k integers, a table of n rows
            values = np.column_stack([klen, ints]).ravel()
            self.rec_of = np.repeat(np.arange(n), 1 + k)
            self.j = np.tile(np.arange(1 + k), n)
        self.values, self.int_start, self.klen, self.m = values, int_start, klen, m
        self.codes = size_codes(values)
        self.sizes = np.left_shift(1, self.codes)
        self.vlen = (np.where(counts < 128, 1, 2) if r else np.zeros(n, dtype=np.int64))
        self.plen = (2 * m + 7) // 8
        self.length = self.vlen + self.plen + np.add.reduceat(self.sizes, int_start) + klen
        self.rec_start = np.cumsum(self.length) - self.length
        self.body_start = self.rec_start + self.vlen + self.plen

    def heads(self, counts: np.ndarray, r: int) -> np.ndarray:
        """The table's bytes with every record's preamble (2-bit size codes) and, when the
        signature repeats, its count varint (one or two bytes) written; zeros elsewhere."""
        out = np.zeros(int(self.length.sum()), dtype=np.uint8)
        # four codes a byte: each record's codes in slots padded to a whole number of bytes
        pre_start = np.cumsum(self.plen) - self.plen
        slots = np.zeros(4 * int(self.plen.sum()), dtype=np.uint8)
        slots[4 * pre_start[self.rec_of] + self.j] = self.codes
        quads = slots.reshape(-1, 4)
        preamble = (quads[:, 0] << 6) | (quads[:, 1] << 4) | (quads[:, 2] << 2) | quads[:, 3]
        first = self.rec_start + self.vlen
        out[np.repeat(first - pre_start, self.plen) + np.arange(preamble.size)] = preamble
        if r:
            rec_start = self.rec_start
            one = self.vlen == 1
            out[rec_start[one]] = counts[one]
            two = ~one
            out[rec_start[two]] = (counts[two] & 0x7F) | 0x80
            out[rec_start[two] + 1] = counts[two] >> 7
        return out

    def write_values(self, out: np.ndarray) -> None:
        """Every integer big-endian in its coded size; the key's bytes follow its length."""
        # records lie back to back: a value's offset is the bytes of the values before it
        # (a key's bytes counted with its length) plus the count varints and preambles of
        # the records up to its own
        taken = self.sizes.copy()
        taken[self.int_start] += self.klen
        pos = np.cumsum(taken)
        pos -= taken
        pos += np.repeat(np.cumsum(self.vlen + self.plen), self.m)
        write_big_endian(out, pos, self.values, self.codes)


def write_big_endian(out: np.ndarray, at: np.ndarray, values: np.ndarray,
                     codes: np.ndarray) -> None:
    """Write each of ``values`` big-endian (two's complement) in ``1 << codes`` bytes (see
    :func:`size_codes`) from ``out[at]``, the values of one size at a time."""
    be = values.astype(">i8").view(np.uint8).reshape(-1, 8)
    for code, size in enumerate((1, 2, 4, 8)):
        sel = np.flatnonzero(codes == code)
        if sel.size:
            out[at[sel][:, None] + np.arange(size)] = be[sel, 8 - size:]


def _write_keys(out: np.ndarray, keys: Sequence[bytes], klen: np.ndarray,
                key_dest: np.ndarray) -> None:
    """The keys' bytes, each at ``key_dest`` of its record."""
    key_bytes = b"".join(keys)
    if key_bytes:
        src = np.frombuffer(key_bytes, dtype=np.uint8)
        src_start = np.cumsum(klen) - klen
        out[np.repeat(key_dest - src_start, klen) + np.arange(src.size)] = src


def terminate_records(out: np.ndarray, length: np.ndarray, rec_start: np.ndarray
                      ) -> tuple[bytes, np.ndarray]:
    """Unescaped records laid end to end in ``out`` (record i: ``length[i]`` bytes from
    ``rec_start[i]``), escaped and each followed by the 0xFF separator; also the offset just
    past each separator."""
    special = (out >= 0xFE).astype(np.int64)
    esc_len = length + np.add.reduceat(special, rec_start)
    escaped = np.frombuffer(escape(out.tobytes()), dtype=np.uint8)
    final = np.empty(escaped.size + length.size, dtype=np.uint8)
    seps = np.cumsum(esc_len + 1) - 1
    mask = np.ones(final.size, dtype=bool)
    mask[seps] = False
    final[mask] = escaped
    final[seps] = 0xFF
    return final.tobytes(), seps + 1


def unpack_columns(tool: PackedTableTool, data: bytes
                   ) -> tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of :func:`pack_columns`: ``(keys, ints (n x k), counts, rep (rows x r))``.

    Raises :class:`RecordFormatError` (from the record-by-record decoder) on damaged data."""
    if not _columnar(tool):
        raise ValueError("signature is not BLOB + INT columns")
    k = len(tool.columns) - 1
    r = len(tool.repeat)
    try:
        result = _unpack_columns_fast(tool, data, k, r)
    except (IndexError, ValueError):
        result = None
    if result is not None and pack_columns(tool, *result) == data:
        return result
    records = tool.unpack_many(data)  # raises with the record's problem
    keys = [values[0] for values, _ in records]
    ints = np.array([values[1:] for values, _ in records], dtype=np.int64).reshape(len(records),
                                                                                   k)
    counts = np.array([len(rows) for _, rows in records], dtype=np.int64)
    rep = np.array([row for _, rows in records for row in rows],
                   dtype=np.int64).reshape(-1, r) if r else np.zeros((0, 0), dtype=np.int64)
    return keys, ints, counts, rep


def _unpack_columns_fast(tool: PackedTableTool, data: bytes, k: int, r: int
                         ) -> tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray] | None:
    if not data:
        return [], np.zeros((0, k), np.int64), np.zeros(0, np.int64), np.zeros((0, r), np.int64)
    if data[-1] != SEPARATOR:
        return None
    rarr, length = unescaped_records(data)
    n = length.size
    if int(length.min()) < 1:
        return None
    rec_start = np.cumsum(length) - length
    if r:
        b0 = rarr[rec_start].astype(np.int64)
        two = (b0 & 0x80) != 0
        b1 = rarr[np.minimum(rec_start + 1, rarr.size - 1)].astype(np.int64)
        if np.any(two & ((b1 & 0x80) != 0)):
            return None
        counts = np.where(two, (b0 & 0x7F) | (b1 << 7), b0)
        vlen = np.where(two, 2, 1)
    else:
        counts = np.zeros(n, dtype=np.int64)
        vlen = np.zeros(n, dtype=np.int64)
    m = 1 + k + counts * r
    plen = (2 * m + 7) // 8
    int_start = np.cumsum(m) - m
    total_ints = int(m.sum())
    rec_of = np.repeat(np.arange(n), m)
    j = np.arange(total_ints) - int_start[rec_of]
    preamble = rarr[(rec_start + vlen)[rec_of] + (j >> 2)].astype(np.int64)
    codes = (preamble >> (6 - 2 * (j & 3))) & 3
    sizes = np.left_shift(1, codes)
    body_start = rec_start + vlen + plen
    size_cum = np.cumsum(sizes)
    within = size_cum - sizes - (size_cum - sizes)[int_start][rec_of]

    def read(pos: np.ndarray, size: np.ndarray) -> np.ndarray:
        value = np.empty(pos.size, dtype=np.int64)
        for width, dtype in ((1, ">i1"), (2, ">i2"), (4, ">i4"), (8, ">i8")):
            sel = np.flatnonzero(size == width)
            if sel.size:
                idx = pos[sel][:, None] + np.arange(width)[None, :]
                value[sel] = np.ascontiguousarray(rarr[idx]).view(dtype).ravel()
        return value

    klen = read(body_start + within[int_start], sizes[int_start])
    if int(klen.min()) < 0:
        return None
    pos = body_start[rec_of] + within + np.where(j >= 1, klen[rec_of], 0)
    values = read(pos, sizes)
    end = body_start + np.add.reduceat(sizes, int_start) + klen
    if np.any(end != rec_start + length):
        return None
    keys = _cut_keys(rarr, body_start + sizes[int_start], klen)
    first_pos = (int_start[:, None] + np.arange(1, 1 + k)[None, :]).ravel()
    ints = values[first_pos].reshape(n, k)
    if r:
        rep_counts = counts * r
        rep_pos = np.repeat(int_start + 1 + k, rep_counts) + (
            np.arange(int(rep_counts.sum())) - np.repeat(np.cumsum(rep_counts) - rep_counts,
                                                         rep_counts))
        rep = values[rep_pos].reshape(-1, r)
    else:
        rep = np.zeros((0, 0), dtype=np.int64)
    return keys, ints, counts, rep


def unescaped_records(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The records of ``data`` (escaped, each followed by the separator) unescaped and laid
    end to end, and each one's length, with array operations over the whole table: an
    escape pair starts at every 0xFE at an even offset in its run of 0xFE bytes (pairs are
    aligned from the left). Invalid escapes decode to something :func:`unpack_columns`'
    re-encoding check refuses."""
    arr = np.frombuffer(data, dtype=np.uint8)
    keep = arr != SEPARATOR
    seps = np.flatnonzero(~keep)
    fe = np.flatnonzero(arr == 0xFE)
    if fe.size:
        arr = arr.copy()
        new_run = np.ones(fe.size, dtype=bool)
        new_run[1:] = fe[1:] != fe[:-1] + 1
        run_first = fe[new_run][np.cumsum(new_run) - 1]
        pair = fe[((fe - run_first) & 1) == 0]
        arr[pair] = np.where(arr[pair + 1] == 0xFE, 0xFF, 0xFE)
        keep[pair + 1] = False
    kept_before = np.cumsum(keep)[seps]
    return arr[keep], np.diff(kept_before, prepend=0)


def _cut_keys(rarr: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> list[bytes]:
    """``rarr[starts[i]:starts[i] + lengths[i]]`` as bytes for every ``i``: the keys of the
    most common length (term_ids: 16 bytes unless a term starts with non-ASCII characters)
    are cut as one array, the others one by one."""
    n = starts.size
    if not n:
        return []
    common = int(np.bincount(lengths).argmax())
    if common == 0:
        keys = [b""] * n
    else:
        index = np.minimum(starts[:, None] + np.arange(common), rarr.size - 1)
        keys = rarr[index].view(f"V{common}").ravel().tolist()
    odd = np.flatnonzero(lengths != common)
    if odd.size:
        raw = rarr.tobytes()
        for i, a, b in zip(odd.tolist(), starts[odd].tolist(),
                           (starts + lengths)[odd].tolist(), strict=True):
            keys[i] = raw[a:b]
    return keys
