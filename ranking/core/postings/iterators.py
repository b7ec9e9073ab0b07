"""Iterators over blocks of matching documents: the leaves of the seed's query plan.

Layer: ``ranking.core``. Every iterator yields :class:`~ranking.core.postings.blocks.Block` objects in
ascending key order (partition, then Doc Rank order inside a partition) and supports:

* ``next_block()``: the next non-empty block of matches, or ``None`` when exhausted;
* ``skip_to(key)``: the next non-empty block of matches with keys ``>= key`` (keys before it
  are dropped), or ``None``. ``key`` must lie after every key already returned.
* ``estimate``: an upper estimate of the number of matches.

Here: the :class:`DocIterator` contract, the leaves (:class:`WordIterator`, one term's postings,
block-decoded, skipping by block headers; :class:`DecodedWordIterator` over a whole decoded list
(:class:`DecodedList`); :class:`KeysIterator` over decoded keys of a filter meta word), the
time :class:`Budget`, and :func:`collect` (the first ``n`` matches in crawl order; across
importance-ordered partitions :func:`ranking.core.postings.collect.collect_by_key`). The combinators
(intersection, union, negation, phrases) are in :mod:`ranking.core.postings.combinators`; the plan that
builds the tree from a parsed query in :mod:`ranking.core.postings.plan`. Meta words are ordinary
posting lists (frequency 0, no positions).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from indexer.core.bundle.reader import PostingsCursor
from ranking.core.postings.blocks import (
    Block,
    Column,
    IntArray,
    concat_blocks,
    decode_column_positions,
    make_keys,
)


@dataclass(slots=True)
class Budget:
    """A time budget shared by the iterators of one query (the seed's intersect timer)."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    start: float = field(default=0.0)
    partial: bool = False

    def __post_init__(self) -> None:
        self.start = self.clock()

    def expired(self) -> bool:
        if self.seconds > 0 and self.clock() - self.start > self.seconds:
            self.partial = True
        return self.partial


class DocIterator(ABC):
    """Common contract (see the module docstring)."""

    estimate: int = 0

    @abstractmethod
    def next_block(self) -> Block | None: ...

    @abstractmethod
    def skip_to(self, key: int) -> Block | None: ...

    def drain(self) -> Block:
        """Every remaining match (tests and small lists)."""
        blocks = []
        while (b := self.next_block()) is not None:
            blocks.append(b)
        return concat_blocks(blocks)


class EmptyIterator(DocIterator):
    def next_block(self) -> Block | None:
        return None

    def skip_to(self, key: int) -> Block | None:
        return None


class WordIterator(DocIterator):
    """One term's postings across partitions, in Doc Rank order, a decoded block at a time.

    ``positional`` terms (words) carry a :class:`Column`; meta words carry none. With
    ``max_blocks`` (> 0) it decodes at most that many blocks in each partition, then goes on
    at the next partition's first posting; with ``total_blocks`` (> 0) at most that many in
    all, then it ends; either way it notes that it was ``truncated`` when postings were left
    unread (:mod:`ranking.core.postings.limits`). ``blocks`` counts the blocks it decoded.
    """

    def __init__(self, cursor: PostingsCursor, term: str, positional: bool = True,
                 max_blocks: int = 0, total_blocks: int = 0) -> None:
        self.cursor = cursor
        self.term = term
        self.positional = positional
        self.estimate = cursor.docs
        self.consumed = 0
        self.max_blocks = max_blocks
        self.total_blocks = total_blocks
        self.truncated = False
        self.blocks = 0
        self._part = -1  # the partition of the last block, and how many blocks it gave
        self._part_blocks = 0

    def _block(self, pb: object) -> Block | None:
        if pb is None:
            return None
        part = int(pb.partition)  # type: ignore[attr-defined]
        if part != self._part:
            self._part, self._part_blocks = part, 0
        self._part_blocks += 1
        self.blocks += 1
        keys = make_keys(part, pb.doc_index)  # type: ignore[attr-defined]
        self.consumed += keys.size
        cols = {self.term: Column.of(pb)} if self.positional else {}  # type: ignore[arg-type]
        return Block(keys, cols)

    def _spent(self, partition: int) -> bool:
        """Whether the bound leaves nothing more to read in ``partition``."""
        return 0 < self.max_blocks <= self._part_blocks and partition == self._part

    def _next_partition(self) -> Block | None:
        self.truncated |= self.cursor.more_in_partition()
        return self._block(self.cursor.skip_to(self._part + 1, 0))

    def _ended(self) -> bool:
        """Whether the bound in all is reached (noting what it leaves unread)."""
        if 0 < self.total_blocks <= self.blocks:
            self.truncated |= self.cursor.more()
            return True
        return False

    def next_block(self) -> Block | None:
        if self._ended():
            return None
        if self._spent(self._part):
            return self._next_partition()
        return self._block(self.cursor.next_block())

    def skip_to(self, key: int) -> Block | None:
        if self._ended():
            return None
        if self._spent(key >> 32):
            return self._next_partition()
        return self._block(self.cursor.skip_to(key >> 32, key & 0xFFFFFFFF))


@dataclass(frozen=True, slots=True)
class DecodedList:
    """A term's whole posting list, decoded: keys and (for words) the positions columns."""

    keys: IntArray
    column: Column | None
    docs: int
    occurrences: int
    # every posting's positions, decoded on first use: (positions row after row, row starts)
    _positions: list[tuple[IntArray, IntArray]] = field(default_factory=list)
    # arrays a user derives from the whole list's positions, aligned with them (the shard
    # keeps each position's region there), dropped with the list
    memo: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return int(self.keys.size) + sum(int(p.size) for p, _ in self._positions) + \
            sum(int(a.size) for a in self.memo.values())

    @property
    def positions_decoded(self) -> bool:
        """Whether :meth:`all_positions` has decoded the list's positions."""
        return bool(self._positions)

    def all_positions(self, decoder: PostingsCursor) -> tuple[IntArray, IntArray]:
        """Every posting's positions, row after row, and the row starts (length docs + 1),
        decoded on first use and kept."""
        col = self.column
        assert col is not None
        if not self._positions:
            pos, counts = decode_column_positions(decoder, self.keys, col)
            starts = np.zeros(counts.size + 1, dtype=np.int64)
            np.cumsum(counts, out=starts[1:])
            self._positions.append((pos, starts))
        return self._positions[0]

    def position_rows(self, decoder: PostingsCursor, keys: IntArray
                      ) -> tuple[IntArray, IntArray]:
        """Where the positions of the postings at ``keys`` (all in the list) are in
        :meth:`all_positions`, row after row, and the per-row counts."""
        _, starts = self.all_positions(decoder)
        rows = np.searchsorted(self.keys, keys)
        counts = starts[rows + 1] - starts[rows]
        before = np.cumsum(counts) - counts
        at = np.repeat(starts[rows] - before, counts) + np.arange(int(counts.sum()))
        return at, counts

    def positions(self, decoder: PostingsCursor, keys: IntArray) -> tuple[IntArray, IntArray]:
        """Positions of the postings at ``keys`` (all in the list), row after row, and the
        per-row counts; the whole list's positions are decoded once and kept."""
        at, counts = self.position_rows(decoder, keys)
        return self.all_positions(decoder)[0][at], counts

    @staticmethod
    def of(cursor: PostingsCursor, positional: bool) -> DecodedList:
        keys, cols = [], []
        for pb in cursor:
            keys.append(make_keys(pb.partition, pb.doc_index))
            if positional:
                cols.append(Column.of(pb))
        k = np.concatenate(keys) if keys else np.zeros(0, np.int64)
        col = None
        if positional:
            col = Column(*(np.concatenate([getattr(c, f) for c in cols]) if cols else
                           np.zeros(0, np.int64)
                           for f in ("freq", "pos_offset", "pos_length", "rice_k")))
        return DecodedList(k, col, cursor.stats.docs, cursor.stats.occurrences)


class DecodedWordIterator(DocIterator):
    """A :class:`WordIterator` over a :class:`DecodedList` (a reader's decoded-postings
    cache): blocks are slices, skipping is a binary search."""

    CHUNK = 512

    def __init__(self, decoded: DecodedList, term: str, positional: bool = True) -> None:
        self.decoded = decoded
        self.term = term
        self.positional = positional and decoded.column is not None
        self.estimate = decoded.docs
        self.consumed = 0
        self.at = 0

    def next_block(self) -> Block | None:
        keys = self.decoded.keys
        if self.at >= keys.size:
            return None
        end = min(self.at + self.CHUNK, keys.size)
        rows = slice(self.at, end)
        self.consumed += end - self.at
        self.at = end
        col = self.decoded.column
        return Block(keys[rows], {self.term: col.take(rows)} if self.positional and col
                     is not None else {})

    def skip_to(self, key: int) -> Block | None:
        self.at = max(self.at, int(np.searchsorted(self.decoded.keys, key)))
        return self.next_block()

    @property
    def all_keys(self) -> IntArray:
        """Every key of the list (the array intersection reads it directly)."""
        return self.decoded.keys

    def columns_at(self, rows: IntArray) -> dict[str, Column]:
        """The term's column at list ``rows`` (none for a meta word)."""
        col = self.decoded.column
        return {self.term: col.take(rows)} if self.positional and col is not None else {}


class KeysIterator(DocIterator):
    """A precomputed ascending key array (a decoded filter list such as ``safe:true``)."""

    CHUNK = 1024

    def __init__(self, keys: IntArray) -> None:
        self.keys = keys
        self.at = 0
        self.estimate = int(keys.size)
        self.consumed = 0

    def next_block(self) -> Block | None:
        if self.at >= self.keys.size:
            return None
        end = min(self.at + self.CHUNK, self.keys.size)
        out = Block(self.keys[self.at:end], {})
        self.at = end
        return out

    def skip_to(self, key: int) -> Block | None:
        self.at = max(self.at, int(np.searchsorted(self.keys, key)))
        return self.next_block()

    @property
    def all_keys(self) -> IntArray:
        return self.keys

    def columns_at(self, rows: IntArray) -> dict[str, Column]:
        return {}


def collect(iterator: DocIterator, n: int) -> tuple[Block, bool]:
    """The first ``n`` matches (fewer when the iterator ends or the budget runs out) and
    whether the iterator ran out (the caller tells a run out budget or bound from the end of
    the lists: :func:`ranking.core.shard.matching.score_matches`)."""
    blocks: list[Block] = []
    have = 0
    exhausted = False
    while have < n:
        block = iterator.next_block()
        if block is None:
            exhausted = True
            break
        blocks.append(block)
        have += len(block)
    out = concat_blocks(blocks)
    if len(out) > n:
        out = out.take(slice(0, n))
    return out, exhausted
