"""Bounds on one shard's work per query: posting blocks read per long list, phrase checks.

The default search is exact (:mod:`ranking.core.shard.exact`): it reads every match and keeps
these bounds only as a safety valve (:data:`SAFETY_VALVE`, never reached by the benchmarks)
that marks an answer partial. What follows describes the bounded search of a shard made with
``exact=False`` (:func:`ranking.core.shard.matching.score_matches`), the seed's first ``n``.

Layer: ``ranking.core``. The plan (:mod:`ranking.core.postings.plan`) gives each long list's leaf
(:class:`~ranking.core.postings.iterators.WordIterator`) and each phrase filter
(:class:`~ranking.core.postings.combinators.PhraseIterator`) its share of these bounds, per partition.

The seed ("Yioop Search Engine Ranking Mechanisms", Introduction and "Looking up Initial
Links") scans a query's lists only until it has its first ``n`` matches, within a timer, on
the assumption that the first documents in index order are the most important ones. With one
shard of a million pages that is not enough: three frequent words that rarely meet, or a
quoted phrase of frequent words, match few of the documents their lists hold, so the first
``n`` matches may lie anywhere in lists of hundreds of thousands of postings, and the work
(and the latency) grows with the shard. Yioop bounds it with its results per block and its
intersect timer; here the bound is in posting blocks (``indexer.core.partition.postings.BLOCK_SIZE``
postings each, the unit a list is decoded in) and in phrase checks:

* a list longer than the shard keeps decoded (``LocalShard.WHOLE_LIST_DOCS``) reads at most
  ``blocks_per_shard`` blocks;
* a quoted phrase is checked against the positions of at most ``phrase_checks_per_shard`` of
  the documents that hold all its words, in index order.

How the bound is spent depends on the order of the partitions (:meth:`ReadLimits.bounds`). In
crawl order (no link analysis yet) the seed's "first n matches" are read from the start of the
index, so the bound is spent from the start too: a list stops after its first
``blocks_per_shard`` blocks, a phrase after its first ``phrase_checks_per_shard`` checks. Once
partitions are importance-ordered, each partition's first documents are its best, and the
first n are merged across partitions (:mod:`ranking.core.postings.collect`): the bound is spread over
the partitions (:meth:`ReadLimits.blocks_per_partition`, at least ``min_blocks`` each;
:meth:`ReadLimits.phrase_checks_per_partition`), and a list whose share of a partition is
spent goes on at the next partition (an intersection with it leapfrogs there too).

Index order is Doc Rank order (or importance order), so what is left unread is the less
important tail: the trade-off is that a query whose matches are rare among its words'
documents finds the first of them, not every one. Such an answer is marked partial (with a
message), like one stopped by the time budget. Lists of at most ``WHOLE_LIST_DOCS`` documents,
meta words' filter lists and negated terms are never bounded (a negation must see its whole
list), so a query of rarer words is answered exactly. On the dev judgments' crawl (one
partition of a few thousand pages) no bound is reached.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """Per-query bounds of one shard (see the module docstring); 0 = unbounded."""

    blocks_per_shard: int = 64
    min_blocks: int = 2
    phrase_checks_per_shard: int = 2048
    min_phrase_checks: int = 64

    def bounds(self, partitions: int, ordered: bool) -> tuple[int, int, int, int]:
        """(blocks per partition, blocks in all, phrase checks per partition, phrase checks
        in all) of a long list and a phrase, 0 where unbounded: spread over the partitions
        when they are importance-ordered (each one's first documents are its best), else, in
        crawl order, read from the start (the seed's first ``n`` matches in index order)."""
        if ordered:
            return (self.blocks_per_partition(partitions), 0,
                    self.phrase_checks_per_partition(partitions), 0)
        return 0, max(self.blocks_per_shard, 0), 0, max(self.phrase_checks_per_shard, 0)

    def blocks_per_partition(self, partitions: int) -> int:
        """Posting blocks a long list may read in one partition (0: no bound)."""
        if self.blocks_per_shard <= 0:
            return 0
        return max(self.min_blocks, self.blocks_per_shard // max(partitions, 1))

    def scaled(self, factor: int) -> ReadLimits:
        """These bounds times ``factor`` (0 stays unbounded)."""
        return ReadLimits(self.blocks_per_shard * factor, self.min_blocks * factor,
                          self.phrase_checks_per_shard * factor,
                          self.min_phrase_checks * factor)

    def phrase_checks_per_partition(self, partitions: int) -> int:
        """Documents whose positions a phrase is checked against in one partition (0: no
        bound)."""
        if self.phrase_checks_per_shard <= 0:
            return 0
        return max(self.min_phrase_checks, self.phrase_checks_per_shard // max(partitions, 1))


UNBOUNDED = ReadLimits(0, 0, 0, 0)
# the exact search's safety valve (ranking.core.shard.exact): a list read for at most this many
# blocks (8 million postings), a phrase checked on at most this many documents; never reached
# by the benchmarks, an answer that reaches it is marked partial
SAFETY_VALVE = ReadLimits(1 << 16, 1 << 12, 1 << 22, 1 << 16)

# the message of an answer stopped by the shard's time budget (ranking.core.postings.iterators.
# Budget)
TIME_BUDGET_MESSAGE = "search stopped at the time budget; results are partial"
# the message of an answer cut by these bounds
TRUNCATED_MESSAGE = ("frequent words: only the first documents of each part of the index were "
                     "read; results may be incomplete")
