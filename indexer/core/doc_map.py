"""The doc_map file of a partition: doc_map entries in score order, and the partition's members.

Layer: ``indexer.core``. Written by :mod:`indexer.core.partition_index`, read by
:mod:`indexer.core.reader`.

Each doc_map entry is the seed's ``doc_id => position_score_list`` for one group (see
:mod:`indexer.core.grouping`): the representative's doc_id, then the list of (position, score)
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
a position_score_list is decoded only when asked for (for the top results).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .ids import DOC_ID_LEN
from .packed_table import PackedTableTool, RecordFormatError

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
    n, m = len(entries), len(members)
    blobs = [PSL_TOOL.pack((len(e.regions),),
                           [(e.ix_index, float(e.score)), *e.regions,
                            *((0, float(c)) for c in e.classifier_scores)])
             for e in entries]
    offsets = np.zeros(n + 1, dtype=">u4")
    if n:
        offsets[1:] = np.cumsum([len(b) for b in blobs])
    parts = [
        _COUNTS.pack(n, m),
        b"".join(e.doc_id for e in entries),
        np.array([e.ix_index for e in entries], dtype=">u4").tobytes(),
        np.array([e.score for e in entries], dtype=">f8").tobytes(),
        np.array([e.length for e in entries], dtype=">u4").tobytes(),
        offsets.tobytes(),
        b"".join(r.doc_id for r in members),
        np.array([r.group for r in members], dtype=">u4").tobytes(),
        np.array([r.summary_offset for r in members], dtype=">u8").tobytes(),
        np.array([r.summary_length for r in members], dtype=">u4").tobytes(),
        np.array([r.cache_offset for r in members], dtype=">u8").tobytes(),
        np.array([r.cache_length for r in members], dtype=">u4").tobytes(),
        np.array([r.blob_end for r in members], dtype=">u8").tobytes(),
        np.array([r.blob_crc for r in members], dtype=">u4").tobytes(),
        b"".join(blobs),
    ]
    for e in entries:
        if len(e.doc_id) != DOC_ID_LEN:
            raise ValueError("doc_id must be 24 bytes")
    return b"".join(parts)


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
