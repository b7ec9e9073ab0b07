"""A document's terms with their word positions, held as arrays: what the analyzer makes.

Layer: ``indexer.core.text``. :meth:`.analyzer.TextAnalyzer.positions` returns a
:class:`TermPositions`; the page processor keeps it as ``ProcessedPage.terms`` and the page's
``IndexDocument.terms``, and the index's encoders (``indexer.core.documents``) read its arrays
as they are. The seed's fetcher builds "a mini inverted index" of each page (seed 000, "the
fetcher ... builds a mini-inverted index"): here that index stays in three arrays from the
analyzer to the stored blob, so no position is ever a Python int on the way (a page has
thousands; turning them into ints and back cost more than stemming the page's words).

It is a read-only ``Mapping[str, tuple[int, ...]]``: code that reads one term's positions, or
walks ``items()``, sees what a dict of tuples would give, and compares equal to one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import accumulate, chain, pairwise
from typing import Any

import numpy as np
import numpy.typing as npt


class TermPositions(Mapping[str, tuple[int, ...]]):
    """``terms[i]`` occurs ``counts[i]`` times, at ``positions[starts[i]:starts[i + 1]]``
    (strictly increasing), where ``starts`` is the running sum of ``counts`` from 0.

    Terms are distinct, in the order their first position has (the analyzer's order). The
    arrays are int64 and never written to after construction."""

    __slots__ = ("terms", "counts", "positions", "_number", "_starts")

    def __init__(self, terms: list[str], counts: npt.NDArray[np.int64],
                 positions: npt.NDArray[np.int64]) -> None:
        self.terms = terms
        self.counts = counts
        self.positions = positions
        self._number: dict[str, int] | None = None
        self._starts: list[int] | None = None

    @classmethod
    def of(cls, terms: Mapping[str, Sequence[int]]) -> TermPositions:
        """``terms`` as a :class:`TermPositions` (itself when it is one)."""
        if isinstance(terms, TermPositions):
            return terms
        values = list(terms.values())
        counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        return cls(list(terms), counts, np.fromiter(chain.from_iterable(values),
                                                    dtype=np.int64, count=int(counts.sum())))

    @classmethod
    def grouped(cls, flat: list[str], start: int = 0) -> TermPositions:
        """The terms of the sequence ``flat``, the first at position ``start``: each
        distinct term with the positions it occurs at (one stable sort of the terms'
        numbers, no Python step per position)."""
        if not flat:
            return cls([], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        distinct = list(dict.fromkeys(flat))
        number = dict(zip(distinct, range(len(distinct)), strict=True))
        numbers = np.fromiter(map(number.__getitem__, flat), dtype=np.int32, count=len(flat))
        grouped = cls(distinct, np.bincount(numbers, minlength=len(distinct)).astype(np.int64),
                      np.argsort(numbers, kind="stable").astype(np.int64) + start)
        grouped._number = number
        return grouped

    def followed_by(self, later: TermPositions) -> TermPositions:
        """This document's terms with ``later``'s added, every position of ``later`` being
        after all of this one's (an indexing plugin's regions after the page): a term of both
        keeps its positions and gains ``later``'s; new terms come last, in ``later``'s order."""
        if not later.terms:
            return self
        number = dict(self._lookup())
        for term in later.terms:
            number.setdefault(term, len(number))
        terms = list(number)
        ids = np.concatenate((
            np.repeat(np.arange(len(self.terms), dtype=np.int64), self.counts),
            np.repeat(np.fromiter(map(number.__getitem__, later.terms), dtype=np.int64,
                                  count=len(later.terms)), later.counts)))
        order = np.argsort(ids, kind="stable")
        merged = TermPositions(terms, np.bincount(ids, minlength=len(terms)).astype(np.int64),
                               np.concatenate((self.positions, later.positions))[order])
        merged._number = number
        return merged

    def _lookup(self) -> dict[str, int]:
        if self._number is None:
            self._number = dict(zip(self.terms, range(len(self.terms)), strict=True))
        return self._number

    def _bounds(self) -> list[int]:
        if self._starts is None:
            self._starts = list(accumulate(self.counts.tolist(), initial=0))
        return self._starts

    # --- Mapping --------------------------------------------------------------------------

    def __getitem__(self, term: str) -> tuple[int, ...]:
        i = self._lookup()[term]
        bounds = self._bounds()
        return tuple(self.positions[bounds[i]:bounds[i + 1]].tolist())

    def __contains__(self, term: object) -> bool:
        return term in self._lookup()

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)

    def values(self) -> list[tuple[int, ...]]:  # type: ignore[override]
        """Every term's positions, in the terms' order (a list, made in one pass)."""
        flat = self.positions.tolist()
        bounds = self._bounds()
        return [tuple(flat[a:b]) for a, b in pairwise(bounds)]

    def items(self) -> list[tuple[str, tuple[int, ...]]]:  # type: ignore[override]
        """``(term, positions)`` pairs in the terms' order (a list, made in one pass)."""
        return list(zip(self.terms, self.values(), strict=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TermPositions):
            return (self.terms == other.terms and np.array_equal(self.counts, other.counts)
                    and np.array_equal(self.positions, other.positions))
        if isinstance(other, Mapping):
            return dict(self.items()) == {k: tuple(v) for k, v in other.items()}
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TermPositions({dict(self.items())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (TermPositions, (self.terms, self.counts, self.positions))
