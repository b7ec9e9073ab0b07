"""Iterators over blocks of matching documents: the query plan of the seed's search time.

Layer: ``ranking.core``. Built by :func:`build_plan` from a parsed query
(:mod:`ranking.core.query`), read by the shard (:mod:`ranking.core.shard`), which pulls the
first ``n`` matches (:func:`collect` in crawl order, or
:func:`ranking.core.collect.collect_by_key` across importance-ordered partitions, which skips
from partition to partition) and scores them.

Every iterator yields :class:`~ranking.core.blocks.Block` objects in ascending key order
(partition, then Doc Rank order inside a partition) and supports:

* ``next_block()``: the next non-empty block of matches, or ``None`` when exhausted;
* ``skip_to(key)``: the next non-empty block of matches with keys ``>= key`` (keys before it
  are dropped), or ``None``. ``key`` must lie after every key already returned.
* ``estimate``: an upper estimate of the number of matches.

Kinds: :class:`WordIterator` (one term's postings, block-decoded, skipping by block headers),
:class:`IntersectIterator` (leapfrog on the maximum key under a time :class:`Budget`: when the
budget runs out it stops and the budget is marked *partial*), :class:`UnionIterator`,
:class:`DifferenceIterator` (negation), :class:`PhraseIterator` (consecutive positions; ``*``
is any run of words). Meta words are ordinary posting lists (frequency 0, no positions).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import reduce

import numpy as np

from indexer.core.reader import IndexBundleReader, PostingsCursor, TermStats

from .blocks import (
    Block,
    Column,
    IntArray,
    concat_blocks,
    decode_column_positions,
    key_index,
    make_keys,
    union_blocks,
)
from .query import Conjunct, Phrase

ALL_DOCUMENTS_TERM = "site:all"  # every document and link document carries it


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

    ``positional`` terms (words) carry a :class:`Column`; meta words carry none.
    """

    def __init__(self, cursor: PostingsCursor, term: str, positional: bool = True) -> None:
        self.cursor = cursor
        self.term = term
        self.positional = positional
        self.estimate = cursor.docs
        self.consumed = 0

    def _block(self, pb: object) -> Block | None:
        if pb is None:
            return None
        keys = make_keys(pb.partition, pb.doc_index)  # type: ignore[attr-defined]
        self.consumed += keys.size
        cols = {self.term: Column.of(pb)} if self.positional else {}  # type: ignore[arg-type]
        return Block(keys, cols)

    def next_block(self) -> Block | None:
        return self._block(self.cursor.next_block())

    def skip_to(self, key: int) -> Block | None:
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
        self.children = [_Pending(c) for c in children]
        self.arrays: list[_ArrayIterator] | None = None
        if children and all(isinstance(c, _ArrayIterator) for c in children):
            self.arrays = list(children)  # type: ignore[arg-type]
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
        kids = self.children
        while True:
            if self.budget is not None and self.budget.expired():
                return None
            if not all(k.fill() for k in kids):
                return None
            lo = max(int(k.block.keys[0]) for k in kids)  # type: ignore[union-attr]
            hi = min(int(k.block.keys[-1]) for k in kids)  # type: ignore[union-attr]
            if lo > hi:
                for k in kids:
                    if int(k.block.keys[-1]) < lo and not k.trim_to(lo):  # type: ignore[union-attr]
                        return None
                continue
            segs = []
            for k in kids:
                keys = k.block.keys  # type: ignore[union-attr]
                a = int(np.searchsorted(keys, lo))
                b = int(np.searchsorted(keys, hi, side="right"))
                segs.append((a, b))
            common = reduce(lambda x, y: np.intersect1d(x, y, assume_unique=True),
                            [k.block.keys[a:b] for k, (a, b) in  # type: ignore[union-attr]
                             zip(kids, segs, strict=True)])
            cols: dict[str, Column] = {}
            for k, (a, b) in zip(kids, segs, strict=True):
                blk = k.block
                assert blk is not None
                if common.size and blk.columns:
                    rows = a + np.searchsorted(blk.keys[a:b], common)
                    for term, col in blk.columns.items():
                        cols.setdefault(term, col.take(rows))
                k.block = blk.take(slice(b, None))
            if common.size:
                return Block(common, cols)

    def skip_to(self, key: int) -> Block | None:
        if self.arrays is not None:
            for a in self.arrays:
                a.at = max(a.at, int(np.searchsorted(a.all_keys, key)))
            # a skip starts a new run (the next partition, for ranking.core.collect, which
            # wants only its first matches): the chunk grows again from the first size
            self.chunk = self.FIRST_CHUNK
            return self.next_block()
        for k in self.children:
            if not k.trim_to(key):
                return None
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
            starts = starts[np.isin(starts + offset, codes(term))]
        row = starts // big
        starts = starts[(starts % big) >= prev_end[row]]
        row = starts // big
        first_rows, first_idx = np.unique(row, return_index=True)
        found = np.zeros(rows, dtype=bool)
        found[first_rows] = True
        ok &= found
        prev_end[first_rows] = starts[first_idx] % big + len(seg)
    return ok


class PhraseIterator(DocIterator):
    """Matches of ``child`` (which must carry the phrase words' columns) holding the phrase."""

    def __init__(self, child: DocIterator, phrase: Phrase, decoder: PostingsCursor,
                 budget: Budget | None = None) -> None:
        self.child = child
        self.phrase = phrase
        self.decoder = decoder
        self.budget = budget
        self.estimate = child.estimate

    def _filter(self, block: Block | None) -> Block | None:
        while block is not None:
            words = set(self.phrase.words)
            positions = {t: decode_column_positions(self.decoder, block.keys, block.columns[t])
                         for t in words}
            mask = phrase_mask(self.phrase.terms, positions, len(block))
            if mask.any():
                return block.take(np.flatnonzero(mask)) if not mask.all() else block
            if self.budget is not None and self.budget.expired():
                return None
            block = self.child.next_block()
        return None

    def next_block(self) -> Block | None:
        return self._filter(self.child.next_block())

    def skip_to(self, key: int) -> Block | None:
        return self._filter(self.child.skip_to(key))


def collect(iterator: DocIterator, n: int) -> tuple[Block, bool]:
    """The first ``n`` matches (fewer when the iterator ends or the budget runs out) and
    whether the iterator was exhausted."""
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


# -- plans -------------------------------------------------------------------------------------


@dataclass(slots=True)
class Plan:
    """The iterator tree of a query, its word iterators (for statistics) and a positions
    decoder."""

    root: DocIterator
    words: dict[str, WordIterator | DecodedWordIterator]
    decoder: PostingsCursor
    budget: Budget


class _Builder:
    def __init__(self, reader: IndexBundleReader, budget: Budget,
                 filters: Callable[[str], IntArray | None] | None = None,
                 decoded: Callable[[str, bool], DecodedList | None] | None = None) -> None:
        self.reader = reader
        self.budget = budget
        self.filters = filters
        self.decoded = decoded
        self.words: dict[str, WordIterator | DecodedWordIterator] = {}
        self.stats: dict[str, TermStats] = {}

    def word(self, term: str, positional: bool) -> DocIterator:
        if not positional and self.filters is not None:
            keys = self.filters(term)
            if keys is not None:
                return KeysIterator(keys) if keys.size else EmptyIterator()
        if self.decoded is not None:
            got = self.decoded(term, positional)
            if got is not None:
                self.stats[term] = TermStats(got.docs, got.occurrences)
                if got.docs == 0:
                    return EmptyIterator()
                dit = DecodedWordIterator(got, term, positional)
                if positional:
                    self.words.setdefault(term, dit)
                return dit
        cursor = self.reader.postings(term)
        self.stats[term] = cursor.stats
        if cursor.docs == 0:
            return EmptyIterator()
        it = WordIterator(cursor, term, positional)
        if positional:
            self.words.setdefault(term, it)
        return it

    def intersect(self, items: list[DocIterator]) -> DocIterator:
        if any(isinstance(i, EmptyIterator) for i in items):
            return EmptyIterator()
        if len(items) == 1:
            return items[0]
        items.sort(key=lambda i: i.estimate)
        return IntersectIterator(items, self.budget)

    def conjunct(self, c: Conjunct, decoder: PostingsCursor) -> DocIterator:
        items: list[DocIterator] = []
        for term in dict.fromkeys(c.all_terms):
            items.append(self.word(term, True))
        for term in dict.fromkeys((*c.meta, *c.auto_meta)):
            items.append(self.word(term, False))
        if not items:
            items.append(self.word(ALL_DOCUMENTS_TERM, False))
        root = self.intersect(items)
        for phrase in c.phrases:
            if not isinstance(root, EmptyIterator):
                root = PhraseIterator(root, phrase, decoder, self.budget)
        negatives: list[DocIterator] = []
        for term in c.negated_terms:
            it = self.word(term, False)
            if not isinstance(it, EmptyIterator):
                negatives.append(it)
        for phrase in c.negated_phrases:
            inner = self.intersect([self.word(t, True) for t in dict.fromkeys(phrase.words)])
            if not isinstance(inner, EmptyIterator):
                negatives.append(PhraseIterator(inner, phrase, decoder, self.budget))
        if negatives and not isinstance(root, EmptyIterator):
            root = DifferenceIterator(root, negatives)
        return root


def build_plan(reader: IndexBundleReader, disjuncts: Sequence[Conjunct], budget: Budget,
               filters: Callable[[str], IntArray | None] | None = None,
               decoded: Callable[[str, bool], DecodedList | None] | None = None) -> Plan:
    """One iterator tree for the disjuncts of a query (a union when there are several).

    ``filters(term)`` may return the decoded keys of a meta word (a filter cache); ``None``
    means "read its postings"; ``decoded(term, positional)`` may return the term's whole
    decoded list (a decoded-postings cache), ``None`` meaning "decode it block by block"."""
    builder = _Builder(reader, budget, filters, decoded)
    decoder = PostingsCursor(reader, [], TermStats(0, 0))
    roots = [builder.conjunct(c, decoder) for c in disjuncts]
    roots = [r for r in roots if not isinstance(r, EmptyIterator)]
    if not roots:
        root: DocIterator = EmptyIterator()
    elif len(roots) == 1:
        root = roots[0]
    else:
        root = UnionIterator(roots, budget)
    return Plan(root, builder.words, decoder, budget)


__all__ = [
    "ALL_DOCUMENTS_TERM", "Budget", "DecodedList", "DecodedWordIterator", "DifferenceIterator", "DocIterator", "EmptyIterator",
    "IntersectIterator", "KeysIterator", "Plan", "PhraseIterator", "UnionIterator", "WordIterator",
    "build_plan", "collect", "key_index", "phrase_mask",
]
