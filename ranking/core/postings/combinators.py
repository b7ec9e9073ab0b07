"""Combinators of document iterators: intersection, union, negation and phrases.

Layer: ``ranking.core``. They combine :mod:`ranking.core.postings.iterators`' leaves (and each other)
under the same contract (blocks in ascending key order, ``next_block``, ``skip_to``,
``estimate``): :class:`IntersectIterator` (leapfrog on the maximum key under a time
:class:`~ranking.core.postings.iterators.Budget`: when the budget runs out it stops and the budget is
marked *partial*), :class:`UnionIterator`, :class:`DifferenceIterator` (negation),
:class:`PhraseIterator` (consecutive positions; ``*`` is any run of words, checked lazily on
the documents that hold every word, within a per-partition bound of :mod:`ranking.core.postings.limits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

import numpy as np

from indexer.core.bundle.reader import PostingsCursor
from ranking.core.postings.blocks import (
    KEY_SHIFT,
    Block,
    Column,
    IntArray,
    concat_blocks,
    decode_column_positions,
    union_blocks,
)
from ranking.core.postings.iterators import Budget, DecodedWordIterator, DocIterator, KeysIterator
from ranking.core.query.parser import Phrase


class _Pending:
    """A child iterator and the not yet used part of its current block."""

    __slots__ = ("child", "block", "done")

    def __init__(self, child: DocIterator) -> None:
        self.child = child
        self.block: Block | None = None
        self.done = False

    def fill(self) -> bool:
        while not self.done and (self.block is None or not len(self.block)):
            self.block = self.child.next_block()
            if self.block is None:
                self.done = True
        return not self.done

    def trim_to(self, key: int) -> bool:
        """Drop keys < key (skipping blocks through the child when the block ends before)."""
        if self.done:
            return False
        if self.block is not None and len(self.block) and int(self.block.keys[-1]) >= key:
            cut = int(np.searchsorted(self.block.keys, key))
            if cut:
                self.block = self.block.take(slice(cut, None))
            return True
        self.block = self.child.skip_to(key)
        if self.block is None:
            self.done = True
            return False
        return True


_ArrayIterator = DecodedWordIterator | KeysIterator


class IntersectIterator(DocIterator):
    """Documents in every child: leapfrog to the maximum current key, then intersect the
    overlapping block ranges with numpy. Stops when ``budget`` expires (marking it partial).

    Lists read block by block (:class:`WordIterator`: long lists) lead the leapfrog; lists
    held in memory (:class:`DecodedWordIterator`, :class:`KeysIterator`) move it forward by
    binary search and filter each round's common keys at once.

    When every child holds its whole list in memory (:class:`DecodedWordIterator`,
    :class:`KeysIterator`: the usual case, the shard keeps decoded lists), the leapfrog runs
    on the arrays: the first child (the smallest list; the plan sorts them) is the driver, a
    chunk of its keys is looked up in every other list at once by binary search, and the chunk
    doubles after each round (from ``FIRST_CHUNK`` up to ``MAX_CHUNK``), so a sparse
    intersection takes a few numpy calls per list instead of a Python step per block.
    """

    FIRST_CHUNK = 256
    MAX_CHUNK = 1 << 16

    def __init__(self, children: Sequence[DocIterator], budget: Budget | None = None) -> None:
        self.arrays: list[_ArrayIterator] | None = None
        if children and all(isinstance(c, _ArrayIterator) for c in children):
            self.arrays = list(children)  # type: ignore[arg-type]
        # otherwise the lists read block by block lead the leapfrog and the in-memory ones
        # are looked up by binary search
        self.streams = [_Pending(c) for c in children if not isinstance(c, _ArrayIterator)]
        self.held: list[_ArrayIterator] = [c for c in children if isinstance(c, _ArrayIterator)]
        self.chunk = self.FIRST_CHUNK
        self.budget = budget
        self.estimate = min((c.estimate for c in children), default=0)

    def _next_from_arrays(self, kids: list[_ArrayIterator]) -> Block | None:
        driver, others = kids[0], kids[1:]
        dkeys = driver.all_keys
        while True:
            if self.budget is not None and self.budget.expired():
                return None
            if any(k.at >= k.all_keys.size for k in kids):
                return None
            # leapfrog the driver to the largest current key of the others
            lo = max((int(k.all_keys[k.at]) for k in others), default=int(dkeys[driver.at]))
            start = driver.at + int(np.searchsorted(dkeys[driver.at:], lo))
            end = min(start + self.chunk, dkeys.size)
            self.chunk = min(self.chunk * 2, self.MAX_CHUNK)
            driver.consumed += end - driver.at
            driver.at = end
            cand = dkeys[start:end]
            if not cand.size:
                return None
            ok = np.ones(cand.size, dtype=bool)
            rows: list[IntArray] = [np.arange(start, end, dtype=np.int64)]
            for k in others:
                keys = k.all_keys
                at = k.at + np.searchsorted(keys[k.at:], cand)
                np.minimum(at, keys.size - 1, out=at)
                found = keys[at] == cand
                ok &= found
                rows.append(at)
                after = int(at[-1]) + int(found[-1])  # past the chunk's last key
                k.consumed += after - k.at
                k.at = after
            hit = np.flatnonzero(ok)
            if hit.size:
                cols: dict[str, Column] = {}
                for k, r in zip(kids, rows, strict=True):
                    for term, col in k.columns_at(r[hit]).items():
                        cols.setdefault(term, col)
                return Block(cand[hit], cols)

    def next_block(self) -> Block | None:
        if self.arrays is not None:
            return self._next_from_arrays(self.arrays)
        streams, held = self.streams, self.held
        while True:
            if self.budget is not None and self.budget.expired():
                return None
            if not all(k.fill() for k in streams):
                return None
            lo = max(int(k.block.keys[0]) for k in streams)  # type: ignore[union-attr]
            hi = min(int(k.block.keys[-1]) for k in streams)  # type: ignore[union-attr]
            for a in held:  # an in-memory list moves the leapfrog by binary search
                keys = a.all_keys
                a.at += int(np.searchsorted(keys[a.at:], lo))
                if a.at >= keys.size:
                    return None
                lo = max(lo, int(keys[a.at]))
            if lo > hi:
                for k in streams:
                    if int(k.block.keys[-1]) < lo and not k.trim_to(lo):  # type: ignore[union-attr]
                        return None
                continue
            found = self._common(lo, hi)
            if found is not None:
                return found

    def _common(self, lo: int, hi: int) -> Block | None:
        """The matches in ``[lo, hi]``: the streams' blocks intersected, then looked up in the
        in-memory lists; every child is left past ``hi``."""
        streams, held = self.streams, self.held
        segs = []
        for k in streams:
            keys = k.block.keys  # type: ignore[union-attr]
            segs.append((int(np.searchsorted(keys, lo)),
                         int(np.searchsorted(keys, hi, side="right"))))
        common = reduce(lambda x, y: np.intersect1d(x, y, assume_unique=True),
                        [k.block.keys[a:b] for k, (a, b) in  # type: ignore[union-attr]
                         zip(streams, segs, strict=True)])
        ok = np.ones(common.size, dtype=bool)
        held_rows = []
        for a in held:
            keys = a.all_keys
            at = a.at + np.searchsorted(keys[a.at:], common)
            np.minimum(at, keys.size - 1, out=at)
            ok &= keys[at] == common
            held_rows.append(at)
            a.at += int(np.searchsorted(keys[a.at:], hi, side="right"))
        hit = np.flatnonzero(ok)
        cols: dict[str, Column] = {}
        for k, (a, b) in zip(streams, segs, strict=True):
            blk = k.block
            assert blk is not None
            if hit.size and blk.columns:
                rows = a + np.searchsorted(blk.keys[a:b], common[hit])
                for term, col in blk.columns.items():
                    cols.setdefault(term, col.take(rows))
            k.block = blk.take(slice(b, None))
        if not hit.size:
            return None
        for a, at in zip(held, held_rows, strict=True):
            for term, col in a.columns_at(at[hit]).items():
                cols.setdefault(term, col)
        return Block(common[hit], cols)

    def skip_to(self, key: int) -> Block | None:
        if self.arrays is not None:
            for a in self.arrays:
                a.at = max(a.at, int(np.searchsorted(a.all_keys, key)))
            # a skip starts a new run (the next partition, for ranking.core.postings.collect, which
            # wants only its first matches): the chunk grows again from the first size
            self.chunk = self.FIRST_CHUNK
            return self.next_block()
        for k in self.streams:
            if not k.trim_to(key):
                return None
        for a in self.held:
            a.at = max(a.at, int(np.searchsorted(a.all_keys, key)))
        return self.next_block()


class UnionIterator(DocIterator):
    """Documents in any child; a block covers keys up to the smallest last key of the children's
    current blocks, so every key is emitted once with all its columns."""

    def __init__(self, children: Sequence[DocIterator], budget: Budget | None = None) -> None:
        self.children = [_Pending(c) for c in children]
        self.budget = budget
        self.estimate = sum(c.estimate for c in children)

    def next_block(self) -> Block | None:
        while True:
            if self.budget is not None and self.budget.expired():
                return None
            live = [k for k in self.children if k.fill()]
            if not live:
                return None
            hi = min(int(k.block.keys[-1]) for k in live)  # type: ignore[union-attr]
            parts = []
            for k in live:
                blk = k.block
                assert blk is not None
                b = int(np.searchsorted(blk.keys, hi, side="right"))
                parts.append(blk.take(slice(0, b)))
                k.block = blk.take(slice(b, None))
            out = union_blocks(parts)
            if len(out):
                return out

    def skip_to(self, key: int) -> Block | None:
        for k in self.children:
            k.trim_to(key)
        return self.next_block()


class DifferenceIterator(DocIterator):
    """Documents of ``positive`` in none of ``negatives`` (the seed's negation)."""

    def __init__(self, positive: DocIterator, negatives: Sequence[DocIterator]) -> None:
        self.positive = positive
        self.negatives = [_Pending(n) for n in negatives]
        self.estimate = positive.estimate

    def _filter(self, block: Block | None) -> Block | None:
        while block is not None:
            first, last = int(block.keys[0]), int(block.keys[-1])
            drop = np.zeros(len(block), dtype=bool)
            for neg in self.negatives:
                if not neg.trim_to(first):
                    continue
                while neg.block is not None and len(neg.block):
                    nk = neg.block.keys
                    drop |= np.isin(block.keys, nk, assume_unique=True)
                    if int(nk[-1]) > last:
                        break
                    neg.block = None
                    if not neg.fill():
                        break
            if not drop.all():
                return block.take(np.flatnonzero(~drop)) if drop.any() else block
            block = self.positive.next_block()
        return None

    def next_block(self) -> Block | None:
        return self._filter(self.positive.next_block())

    def skip_to(self, key: int) -> Block | None:
        return self._filter(self.positive.skip_to(key))


def _in_sorted(values: IntArray, table: IntArray) -> np.ndarray:
    """Which ``values`` are in the ascending array ``table`` (a binary search each: the codes
    of :func:`phrase_mask` are sorted, so no hashing or sorting is needed)."""
    if not table.size:
        return np.zeros(values.size, dtype=bool)
    at = np.searchsorted(table, values)
    np.minimum(at, table.size - 1, out=at)
    return table[at] == values


def phrase_mask(phrase: Sequence[str | None], positions: dict[str, tuple[IntArray, IntArray]],
                rows: int) -> np.ndarray:
    """Rows whose positions hold the phrase: terms at consecutive positions, ``None`` = any run
    of words (possibly empty). ``positions[term]`` = (all positions row after row, counts)."""
    segments: list[list[str]] = [[]]
    for term in phrase:
        if term is None:
            if segments[-1]:
                segments.append([])
        else:
            segments[-1].append(term)
    segments = [s for s in segments if s]
    ok = np.ones(rows, dtype=bool)
    prev_end = np.zeros(rows, dtype=np.int64)  # earliest position the next segment may start
    big = np.int64(1) << 32

    def codes(term: str) -> IntArray:
        pos, counts = positions[term]
        return np.repeat(np.arange(rows, dtype=np.int64), counts) * big + pos

    for seg in segments:
        starts = codes(seg[0])
        for offset, term in enumerate(seg[1:], start=1):
            if not starts.size:
                break
            starts = starts[_in_sorted(starts + offset, codes(term))]
        row = starts // big
        starts = starts[(starts % big) >= prev_end[row]]
        row = starts // big
        # rows ascend: the first start of each row
        first_idx = np.flatnonzero(np.diff(row, prepend=-1))
        first_rows = row[first_idx]
        found = np.zeros(rows, dtype=bool)
        found[first_rows] = True
        ok &= found
        prev_end[first_rows] = starts[first_idx] % big + len(seg)
    return ok


class PhraseIterator(DocIterator):
    """Matches of ``child`` (which must carry the phrase words' columns) holding the phrase.

    The child's matches (documents holding every word: the cheap doc-id match) are checked
    against their positions lazily, a batch at a time in key order (``FIRST_BATCH`` candidates,
    doubling up to ``MAX_BATCH``), so that a consumer wanting its first ``n`` matches has
    positions decoded for few more candidates than it needs. With ``max_checks`` (> 0) at
    most that many candidates of each partition are checked, the rest of the partition is
    skipped; with ``total_checks`` (> 0) at most that many in all, then it ends; either way
    the iterator notes that it was ``truncated`` (:mod:`ranking.core.postings.limits`).
    ``checked`` counts the candidates checked. Stops when ``budget`` expires.
    """

    FIRST_BATCH = 256
    MAX_BATCH = 8192

    def __init__(self, child: DocIterator, phrase: Phrase, decoder: PostingsCursor,
                 budget: Budget | None = None, max_checks: int = 0,
                 total_checks: int = 0) -> None:
        self.child = child
        self.phrase = phrase
        self.decoder = decoder
        self.budget = budget
        self.estimate = child.estimate
        self.max_checks = max_checks
        self.total_checks = total_checks
        self.checked = 0
        self.truncated = False
        self.pending = Block.empty()  # the child's matches not checked yet
        self.batch = self.FIRST_BATCH
        self._done = False  # the child ran out
        self._part = -1  # the partition being checked, and how many of it were
        self._part_checked = 0

    def _fill(self) -> None:
        """Pull the child's blocks until a batch of candidates is pending (or it runs out)."""
        parts = [self.pending]
        have = len(self.pending)
        while have < self.batch and not self._done:
            block = self.child.next_block()
            if block is None:
                self._done = True
                break
            parts.append(block)
            have += len(block)
        self.pending = concat_blocks(parts)

    def _skip_partition(self, part: int) -> None:
        """Leave the rest of partition ``part`` unchecked (its bound is reached)."""
        self.truncated = True
        nxt = (part + 1) << KEY_SHIFT
        keys = self.pending.keys
        if len(keys) and int(keys[-1]) >= nxt:
            self.pending = self.pending.take(slice(int(np.searchsorted(keys, nxt)), None))
            return
        self.pending = Block.empty()
        if not self._done:
            block = self.child.skip_to(nxt)
            if block is None:
                self._done = True
            else:
                self.pending = block

    def _take(self) -> Block | None:
        """The next candidates to check: at most a batch, of one partition, within its
        bound; None when the child has no more."""
        while True:
            if len(self.pending) < self.batch and not self._done:
                self._fill()
            keys = self.pending.keys
            if not len(keys):
                return None
            part = int(keys[0]) >> KEY_SHIFT
            if part != self._part:
                self._part, self._part_checked = part, 0
            room = min(int(np.searchsorted(keys, (part + 1) << KEY_SHIFT)), self.batch)
            if self.max_checks > 0:
                room = min(room, self.max_checks - self._part_checked)
            if self.total_checks > 0:
                if self.checked >= self.total_checks:
                    self.truncated = True
                    return None
                room = min(room, self.total_checks - self.checked)
            if room <= 0:
                self._skip_partition(part)
                continue
            out = self.pending.take(slice(0, room))
            self.pending = self.pending.take(slice(room, None))
            self._part_checked += room
            self.checked += room
            return out

    def next_block(self) -> Block | None:
        while True:
            if self.budget is not None and self.budget.expired():
                return None
            block = self._take()
            if block is None:
                return None
            self.batch = min(self.batch * 2, self.MAX_BATCH)
            positions = {t: decode_column_positions(self.decoder, block.keys, block.columns[t])
                         for t in set(self.phrase.words)}
            mask = phrase_mask(self.phrase.terms, positions, len(block))
            if mask.any():
                return block.take(np.flatnonzero(mask)) if not mask.all() else block

    def skip_to(self, key: int) -> Block | None:
        keys = self.pending.keys
        if len(keys) and int(keys[-1]) >= key:
            self.pending = self.pending.take(slice(int(np.searchsorted(keys, key)), None))
        elif not self._done:
            block = self.child.skip_to(key)
            self.pending = Block.empty() if block is None else block
            self._done = block is None
        else:
            self.pending = Block.empty()
        return self.next_block()
