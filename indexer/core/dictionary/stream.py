"""Streaming merge of sorted term tables into a new B+-tree, in memory bounded by a batch.

Layer: ``indexer.core``. Used by :class:`indexer.core.dictionary.tree.BPlusTreeWriter` for its
compaction and for merges that touch most of its leaves (a closed partition's terms: the
dictionary of the seed document "Yioop Search Engine Ranking Mechanisms" gains them when the
partition is full). Three parts, each holding at most a batch of terms at once:

* :func:`leaf_blocks` reads an existing tree's leaves in key order, a batch of leaves at a time,
  as columns (:class:`TermBlock`);
* :func:`merge_streams` merges two sorted streams of blocks (the old tree's, the new
  partition's), a key present in both getting the old records of the partitions the new ones
  do not replace, then the new records, ordered by partition;
* :class:`TreeBuilder` writes the merged stream bottom up: full leaves as they fill, and
  internal nodes as ``fanout`` children are ready, one pending node per level.

Per-term work is numpy over a batch (``np.repeat``, ``np.isin``, ``np.lexsort``) and C-level
list operations (sorting bytes); the Python loops run per batch, per leaf or per internal node.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import CorruptIndexError
from ..files.packed_columns import pack_columns, unpack_columns
from ..files.packed_table import RecordFormatError
from .node_format import INTERNAL, INTERNAL_TOOL, LEAF, LEAF_TOOL, RECORD_WIDTH, node_bytes


class NodeView(Protocol):
    """A decoded node as :meth:`LeafSource.read_node` gives it."""

    kind: int
    values: list


class LeafSource(Protocol):
    """What :func:`leaf_blocks` reads of a tree: its manifest, height and node file, and its
    nodes by offset. :class:`indexer.core.dictionary.tree.BPlusTree` is one; the protocol keeps
    this module from importing the tree that imports it."""

    manifest: dict[str, Any]
    node_path: Path

    @property
    def height(self) -> int: ...

    def read_node(self, offset: int) -> NodeView: ...

    def read_payload(self, offset: int) -> tuple[int, bytes]: ...

LEAVES_PER_BATCH = 64  # leaves of the old tree decoded in one column-wise pass
FLUSH_LEAVES = 64  # leaves the builder gathers before encoding them in one pass


@dataclass(slots=True)
class TermBlock:
    """Sorted, distinct keys with their partition records as columns: key ``i`` owns the
    next ``counts[i]`` rows of ``rep`` (``partition docs occurrences offset length``)."""

    keys: list[bytes]
    counts: np.ndarray
    rep: np.ndarray
    _ends: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.keys)

    def cut(self, start: int, stop: int) -> TermBlock:
        """Keys ``start:stop`` with their rows (numpy views, a new key list)."""
        if start == 0 and stop == len(self.keys):
            return self
        if self._ends is None:
            self._ends = np.cumsum(self.counts)
        ends = self._ends
        first = int(ends[start - 1]) if start else 0
        last = int(ends[stop - 1]) if stop else 0
        return TermBlock(self.keys[start:stop], self.counts[start:stop], self.rep[first:last])

    @staticmethod
    def empty() -> TermBlock:
        return TermBlock([], np.zeros(0, np.int64), np.zeros((0, RECORD_WIDTH), np.int64))

    @staticmethod
    def concat(blocks: Sequence[TermBlock]) -> TermBlock:
        blocks = [b for b in blocks if len(b)]
        if len(blocks) == 1:
            return blocks[0]
        if not blocks:
            return TermBlock.empty()
        return TermBlock(list(itertools.chain.from_iterable(b.keys for b in blocks)),
                         np.concatenate([b.counts for b in blocks]),
                         np.concatenate([b.rep for b in blocks]))

    @staticmethod
    def of_items(items: Sequence[tuple[bytes, Sequence[Sequence[int]]]]) -> TermBlock:
        """The block of ``(key, records)`` pairs (keys sorted and distinct)."""
        if not items:
            return TermBlock.empty()
        counts = np.fromiter((len(v) for _, v in items), dtype=np.int64, count=len(items))
        rows = [r for _, v in items for r in v]
        rep = np.array(rows, dtype=np.int64).reshape(-1, RECORD_WIDTH)
        return TermBlock([k for k, _ in items], counts, rep)

    def items(self) -> list[tuple[bytes, tuple[tuple[int, ...], ...]]]:
        """The block as ``(key, records)`` pairs (for the copy-on-write path of small merges)."""
        rows = list(map(tuple, self.rep.tolist()))
        ends = np.cumsum(self.counts)
        starts = (ends - self.counts).tolist()
        ends = ends.tolist()
        return [(k, tuple(rows[a:b])) for k, a, b in zip(self.keys, starts, ends, strict=True)]


def strictly_increasing(keys: Sequence[bytes]) -> bool:
    """Whether ``keys`` are sorted and distinct (bytewise)."""
    return all(map(operator.lt, keys, itertools.islice(keys, 1, None)))


def checked_blocks(blocks: Iterable[TermBlock], fail: Callable[[str], Exception]
                   ) -> Iterator[TermBlock]:
    """``blocks``, raising ``fail(message)`` as soon as their keys are not sorted and distinct
    (within a block and across blocks)."""
    previous: bytes | None = None
    for block in blocks:
        if not len(block):
            continue
        if not strictly_increasing(block.keys) or (previous is not None
                                                   and block.keys[0] <= previous):
            raise fail("keys not sorted and distinct")
        if block.rep.shape != (int(block.counts.sum()), RECORD_WIDTH):
            raise fail("records do not match their counts")
        previous = block.keys[-1]
        yield block


# -- reading a tree's leaves ----------------------------------------------------------------

def _leaf_offsets(tree: LeafSource, offset: int, depth: int) -> Iterator[int]:
    if depth == 0:
        yield offset
        return
    node = tree.read_node(offset)
    if node.kind != INTERNAL:
        raise CorruptIndexError(tree.node_path, f"leaf at {offset} above the leaf level")
    for child in node.values:
        yield from _leaf_offsets(tree, child, depth - 1)


def leaf_blocks(tree: LeafSource, leaves_per_batch: int = LEAVES_PER_BATCH
                ) -> Iterator[TermBlock]:
    """Every entry of ``tree`` (as its ``manifest`` says) in key order, as blocks of the terms
    of ``leaves_per_batch`` consecutive leaves. Raises :class:`CorruptIndexError` on a damaged
    node or keys out of order."""
    root = tree.manifest["root"]
    if root is None:
        return
    offsets = _leaf_offsets(tree, root, tree.height)
    while batch := list(itertools.islice(offsets, leaves_per_batch)):
        payloads = []
        for offset in batch:
            kind, payload = tree.read_payload(offset)
            if kind != LEAF:
                raise CorruptIndexError(tree.node_path,
                                        f"internal node at {offset} at leaf level")
            payloads.append(payload)
        try:
            keys, _, counts, rep = unpack_columns(LEAF_TOOL, b"".join(payloads))
        except RecordFormatError as exc:
            raise CorruptIndexError(tree.node_path, f"leaves from {batch[0]}: {exc}") from exc
        yield TermBlock(keys, counts, rep.reshape(-1, RECORD_WIDTH))


# -- merging two sorted streams -------------------------------------------------------------

def combine(old: TermBlock, new: TermBlock) -> TermBlock:
    """One sorted block of the keys of ``old`` and ``new``: a key in both keeps its ``old``
    records of partitions ``new`` has no record for, then ``new``'s, ordered by partition."""
    if not len(new):
        return old
    if not len(old):
        return new
    keys = old.keys + new.keys
    order = sorted(range(len(keys)), key=keys.__getitem__)  # two sorted runs: a linear merge
    ordered = [keys[i] for i in order]
    first = np.ones(len(keys), dtype=bool)
    first[1:] = np.fromiter(map(operator.ne, ordered[1:], ordered), dtype=bool,
                            count=len(keys) - 1)
    group = np.empty(len(keys), dtype=np.int64)
    group[np.array(order, dtype=np.int64)] = np.cumsum(first) - 1
    out_keys = list(itertools.compress(ordered, first.tolist()))
    old_owner = np.repeat(group[:len(old)], old.counts)
    new_owner = np.repeat(group[len(old):], new.counts)
    span = int(max(old.rep[:, 0].max(initial=0), new.rep[:, 0].max(initial=0))) + 1
    keep = ~np.isin(old_owner * span + old.rep[:, 0], new_owner * span + new.rep[:, 0])
    owner = np.concatenate([old_owner[keep], new_owner])
    rows = np.concatenate([old.rep[keep], new.rep])
    order_rows = np.lexsort((rows[:, 0], owner))  # stable: by key, then partition
    counts = np.bincount(owner, minlength=len(out_keys)).astype(np.int64)
    return TermBlock(out_keys, counts, rows[order_rows])


class _Cursor:
    """A position in a stream of blocks: the current block and how much of it was taken."""

    def __init__(self, blocks: Iterable[TermBlock]) -> None:
        self._blocks = (b for b in blocks if len(b))
        self.block: TermBlock | None = None
        self.pos = 0
        self._advance()

    def _advance(self) -> None:
        self.block = next(self._blocks, None)
        self.pos = 0

    @property
    def last(self) -> bytes:
        assert self.block is not None
        return self.block.keys[-1]

    def take_upto(self, limit: bytes) -> TermBlock:
        """The current block's untaken keys ``<= limit``; moves to the next block when the
        current one is used up."""
        assert self.block is not None
        stop = bisect.bisect_right(self.block.keys, limit, self.pos)
        part = self.block.cut(self.pos, stop)
        self.pos = stop
        if stop == len(self.block):
            self._advance()
        return part

    def rest(self) -> Iterator[TermBlock]:
        while self.block is not None:
            yield self.block.cut(self.pos, len(self.block))
            self._advance()


def merge_streams(old: Iterable[TermBlock], new: Iterable[TermBlock]) -> Iterator[TermBlock]:
    """The sorted union of two sorted streams of blocks (see :func:`combine` for a key in
    both). Each step uses up the current block of one stream at least: a step holds one
    block of each."""
    a, b = _Cursor(old), _Cursor(new)
    while a.block is not None and b.block is not None:
        limit = min(a.last, b.last)
        yield combine(a.take_upto(limit), b.take_upto(limit))
    yield from a.rest()
    yield from b.rest()


# -- writing a tree bottom up ---------------------------------------------------------------

def _even_bounds(count: int, capacity: int) -> list[int]:
    """Cut ``count`` items into the fewest pieces of at most ``capacity``, nearly equal."""
    pieces = max(1, -(-count // capacity))
    return [p * count // pieces for p in range(pieces + 1)]


class TreeBuilder:
    """Write a sorted stream of blocks as a new tree through ``append`` (bytes in, offset at
    which they were written out). Leaves hold ``leaf_capacity`` terms and internal nodes
    ``fanout`` children, except the last few of each level, cut into nearly equal nodes (never
    under half full, unless the whole level fits one node). Feed :meth:`add`, then
    :meth:`finish` for the root."""

    def __init__(self, append: Callable[[bytes], int], leaf_capacity: int, fanout: int) -> None:
        self._append = append
        self.leaf_capacity = leaf_capacity
        self.fanout = fanout
        self._pending: list[TermBlock] = []
        self._pending_terms = 0
        self._levels: list[list[tuple[bytes, int]]] = [[]]  # (least key, offset) per height
        self.terms = 0
        self.bytes = 0

    def add(self, block: TermBlock) -> None:
        if not len(block):
            return
        self._pending.append(block)
        self._pending_terms += len(block)
        if self._pending_terms >= (FLUSH_LEAVES + 1) * self.leaf_capacity:
            whole = TermBlock.concat(self._pending)
            cap = self.leaf_capacity
            full = (len(whole) - cap) // cap * cap  # keep [cap, 2 cap) for the end
            self._write_leaves(whole.cut(0, full), list(range(0, full + 1, cap)))
            rest = whole.cut(full, len(whole))
            self._pending, self._pending_terms = [rest], len(rest)

    def _write_leaves(self, block: TermBlock, bounds: list[int]) -> None:
        """Leaves of ``block``'s keys ``bounds[i]:bounds[i + 1]``, encoded in one pass."""
        if not len(block):
            return
        data, ends = pack_columns(LEAF_TOOL, block.keys, np.zeros((len(block), 0), np.int64),
                                  block.counts, block.rep, record_ends=True)
        cuts = [0, *ends[np.array(bounds[1:], dtype=np.int64) - 1].tolist()]
        nodes = [node_bytes(LEAF, data[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
        offset = self._append(b"".join(nodes))
        self.bytes += sum(map(len, nodes))
        self.terms += len(block)
        for node, start in zip(nodes, bounds, strict=False):
            self._push(0, block.keys[start], offset)
            offset += len(node)

    def _push(self, height: int, key: bytes, offset: int) -> None:
        """A node of ``height`` written: file it under its parent-to-be; write that parent
        once ``fanout`` more children wait behind it (so ``fanout`` remain for the end)."""
        level = self._levels[height]
        level.append((key, offset))
        if len(level) >= 2 * self.fanout:
            parent = self._write_internal(level[:self.fanout])
            del level[:self.fanout]
            if len(self._levels) == height + 1:
                self._levels.append([])
            self._push(height + 1, *parent)

    def _write_internal(self, children: list[tuple[bytes, int]]) -> tuple[bytes, int]:
        """An internal node over ``children``; its least key and offset."""
        keys = [k for k, _ in children]
        payload = pack_columns(INTERNAL_TOOL, keys,
                               np.array([c for _, c in children], dtype=np.int64))
        node = node_bytes(INTERNAL, payload)
        offset = self._append(node)
        self.bytes += len(node)
        return keys[0], offset

    def finish(self) -> tuple[int | None, int]:
        """Write what is pending, level by level; return ``(root offset, height)``, ``(None,
        0)`` for a tree with no terms."""
        whole = TermBlock.concat(self._pending)
        self._pending, self._pending_terms = [], 0
        self._write_leaves(whole, _even_bounds(len(whole), self.leaf_capacity))
        height = 0
        while True:
            level = self._levels[height]
            above = height + 1 < len(self._levels) and bool(self._levels[height + 1])
            if not level:
                return None, 0
            if len(level) == 1 and not above:
                return level[0][1], height
            if len(self._levels) == height + 1:
                self._levels.append([])
            bounds = _even_bounds(len(level), self.fanout)
            for a, b in zip(bounds, bounds[1:], strict=False):
                self._levels[height + 1].append(self._write_internal(level[a:b]))
            level.clear()
            height += 1
