"""The record codec (the seed's PackedTableTool): typed columns, a size preamble, 0xFF separators.

Layer: ``indexer.core``. Used for documents/partition_N.ix records, the doc_map's
position/score lists, last_entries and the dictionary's B+-tree nodes; whole tables of the
BLOB + INT signatures are packed and unpacked column-wise by :mod:`indexer.core.files.packed_columns`
(the same bytes).

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
        try:
            count, pos = _read_count(raw) if self.repeat else (0, 0)
            plen = (self._preamble_bits(count) + 7) // 8
            if pos + plen > len(raw):
                raise RecordFormatError("record shorter than its preamble")
            fields = _FieldReader(raw, pos + plen, int.from_bytes(raw[pos:pos + plen], "big"),
                                  plen * 8)
            values, bool_cols = fields.columns(self.columns)
            rows = fields.rows(self.repeat, count)
            fields.finish(values, bool_cols)
        except IndexError as exc:
            raise RecordFormatError("record truncated") from exc
        except UnicodeDecodeError as exc:
            raise RecordFormatError("TEXT column is not UTF-8") from exc
        return tuple(values), rows

    def _preamble_bits(self, count: int) -> int:
        """Bits of the preamble of a record with ``count`` repeated rows."""
        ncodes = 0
        nbools = 0
        for col in self.columns:
            if col.type is ColumnType.BOOL:
                nbools += 1
            elif col.type is not ColumnType.FLOAT:
                ncodes += 1
        rep_ints = sum(1 for c in self.repeat if c.type is ColumnType.INT)
        ncodes += rep_ints * count
        return 2 * ncodes + nbools

    def unpack_many(self, data: bytes) -> list[tuple[tuple[Any, ...], list[tuple[Any, ...]]]]:
        """Decode a concatenation of records (each terminated by 0xFF)."""
        if not data:
            return []
        if data[-1] != SEPARATOR:
            raise RecordFormatError("last record is not terminated")
        return [self.unpack(part) for part in data[:-1].split(_SEP)]


def _read_count(raw: bytes) -> tuple[int, int]:
    """The repeat count varint at the start of ``raw`` and the offset after it (``IndexError``
    when ``raw`` ends inside it)."""
    pos = 0
    count = 0
    shift = 0
    while True:
        byte = raw[pos]
        pos += 1
        count |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return count, pos
        if shift > 63:
            raise RecordFormatError("repeat count too long")


class _FieldReader:
    """Reads a record's body in order: ``data`` from ``pos``, each INT and each TEXT/BLOB
    length sized by the next 2-bit code of the preamble (``bits``, ``bits_left`` of them
    unread), then the BOOL flags from what the codes leave."""

    __slots__ = ("data", "pos", "bits", "bits_left")

    def __init__(self, data: bytes, pos: int, bits: int, bits_left: int) -> None:
        self.data = data
        self.pos = pos
        self.bits = bits
        self.bits_left = bits_left

    def take(self, size: int) -> bytes:
        end = self.pos + size
        if end > len(self.data):
            raise RecordFormatError("record body truncated")
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def sized_int(self) -> int:
        self.bits_left -= 2
        size = _SIZES[(self.bits >> self.bits_left) & 3]
        return int.from_bytes(self.take(size), "big", signed=True)

    def columns(self, columns: tuple[Column, ...]) -> tuple[list[Any], list[int]]:
        """The values of ``columns`` (False in place of each BOOL) and the BOOLs' indexes."""
        values: list[Any] = []
        bool_cols = []
        for col in columns:
            kind = col.type
            if kind is ColumnType.INT:
                values.append(self.sized_int())
            elif kind is ColumnType.FLOAT:
                values.append(_DOUBLE.unpack(self.take(8))[0])
            elif kind is ColumnType.BOOL:
                bool_cols.append(len(values))
                values.append(False)
            else:
                length = self.sized_int()
                if length < 0:
                    raise RecordFormatError("negative length")
                chunk = self.take(length)
                values.append(chunk.decode("utf-8") if kind is ColumnType.TEXT else chunk)
        return values, bool_cols

    def rows(self, repeat: tuple[Column, ...], count: int) -> list[tuple[Any, ...]]:
        """``count`` rows of the repeated group."""
        rows: list[tuple[Any, ...]] = []
        for _ in range(count):
            row = []
            for col in repeat:
                if col.type is ColumnType.INT:
                    row.append(self.sized_int())
                else:
                    row.append(_DOUBLE.unpack(self.take(8))[0])
            rows.append(tuple(row))
        return rows

    def finish(self, values: list[Any], bool_cols: list[int]) -> None:
        """Set the BOOLs, then check that the padding is zero and no byte is left."""
        for index in bool_cols:
            self.bits_left -= 1
            values[index] = bool((self.bits >> self.bits_left) & 1)
        if self.bits & ((1 << self.bits_left) - 1):
            raise RecordFormatError("non-zero preamble padding")
        if self.pos != len(self.data):
            raise RecordFormatError(f"{len(self.data) - self.pos} stray bytes after the record")


def split_records(data: bytes) -> list[bytes]:
    """The escaped records of ``data`` without their terminators (trailing partial dropped)."""
    parts = data.split(_SEP)
    parts.pop()  # the bytes after the last separator: empty, or an unterminated partial record
    return parts
