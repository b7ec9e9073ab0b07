"""The query plan: one iterator tree for the disjuncts of a parsed query.

Layer: ``ranking.core``. :func:`build_plan` turns a parsed query (:mod:`ranking.core.query.parser`)
into leaves (:mod:`ranking.core.postings.iterators`) joined by combinators
(:mod:`ranking.core.postings.combinators`), reading a term's postings from the shard's caches when it
has them (a filter meta word's decoded keys, a whole decoded list). The shard
(:mod:`ranking.core.postings.tiers`, :mod:`ranking.core.shard.matching`) pulls the first ``n`` matches from
the plan's root and scores them with the plan's word iterators and positions decoder.

Each long list's leaf and each phrase filter get their share of the shard's
:class:`~ranking.core.postings.limits.ReadLimits` (:meth:`~ranking.core.postings.limits.ReadLimits.bounds`: per
partition once partitions are importance-ordered, from the start in crawl order); negated terms and phrases are never
bounded, since a negation must see its whole list. :attr:`Plan.truncated` says whether a bound
was reached (the answer is then partial).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from indexer.core.bundle.reader import IndexBundleReader, PostingsCursor, TermStats
from ranking.core.postings.blocks import IntArray
from ranking.core.postings.combinators import (
    DifferenceIterator,
    IntersectIterator,
    PhraseIterator,
    UnionIterator,
)
from ranking.core.postings.iterators import (
    Budget,
    DecodedList,
    DecodedWordIterator,
    DocIterator,
    EmptyIterator,
    KeysIterator,
    WordIterator,
)
from ranking.core.postings.limits import UNBOUNDED, ReadLimits
from ranking.core.query.parser import Conjunct

ALL_DOCUMENTS_TERM = "site:all"  # every document and link document carries it


@dataclass(slots=True)
class Plan:
    """The iterator tree of a query, its word iterators (for statistics) and a positions
    decoder."""

    root: DocIterator
    words: dict[str, WordIterator | DecodedWordIterator]
    decoder: PostingsCursor
    budget: Budget
    bounded: list[WordIterator | PhraseIterator] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        """Whether a bound of :mod:`ranking.core.postings.limits` left part of a list unread."""
        return any(b.truncated for b in self.bounded)

    @property
    def blocks_read(self) -> int:
        """Posting blocks decoded by the plan's bounded (long list) leaves."""
        return sum(b.blocks for b in self.bounded if isinstance(b, WordIterator))


class _Builder:
    def __init__(self, reader: IndexBundleReader, budget: Budget,
                 filters: Callable[[str], IntArray | None] | None = None,
                 decoded: Callable[[str, bool], DecodedList | None] | None = None,
                 limits: ReadLimits = UNBOUNDED, ordered: bool = False,
                 phrase_filters: bool = True) -> None:
        self.reader = reader
        self.phrase_filters = phrase_filters
        self.budget = budget
        self.filters = filters
        self.decoded = decoded
        self.words: dict[str, WordIterator | DecodedWordIterator] = {}
        self.stats: dict[str, TermStats] = {}
        partitions = len(getattr(reader, "partitions", ()))
        self.max_blocks, self.total_blocks, self.max_checks, self.total_checks = \
            limits.bounds(partitions, ordered)
        self.bounded: list[WordIterator | PhraseIterator] = []

    def word(self, term: str, positional: bool, bounded: bool = True) -> DocIterator:
        """The leaf of ``term``: a filter's kept keys, a kept decoded list, or its postings
        read block by block (within the per-partition bound unless not ``bounded``)."""
        if not positional and self.filters is not None:
            keys = self.filters(term)
            if keys is not None:
                return KeysIterator(keys) if keys.size else EmptyIterator()
        if self.decoded is not None:
            got = self.decoded(term, positional)
            if got is not None:
                return self._leaf(term, TermStats(got.docs, got.occurrences), positional,
                                  lambda: DecodedWordIterator(got, term, positional))
        cursor = self.reader.postings(term)
        return self._leaf(term, cursor.stats, positional,
                          lambda: self._bounded(WordIterator(
                              cursor, term, positional, self.max_blocks if bounded else 0,
                              self.total_blocks if bounded else 0)))

    def _bounded(self, it: WordIterator | PhraseIterator) -> WordIterator | PhraseIterator:
        """``it``, noted among the plan's bounded iterators when it has a bound."""
        bound = it.max_blocks + it.total_blocks if isinstance(it, WordIterator) else \
            it.max_checks + it.total_checks
        if bound > 0:
            self.bounded.append(it)
        return it

    def _leaf(self, term: str, stats: TermStats, positional: bool,
              make: Callable[[], DocIterator]) -> DocIterator:
        """The iterator ``make`` builds over a term's list (an empty one for a term no document
        has), with its statistics noted; a positional one is kept for phrase checks."""
        self.stats[term] = stats
        if stats.docs == 0:
            return EmptyIterator()
        it = make()
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
        for phrase in c.phrases if self.phrase_filters else ():
            if not isinstance(root, EmptyIterator):
                root = self._bounded(PhraseIterator(root, phrase, decoder, self.budget,
                                                    self.max_checks, self.total_checks))
        negatives: list[DocIterator] = []
        for term in c.negated_terms:
            it = self.word(term, False, bounded=False)
            if not isinstance(it, EmptyIterator):
                negatives.append(it)
        for phrase in c.negated_phrases:
            inner = self.intersect([self.word(t, True, bounded=False)
                                    for t in dict.fromkeys(phrase.words)])
            if not isinstance(inner, EmptyIterator):
                negatives.append(PhraseIterator(inner, phrase, decoder, self.budget))
        if negatives and not isinstance(root, EmptyIterator):
            root = DifferenceIterator(root, negatives)
        return root


def build_plan(reader: IndexBundleReader, disjuncts: Sequence[Conjunct], budget: Budget,
               filters: Callable[[str], IntArray | None] | None = None,
               decoded: Callable[[str, bool], DecodedList | None] | None = None,
               limits: ReadLimits = UNBOUNDED, ordered: bool = False,
               phrase_filters: bool = True) -> Plan:
    """One iterator tree for the disjuncts of a query (a union when there are several).

    ``filters(term)`` may return the decoded keys of a meta word (a filter cache); ``None``
    means "read its postings"; ``decoded(term, positional)`` may return the term's whole
    decoded list (a decoded-postings cache), ``None`` meaning "decode it block by block"
    (within ``limits``' bounds: per partition when the partitions are importance-``ordered``,
    from the start in crawl order, :meth:`ReadLimits.bounds`). Without ``phrase_filters``
    a conjunct's quoted phrases are left to the caller (its words are still required: the
    exact search, :mod:`ranking.core.shard.exact`, checks them on the documents it scores)."""
    builder = _Builder(reader, budget, filters, decoded, limits, ordered, phrase_filters)
    decoder = PostingsCursor(reader, [], TermStats(0, 0))
    roots = [builder.conjunct(c, decoder) for c in disjuncts]
    roots = [r for r in roots if not isinstance(r, EmptyIterator)]
    if not roots:
        root: DocIterator = EmptyIterator()
    elif len(roots) == 1:
        root = roots[0]
    else:
        root = UnionIterator(roots, budget)
    return Plan(root, builder.words, decoder, budget, builder.bounded)
