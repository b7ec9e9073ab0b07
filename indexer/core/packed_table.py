"""The record codec (the seed's PackedTableTool): typed columns, a size preamble, 0xFF separators.

Layer: ``indexer.core``. Used for documents/partition_N.ix records, the doc_map's
position/score lists, last_entries and the dictionary's B+-tree nodes.

A *signature* is an ordered tuple of columns, each ``INT``, ``FLOAT``, ``BOOL``, ``TEXT`` or
``BLOB``, optionally followed by a *repeated group* of ``INT``/``FLOAT`` columns that occurs zero
or more times (a term's list of per-partition records, a document's (position, weight) pairs).

Record layout, before escaping::

    [count]      varint (7 bits a byte, high bit = more), only when the signature repeats
    [preamble]   2-bit size codes, most significant bits first, for every INT value, every
                 TEXT/BLOB length and every INT of the repeated group, in column order:
                 00 = 1 byte, 01 = 2 bytes, 10 = 4 bytes, 11 = 8 bytes; then one bit per BOOL
                 column; zero padded to a whole byte
    [body]       INTs big-endian two's complement in the coded size; FLOATs 8-byte IEEE
                 big-endian; TEXT (UTF-8) and BLOB as their coded length then their bytes;
                 then the repeated group's values, row after row

Escaping: inside a record 0xFE is written 0xFE 0xFD and 0xFF is written 0xFE 0xFE, so 0xFF never
occurs and terminates each record. A file of records is therefore ``record 0xFF record 0xFF ...``
and a reader can always resynchronise at the next 0xFF.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

SEPARATOR = 0xFF
_SEP = b"\xff"
_SIZES = (1, 2, 4, 8)
_DOUBLE = struct.Struct(">d")


class ColumnType(StrEnum):
    INT = "INT"
    FLOAT = "FLOAT"
    BOOL = "BOOL"
    TEXT = "TEXT"
    BLOB = "BLOB"


class RecordFormatError(ValueError):
    """A record does not decode under its signature (the caller adds the file name)."""


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: ColumnType


def escape(raw: bytes) -> bytes:
    """Remove every 0xFF from ``raw``: 0xFE -> FE FD, 0xFF -> FE FE."""
    return raw.replace(b"\xfe", b"\xfe\xfd").replace(b"\xff", b"\xfe\xfe")


def unescape(data: bytes) -> bytes:
    """Inverse of :func:`escape`. Escape pairs are aligned from the left, so two
    left-to-right ``replace`` passes decode them exactly."""
    if b"\xfe" not in data:
        return data
    out = data.replace(b"\xfe\xfe", b"\xff").replace(b"\xfe\xfd", b"\xfe")
    if escape(out) != data:
        raise RecordFormatError("invalid escape sequence")
    return out


def _size_code(value: int) -> int:
    if -0x80 <= value < 0x80:
        return 0
    if -0x8000 <= value < 0x8000:
        return 1
    if -0x80000000 <= value < 0x80000000:
        return 2
    if -0x8000000000000000 <= value < 0x8000000000000000:
        return 3
    raise OverflowError(f"integer does not fit in 8 bytes: {value}")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


@dataclass(frozen=True, slots=True)
class PackedTableTool:
    """Encode and decode records of one signature. Immutable; share one per file kind."""

    columns: tuple[Column, ...]
    repeat: tuple[Column, ...] = ()

    @classmethod
    def of(cls, spec: str, repeat: str = "") -> PackedTableTool:
        """Build from ``"name:TYPE name:TYPE"`` strings (the form stored in pdb_parameters)."""

        def parse(text: str) -> tuple[Column, ...]:
            cols = []
            for item in text.split():
                name, _, kind = item.partition(":")
                cols.append(Column(name, ColumnType(kind)))
            return tuple(cols)

        tool = cls(parse(spec), parse(repeat))
        for col in tool.repeat:
            if col.type not in (ColumnType.INT, ColumnType.FLOAT):
                raise ValueError("repeated columns must be INT or FLOAT")
        return tool

    def describe(self) -> dict[str, str]:
        return {
            "columns": " ".join(f"{c.name}:{c.type.value}" for c in self.columns),
            "repeat": " ".join(f"{c.name}:{c.type.value}" for c in self.repeat),
        }

    # -- encoding ---------------------------------------------------------------------------

    def pack(self, values: Sequence[Any], rows: Sequence[Sequence[Any]] = ()) -> bytes:
        """One escaped record, terminated by 0xFF. ``rows`` fills the repeated group."""
        if len(values) != len(self.columns):
            raise ValueError(f"expected {len(self.columns)} values, got {len(values)}")
        codes: list[int] = []
        bools: list[bool] = []
        body = bytearray()
        head = b""
        if self.repeat:
            head = _varint(len(rows))
        elif rows:
            raise ValueError("signature has no repeated group")
        for col, value in zip(self.columns, values, strict=True):
            kind = col.type
            if kind is ColumnType.INT:
                code = _size_code(value)
                codes.append(code)
                body += value.to_bytes(_SIZES[code], "big", signed=True)
            elif kind is ColumnType.FLOAT:
                body += _DOUBLE.pack(value)
            elif kind is ColumnType.BOOL:
                bools.append(bool(value))
            else:
                raw = value.encode("utf-8") if kind is ColumnType.TEXT else bytes(value)
                code = _size_code(len(raw))
                codes.append(code)
                body += len(raw).to_bytes(_SIZES[code], "big", signed=True)
                body += raw
        for row in rows:
            for col, value in zip(self.repeat, row, strict=True):
                if col.type is ColumnType.INT:
                    code = _size_code(value)
                    codes.append(code)
                    body += value.to_bytes(_SIZES[code], "big", signed=True)
                else:
                    body += _DOUBLE.pack(value)
        bits = 0
        nbits = 0
        for code in codes:
            bits = (bits << 2) | code
            nbits += 2
        for flag in bools:
            bits = (bits << 1) | flag
            nbits += 1
        pad = -nbits % 8
        preamble = (bits << pad).to_bytes((nbits + pad) // 8, "big") if nbits else b""
        return escape(head + preamble + bytes(body)) + _SEP

    def pack_many(self, records: Iterable[Sequence[Any]]) -> bytes:
        return b"".join(self.pack(r) for r in records)

    # -- decoding ---------------------------------------------------------------------------

    def unpack(self, record: bytes) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
        """Decode one escaped record *without* its 0xFF terminator.

        Returns ``(values, rows)``; ``rows`` is empty when the signature does not repeat.
        Raises :class:`RecordFormatError` on any inconsistency.
        """
        raw = unescape(record)
        pos = 0
        count = 0
        try:
            if self.repeat:
                shift = 0
                while True:
                    byte = raw[pos]
                    pos += 1
                    count |= (byte & 0x7F) << shift
                    shift += 7
                    if not byte & 0x80:
                        break
                    if shift > 63:
                        raise RecordFormatError("repeat count too long")
            ncodes = 0
            nbools = 0
            for col in self.columns:
                if col.type is ColumnType.BOOL:
                    nbools += 1
                elif col.type is not ColumnType.FLOAT:
                    ncodes += 1
            rep_ints = sum(1 for c in self.repeat if c.type is ColumnType.INT)
            ncodes += rep_ints * count
            nbits = 2 * ncodes + nbools
            plen = (nbits + 7) // 8
            if pos + plen > len(raw):
                raise RecordFormatError("record shorter than its preamble")
            bits = int.from_bytes(raw[pos:pos + plen], "big")
            pos += plen
            bits_left = plen * 8
            values: list[Any] = []
            data = raw

            def take(size: int) -> bytes:
                nonlocal pos
                end = pos + size
                if end > len(data):
                    raise RecordFormatError("record body truncated")
                chunk = data[pos:end]
                pos = end
                return chunk

            def next_code() -> int:
                nonlocal bits_left
                bits_left -= 2
                return (bits >> bits_left) & 3

            bool_cols = []
            for col in self.columns:
                kind = col.type
                if kind is ColumnType.INT:
                    values.append(int.from_bytes(take(_SIZES[next_code()]), "big", signed=True))
                elif kind is ColumnType.FLOAT:
                    values.append(_DOUBLE.unpack(take(8))[0])
                elif kind is ColumnType.BOOL:
                    bool_cols.append(len(values))
                    values.append(False)
                else:
                    length = int.from_bytes(take(_SIZES[next_code()]), "big", signed=True)
                    if length < 0:
                        raise RecordFormatError("negative length")
                    chunk = take(length)
                    values.append(chunk.decode("utf-8") if kind is ColumnType.TEXT else chunk)
            rows: list[tuple[Any, ...]] = []
            for _ in range(count):
                row = []
                for col in self.repeat:
                    if col.type is ColumnType.INT:
                        row.append(int.from_bytes(take(_SIZES[next_code()]), "big",
                                                  signed=True))
                    else:
                        row.append(_DOUBLE.unpack(take(8))[0])
                rows.append(tuple(row))
            for index in bool_cols:
                bits_left -= 1
                values[index] = bool((bits >> bits_left) & 1)
            if bits & ((1 << bits_left) - 1):
                raise RecordFormatError("non-zero preamble padding")
            if pos != len(raw):
                raise RecordFormatError(f"{len(raw) - pos} stray bytes after the record")
        except IndexError as exc:
            raise RecordFormatError("record truncated") from exc
        except UnicodeDecodeError as exc:
            raise RecordFormatError("TEXT column is not UTF-8") from exc
        return tuple(values), rows

    def unpack_many(self, data: bytes) -> list[tuple[tuple[Any, ...], list[tuple[Any, ...]]]]:
        """Decode a concatenation of records (each terminated by 0xFF)."""
        if not data:
            return []
        if data[-1] != SEPARATOR:
            raise RecordFormatError("last record is not terminated")
        return [self.unpack(part) for part in data[:-1].split(_SEP)]


def split_records(data: bytes) -> list[bytes]:
    """The escaped records of ``data`` without their terminators (trailing partial dropped)."""
    parts = data.split(_SEP)
    parts.pop()  # the bytes after the last separator: empty, or an unterminated partial record
    return parts


# -- column-wise fast path ----------------------------------------------------------------------
#
# Tables whose signature is one BLOB column, then INT columns, then (optionally) a repeated
# group of INTs - the .ix index, last_entries and the dictionary's nodes - are packed and
# unpacked here with numpy, a whole table at a time. The bytes are exactly those of ``pack``;
# ``unpack_columns`` re-encodes what it decoded and compares, so any damage falls back to the
# record-by-record decoder, which names the record and the problem.

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


def _codes(values: np.ndarray) -> np.ndarray:
    codes = np.full(values.shape, 3, dtype=np.int64)
    codes[(values >= -0x80000000) & (values < 0x80000000)] = 2
    codes[(values >= -0x8000) & (values < 0x8000)] = 1
    codes[(values >= -0x80) & (values < 0x80)] = 0
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
        if int(counts.max()) >= 1 << 14:
            starts = np.concatenate([[0], np.cumsum(counts)])
            records = [tool.pack((keys[i], *ints[i].tolist()),
                                 [tuple(row) for row in rep[starts[i]:starts[i + 1]].tolist()])
                       for i in range(n)]
            data = b"".join(records)
            if record_ends:
                return data, np.cumsum([len(rec) for rec in records])
            return data
    else:
        counts = np.zeros(n, dtype=np.int64)
        rep = np.zeros((0, 0), dtype=np.int64)
    klen = np.fromiter(map(len, keys), dtype=np.int64, count=n)
    m = 1 + k + counts * r
    int_start = np.cumsum(m) - m
    total_ints = int(m.sum())
    values = np.empty(total_ints, dtype=np.int64)
    first_pos = (int_start[:, None] + np.arange(1 + k)[None, :]).ravel()
    values[first_pos] = np.column_stack([klen, ints]).ravel()
    if r and rep.size:
        rep_counts = counts * r
        rep_pos = np.repeat(int_start + 1 + k, rep_counts) + (
            np.arange(int(rep_counts.sum())) - np.repeat(np.cumsum(rep_counts) - rep_counts,
                                                         rep_counts))
        values[rep_pos] = rep.ravel()
    codes = _codes(values)
    sizes = np.left_shift(1, codes)
    rec_of = np.repeat(np.arange(n), m)
    vlen = (np.where(counts < 128, 1, 2) if r else np.zeros(n, dtype=np.int64))
    plen = (2 * m + 7) // 8
    size_cum = np.cumsum(sizes)
    body = np.add.reduceat(sizes, int_start) + klen
    length = vlen + plen + body
    rec_start = np.cumsum(length) - length
    total = int(length.sum())
    # preamble bits
    bits = np.zeros(total * 8, dtype=np.uint8)
    j = np.arange(total_ints) - int_start[rec_of]
    bit_off = (rec_start + vlen)[rec_of] * 8 + 2 * j
    bits[bit_off] = codes >> 1
    bits[bit_off + 1] = codes & 1
    out = np.packbits(bits)
    if r:
        one = vlen == 1
        out[rec_start[one]] = counts[one]
        two = ~one
        out[rec_start[two]] = (counts[two] & 0x7F) | 0x80
        out[rec_start[two] + 1] = counts[two] >> 7
    body_start = rec_start + vlen + plen
    within = size_cum - sizes - (size_cum - sizes)[int_start][rec_of]
    pos = body_start[rec_of] + within + np.where(j >= 1, klen[rec_of], 0)
    be = values.astype(">i8").view(np.uint8).reshape(-1, 8)
    for b in range(8):
        sel = sizes > b
        out[pos[sel] + sizes[sel] - 1 - b] = be[sel, 7 - b]
    key_bytes = b"".join(keys)
    if key_bytes:
        src = np.frombuffer(key_bytes, dtype=np.uint8)
        key_dest = body_start + sizes[int_start]
        src_start = np.cumsum(klen) - klen
        out[np.repeat(key_dest - src_start, klen) + np.arange(src.size)] = src
    data, ends = terminate_records(out, length, rec_start)
    return (data, ends) if record_ends else data


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
    parts = [part if b"\xfe" not in part else unescape(part) for part in data[:-1].split(_SEP)]
    n = len(parts)
    length = np.fromiter(map(len, parts), dtype=np.int64, count=n)
    if int(length.min()) < 1:
        return None
    raw = b"".join(parts)
    rarr = np.frombuffer(raw, dtype=np.uint8)
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
    bits = np.unpackbits(rarr)
    bit_off = (rec_start + vlen)[rec_of] * 8 + 2 * j
    codes = bits[bit_off].astype(np.int64) * 2 + bits[bit_off + 1]
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
    key_start = body_start + sizes[int_start]
    keys = [raw[a:b] for a, b in zip(key_start.tolist(), (key_start + klen).tolist(),
                                      strict=True)]
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
