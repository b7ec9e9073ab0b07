"""Blocks of matches: what the iterators of :mod:`ranking.core.postings.iterators` pass to each other.

Layer: ``ranking.core``. A document is named by its *key* ``partition << 32 | doc_map index``:
keys ascend in posting order (partitions ascending, Doc Rank order inside a partition), so the
leapfrog and the merges compare plain int64s. (Across importance-ordered partitions the key
order is not Doc Rank order: :mod:`ranking.core.postings.collect` merges the partitions by importance.)

A :class:`Block` holds ascending, distinct keys and, per query term, a :class:`Column` aligned
with them: the term's frequency and where its positions are (bit offset and length in the
partition's positions file, and the list's Rice parameter). A row where the document lacks the
term (possible below a union) has frequency 0 and length 0. Positions are decoded only for the
final candidates (:func:`decode_column_positions`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from indexer.core.bundle.reader import PostingsCursor
from indexer.core.partition.postings import PostingBlock

IntArray = npt.NDArray[np.int64]
KEY_SHIFT = 32
INDEX_MASK = (1 << KEY_SHIFT) - 1
_EMPTY = np.zeros(0, dtype=np.int64)


def make_keys(partition: int | IntArray, index: IntArray) -> IntArray:
    return (np.asarray(partition, dtype=np.int64) << KEY_SHIFT) | np.asarray(index, np.int64)


def key_partition(keys: IntArray) -> IntArray:
    return keys >> KEY_SHIFT


def key_index(keys: IntArray) -> IntArray:
    return keys & INDEX_MASK


@dataclass(frozen=True, slots=True)
class Column:
    """One term's postings, row-aligned with a block's keys."""

    freq: IntArray
    pos_offset: IntArray
    pos_length: IntArray
    rice_k: IntArray

    @staticmethod
    def of(block: PostingBlock) -> Column:
        n = block.doc_index.size
        return Column(block.frequency.astype(np.int64, copy=False),
                      block.pos_offset.astype(np.int64, copy=False),
                      block.pos_length.astype(np.int64, copy=False),
                      np.full(n, block.rice_k, dtype=np.int64))

    @staticmethod
    def empty(n: int) -> Column:
        z = np.zeros(n, dtype=np.int64)
        return Column(z, z, z, z)

    def take(self, rows: IntArray | slice) -> Column:
        return Column(self.freq[rows], self.pos_offset[rows], self.pos_length[rows],
                      self.rice_k[rows])

    def __len__(self) -> int:
        return int(self.freq.size)


@dataclass(frozen=True, slots=True)
class Block:
    """Ascending distinct keys and the columns of the terms that matched them."""

    keys: IntArray
    columns: dict[str, Column]

    def __len__(self) -> int:
        return int(self.keys.size)

    def take(self, rows: IntArray | slice) -> Block:
        return Block(self.keys[rows], {t: c.take(rows) for t, c in self.columns.items()})

    def column(self, term: str) -> Column:
        """``term``'s column; an empty one when the block has none (a term that matched no
        key of it, or an empty block, which carries no columns)."""
        return self.columns.get(term) or Column.empty(len(self))

    @staticmethod
    def empty() -> Block:
        return Block(_EMPTY, {})


def concat_blocks(blocks: Sequence[Block]) -> Block:
    """Blocks in key order, concatenated (a term missing from a block gets empty rows)."""
    blocks = [b for b in blocks if len(b)]
    if not blocks:
        return Block.empty()
    if len(blocks) == 1:
        return blocks[0]
    terms = list(dict.fromkeys(t for b in blocks for t in b.columns))
    cols: dict[str, Column] = {}
    for term in terms:
        parts = [b.column(term) for b in blocks]
        cols[term] = Column(*(np.concatenate([getattr(p, f) for p in parts])
                              for f in ("freq", "pos_offset", "pos_length", "rice_k")))
    return Block(np.concatenate([b.keys for b in blocks]), cols)


def union_blocks(blocks: Iterable[Block]) -> Block:
    """Union of blocks by key; a term present in several blocks keeps the first non-empty
    posting (they are the same posting)."""
    blocks = [b for b in blocks if len(b)]
    if not blocks:
        return Block.empty()
    if len(blocks) == 1:
        return blocks[0]
    keys = np.unique(np.concatenate([b.keys for b in blocks]))
    n = keys.size
    cols: dict[str, list[IntArray]] = {}
    for b in blocks:
        where = np.searchsorted(keys, b.keys)
        for term, col in b.columns.items():
            target = cols.get(term)
            if target is None:
                target = cols[term] = [np.zeros(n, np.int64) for _ in range(4)]
            fresh = target[2][where] == 0
            rows = where[fresh]
            for arr, src in zip(target, (col.freq, col.pos_offset, col.pos_length, col.rice_k),
                                strict=True):
                arr[rows] = src[fresh]
    return Block(keys, {t: Column(*a) for t, a in cols.items()})


def decode_column_positions(cursor: PostingsCursor, keys: IntArray,
                            column: Column) -> tuple[IntArray, IntArray]:
    """All positions of ``column`` (row after row) and the per-row counts.

    Rows are grouped by (partition, Rice parameter) so each group decodes with one vectorised
    call of the positions codec.
    """
    n = keys.size
    counts = column.freq.copy()
    have = (column.freq > 0) & (column.pos_length > 0)
    counts[~have] = 0
    if not have.any():
        return _EMPTY, counts
    parts = key_partition(keys)
    group = parts * 64 + column.rice_k
    out_starts = np.cumsum(counts) - counts
    out = np.empty(int(counts.sum()), dtype=np.int64)
    rows_all = np.flatnonzero(have)
    for g in np.unique(group[rows_all]):
        rows = rows_all[group[rows_all] == g]
        pb = PostingBlock(int(parts[rows[0]]), key_index(keys[rows]), counts[rows],
                          column.pos_offset[rows], column.pos_length[rows],
                          int(column.rice_k[rows[0]]))
        pos, _ = cursor.positions(pb)
        c = counts[rows]
        dest = np.repeat(out_starts[rows] - (np.cumsum(c) - c), c) + np.arange(pos.size)
        out[dest] = pos
    assert n == counts.size
    return out, counts
