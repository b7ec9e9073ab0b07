"""The doc_map file of a partition: doc_map entries in score order, and the partition's members.

Layer: ``indexer.core``. Written by :mod:`indexer.core.partition.build`, read by
:mod:`indexer.core.bundle.reader`.

Each doc_map entry is the seed's ``doc_id => position_score_list`` for one group (see
:mod:`indexer.core.partition.grouping`): the representative's doc_id, then the list of (position, score)
pairs: first (offset of the representative in the partition, overall score), then the region
weights (last term position, weight) - positions up to and including it, after the previous
pair's, weigh ``weight`` - then one (0, score) pair per classifier.

Format (payload of a framed ``doc_map`` file, integers big-endian)::

    u32 n                    doc_map entries
    u32 m                    documents of the partition covered (its members)
    n x 24 bytes             representative doc_id, in doc_map order
    n x u32                  offset of the representative in the partition (.ix record index)
    n x f64                  overall score (sum of the group members' scores)
    n x u32                  document length: word positions of the group's indexed text
    (n + 1) x u32            offsets of each entry's position_score_list in the blob
    m x 24 bytes             member doc_id, in partition order
    m x u32                  doc_map index of the member's group
    m x u64, m x u32         offset and length of the member's summary in partition_N.txt.gz
    m x u64, m x u32         offset and length of the member's cached page (length 0: none)
    m x u64, m x u32         end of the member's bytes in .txt.gz and their crc32 (as in .ix)
    blob                     position_score_lists, each one record of the record codec:
                             columns regions:INT, repeated (position:INT score:FLOAT)

The fixed-width columns are read with ``numpy.frombuffer`` (no per-entry decoding on open);
a position_score_list is decoded only when asked for (for the top results), or all of them at
once with array operations (:meth:`DocMap.position_score_columns`, for the region weights of
every entry that a query's score bounds need).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..files.packed_columns import (
    size_codes,
    terminate_records,
    unescaped_records,
    write_big_endian,
)
from ..files.packed_table import PackedTableTool, RecordFormatError
from ..ids import DOC_ID_LEN

PSL_TOOL = PackedTableTool.of("regions:INT", repeat="position:INT score:FLOAT")
_COUNTS = struct.Struct(">II")


@dataclass(frozen=True, slots=True)
class DocMapEntry:
    doc_id: bytes
    ix_index: int
    score: float
    length: int
    regions: tuple[tuple[int, float], ...] = ()
    classifier_scores: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class MemberRow:
    doc_id: bytes
    group: int
    summary_offset: int
    summary_length: int
    cache_offset: int
    cache_length: int
    blob_end: int = 0
    blob_crc: int = 0


class DocMapFormatError(ValueError):
    """The payload does not parse (the caller adds the file name)."""


def encode_doc_map(entries: Sequence[DocMapEntry], members: Sequence[MemberRow]) -> bytes:
    """The doc_map payload of ``entries`` (doc_map order) and ``members`` (partition order)."""
    for e in entries:
        if len(e.doc_id) != DOC_ID_LEN:
            raise ValueError("doc_id must be 24 bytes")
    rows = [[(e.ix_index, float(e.score)), *e.regions, *((0, float(c)) for c in e.classifier_scores)]
            for e in entries]
    flat = [row for r in rows for row in r]
    member_cols = np.array([[r.group, r.summary_offset, r.summary_length, r.cache_offset,
                             r.cache_length, r.blob_end, r.blob_crc] for r in members],
                           dtype=np.int64).reshape(len(members), 7)
    return encode_doc_map_columns(
        b"".join(e.doc_id for e in entries),
        np.array([e.ix_index for e in entries], dtype=np.int64),
        np.array([e.score for e in entries], dtype=np.float64),
        np.array([e.length for e in entries], dtype=np.int64),
        np.array([len(e.regions) for e in entries], dtype=np.int64),
        np.array([len(r) for r in rows], dtype=np.int64),
        np.array([p for p, _ in flat], dtype=np.int64),
        np.array([w for _, w in flat], dtype=np.float64),
        b"".join(r.doc_id for r in members), member_cols)


def encode_doc_map_columns(rep_ids: bytes, ix_index: npt.NDArray[np.int64],
                           score: npt.NDArray[np.float64], length: npt.NDArray[np.int64],
                           nregions: npt.NDArray[np.int64], nrows: npt.NDArray[np.int64],
                           row_position: npt.NDArray[np.int64],
                           row_score: npt.NDArray[np.float64], member_ids: bytes,
                           members: npt.NDArray[np.int64]) -> bytes:
    """:func:`encode_doc_map` from columns: ``rep_ids`` the representatives' doc_ids joined;
    per entry its ``nregions`` and the ``nrows`` rows of its position_score_list (the first is
    (ix_index, score)), all rows' positions and scores back to back; ``member_ids`` joined and
    ``members`` (m x 7: group, summary offset and length, cache offset and length, blob end and
    crc)."""
    n = ix_index.size
    m = members.shape[0]
    if len(rep_ids) != n * DOC_ID_LEN or len(member_ids) != m * DOC_ID_LEN:
        raise ValueError("doc_id must be 24 bytes")
    blob, ends = pack_psl(nregions, nrows, row_position, row_score)
    offsets = np.zeros(n + 1, dtype=">u4")
    offsets[1:] = ends
    parts = [
        _COUNTS.pack(n, m), rep_ids,
        ix_index.astype(">u4").tobytes(), score.astype(">f8").tobytes(),
        length.astype(">u4").tobytes(), offsets.tobytes(), member_ids,
    ]
    for column, dtype in zip(members.T, (">u4", ">u8", ">u4", ">u8", ">u4", ">u8", ">u4"),
                             strict=True):
        parts.append(column.astype(dtype).tobytes())
    parts.append(blob)
    return b"".join(parts)


def pack_psl(nregions: npt.NDArray[np.int64], nrows: npt.NDArray[np.int64],
             row_position: npt.NDArray[np.int64], row_score: npt.NDArray[np.float64]
             ) -> tuple[bytes, npt.NDArray[np.int64]]:
    """``b"".join(PSL_TOOL.pack((nregions[e],), rows of e) for e ...)`` computed column-wise,
    and the end offset of each record. A record is: the row count (varint), the 2-bit size
    codes of its INTs (the region count, then each row's position), the region count, then each
    row's position and 8-byte score; escaped and terminated by 0xFF."""
    n = nregions.size
    if n == 0:
        return b"", np.zeros(0, dtype=np.int64)
    if int(nrows.max()) >= 1 << 28:  # a row count of over four varint bytes: the general path
        records = []
        start = 0
        for e in range(n):
            rows = list(zip(row_position[start:start + nrows[e]].tolist(),
                            row_score[start:start + nrows[e]].tolist(), strict=True))
            start += int(nrows[e])
            records.append(PSL_TOOL.pack((int(nregions[e]),), rows))
        return b"".join(records), np.cumsum([len(r) for r in records])
    # the row count's varint: 7 bits a byte, low bits first, the high bit set on all but the
    # last (whole pages have hundreds of regions: two bytes)
    head = 1 + (nrows >= 1 << 7) + (nrows >= 1 << 14) + (nrows >= 1 << 21)
    nints = nrows + 1
    istart = np.cumsum(nints) - nints
    ints = np.empty(int(nints.sum()), dtype=np.int64)
    is_row = np.ones(ints.size, dtype=bool)
    is_row[istart] = False
    ints[istart] = nregions
    ints[is_row] = row_position
    codes = size_codes(ints)
    sizes = np.left_shift(1, codes)
    entry = np.repeat(np.arange(n), nints)
    j = np.arange(ints.size) - istart[entry]
    plen = (2 * nints + 7) // 8
    step = sizes + 8 * is_row  # bytes each INT takes with the score that follows it
    step_cum = np.cumsum(step) - step
    length = head + plen + np.add.reduceat(step, istart)
    rec_start = np.cumsum(length) - length
    total = int(length.sum())
    out = np.zeros(total, dtype=np.uint8)
    for b in range(4):
        has = head > b
        out[rec_start[has] + b] = ((nrows[has] >> (7 * b)) & 0x7F) | np.where(
            head[has] > b + 1, 0x80, 0)
    pre = np.bincount((rec_start + head)[entry] + (j >> 2), weights=codes << (6 - 2 * (j & 3)),
                      minlength=total)
    out += pre.astype(np.uint8)
    at = (rec_start + head + plen)[entry] + step_cum - step_cum[istart][entry]
    write_big_endian(out, at, ints, codes)
    score_at = (at + sizes)[is_row]
    out[score_at[:, None] + np.arange(8)] = np.asarray(row_score, dtype=">f8").view(
        np.uint8).reshape(-1, 8)
    return terminate_records(out, length, rec_start)


@dataclass(frozen=True, slots=True)
class PslColumns:
    """Every position_score_list of a doc_map (:meth:`DocMap.position_score_columns`): per
    entry its region count and row count; per row, entry after entry, its position and
    score."""

    nregions: npt.NDArray[np.int64]
    nrows: npt.NDArray[np.int64]
    position: npt.NDArray[np.int64]
    score: npt.NDArray[np.float64]


def _decode_psl(blob: bytes, n: int) -> PslColumns | None:
    """:func:`pack_psl`'s records decoded column-wise (the inverse of its array path); None
    when the records do not have its layout. May raise ``IndexError`` on damaged bytes."""
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return PslColumns(z, z, z, np.zeros(0)) if not blob else None
    rarr, length = unescaped_records(blob)
    if length.size != n or not rarr.size:
        return None
    rec_start = np.cumsum(length) - length
    nrows = np.zeros(n, dtype=np.int64)
    head = np.zeros(n, dtype=np.int64)
    more = np.ones(n, dtype=bool)
    for b in range(4):  # the row count's varint, low bits first
        byte = rarr[np.minimum(rec_start + b, rarr.size - 1)].astype(np.int64)
        nrows[more] |= (byte[more] & 0x7F) << (7 * b)
        head += more
        more &= (byte & 0x80) != 0
    if more.any():
        return None
    nints = nrows + 1
    plen = (2 * nints + 7) // 8
    istart = np.cumsum(nints) - nints
    entry = np.repeat(np.arange(n), nints)
    j = np.arange(int(nints.sum())) - istart[entry]
    codes = (rarr[(rec_start + head)[entry] + (j >> 2)].astype(np.int64)
             >> (6 - 2 * (j & 3))) & 3
    sizes = np.left_shift(1, codes)
    is_row = j >= 1
    step = sizes + 8 * is_row
    step_cum = np.cumsum(step) - step
    if np.any(head + plen + np.add.reduceat(step, istart) != length):
        return None
    at = (rec_start + head + plen)[entry] + step_cum - step_cum[istart][entry]
    ints = np.empty(at.size, dtype=np.int64)
    for width, dtype in ((1, ">i1"), (2, ">i2"), (4, ">i4"), (8, ">i8")):
        sel = np.flatnonzero(sizes == width)
        if sel.size:
            ints[sel] = np.ascontiguousarray(
                rarr[at[sel][:, None] + np.arange(width)]).view(dtype).ravel()
    score_at = (at + sizes)[is_row]
    score = np.ascontiguousarray(rarr[score_at[:, None] + np.arange(8)]).view(">f8").ravel()
    return PslColumns(ints[istart], nrows, ints[is_row], score.astype(np.float64))


class DocMap:
    """A decoded doc_map: numpy columns plus lazily decoded position_score_lists."""

    __slots__ = ("n", "m", "doc_ids", "ix_index", "score", "length", "_psl_off", "_blob",
                 "member_ids", "member_group", "summary_offset", "summary_length",
                 "cache_offset", "cache_length", "blob_end", "blob_crc", "_member_lookup")

    def __init__(self, payload: bytes) -> None:
        if len(payload) < _COUNTS.size:
            raise DocMapFormatError("payload too short")
        n, m = _COUNTS.unpack_from(payload)
        pos = _COUNTS.size

        def column(count: int, dtype: str, width: int = 1) -> npt.NDArray[np.generic]:
            nonlocal pos
            size = np.dtype(dtype).itemsize * count * width
            if pos + size > len(payload):
                raise DocMapFormatError("payload truncated")
            arr = np.frombuffer(payload, dtype=dtype, count=count * width, offset=pos)
            pos += size
            return arr

        self.n, self.m = n, m
        self.doc_ids = column(n, "u1", DOC_ID_LEN).reshape(n, DOC_ID_LEN)
        self.ix_index = column(n, ">u4").astype(np.int64)
        self.score = column(n, ">f8").astype(np.float64)
        self.length = column(n, ">u4").astype(np.int64)
        self._psl_off = column(n + 1, ">u4").astype(np.int64)
        self.member_ids = column(m, "u1", DOC_ID_LEN).reshape(m, DOC_ID_LEN)
        self.member_group = column(m, ">u4").astype(np.int64)
        self.summary_offset = column(m, ">u8").astype(np.int64)
        self.summary_length = column(m, ">u4").astype(np.int64)
        self.cache_offset = column(m, ">u8").astype(np.int64)
        self.cache_length = column(m, ">u4").astype(np.int64)
        self.blob_end = column(m, ">u8").astype(np.int64)
        self.blob_crc = column(m, ">u4").astype(np.int64)
        self._blob = payload[pos:]
        if int(self._psl_off[-1]) != len(self._blob) or np.any(np.diff(self._psl_off) < 1):
            raise DocMapFormatError("position_score_list offsets do not match the blob")
        if n and (int(self.member_group.max(initial=0)) >= n or int(self.ix_index.max()) >= m):
            raise DocMapFormatError("member or representative index out of range")
        self._member_lookup: dict[bytes, int] | None = None

    def doc_id(self, index: int) -> bytes:
        return self.doc_ids[index].tobytes()

    def position_score_list(self, index: int) -> tuple[int, list[tuple[int, float]]]:
        """``(number of region pairs, pairs)`` of doc_map entry ``index``."""
        start, end = int(self._psl_off[index]), int(self._psl_off[index + 1])
        record = self._blob[start:end]
        if not record or record[-1] != 0xFF:
            raise DocMapFormatError(f"entry {index}: unterminated record")
        try:
            values, rows = PSL_TOOL.unpack(record[:-1])
        except RecordFormatError as exc:
            raise DocMapFormatError(f"entry {index}: {exc}") from exc
        nregions = values[0]
        if not rows or nregions < 0 or nregions > len(rows) - 1:
            raise DocMapFormatError(f"entry {index}: bad region count")
        return nregions, rows

    def position_score_columns(self) -> PslColumns | None:
        """Every entry's position_score_list at once, decoded with array operations: the
        region counts, row counts and every row's position and score (rows entry after
        entry, each entry's first row (offset, overall score) included, as
        :meth:`position_score_list` gives them). None when the blob is not exactly what
        :func:`pack_psl` writes for them (callers then decode entry by entry, which names a
        damaged entry)."""
        try:
            got = _decode_psl(self._blob, self.n)
        except (IndexError, ValueError):
            return None
        if got is None or np.any(got.nregions < 0) or np.any(got.nregions > got.nrows - 1):
            return None
        if pack_psl(got.nregions, got.nrows, got.position, got.score)[0] != self._blob:
            return None
        return got

    def region_weights(self, index: int) -> list[tuple[int, float]]:
        nregions, rows = self.position_score_list(index)
        return [(int(p), float(w)) for p, w in rows[1:1 + nregions]]

    def classifier_scores(self, index: int) -> list[float]:
        nregions, rows = self.position_score_list(index)
        return [float(w) for _, w in rows[1 + nregions:]]

    def find_member(self, doc_id: bytes) -> int | None:
        """Row of ``doc_id`` among the members, or None."""
        if self._member_lookup is None:
            raw = self.member_ids.tobytes()
            self._member_lookup = {raw[i * DOC_ID_LEN:(i + 1) * DOC_ID_LEN]: i
                                   for i in range(self.m)}
        return self._member_lookup.get(doc_id)

    def verify(self) -> None:
        """Decode every position_score_list (used by index_verify)."""
        for index in range(self.n):
            self.position_score_list(index)
