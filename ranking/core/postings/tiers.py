"""A query's candidates from two tiers: its first n matches, and its first n fancy-hit matches.

Layer: ``ranking.core``. The shard (:mod:`ranking.core.shard.local`) scores what :func:`candidate_block`
returns.

The seed ("Yioop Search Engine Ranking Mechanisms") takes the first ``n`` matches of a query in
index order, assuming they hold the best answers; with whole pages indexed, a query of common
words ("default value", "binary string") matches thousands of pages, and the page a reader
wants is often not among the first ``n`` by importance. What singles it out is its title, or
the anchor text that points at it (a back-of-book index, a contents page). Brin and Page ("The
Anatomy of a Large-Scale Hypertextual Web Search Engine", hit lists and barrels) keep these
*fancy hits* in short barrels that a query reads first, and the full barrels only for more.
Here every title word and anchor-text word is also posted as the meta word ``fancy:<term>``
(:func:`indexer.core.documents.document.fancy_words`; a page's link documents fold into its doc_map entry,
so an entry holds the fancy words of its title and of the anchor texts pointing at it).
:func:`candidate_block` takes the first ``n`` matches of the query and the first ``n`` matches
of the query whose every word is also a fancy hit, in the same order (crawl or importance),
and returns their union.

Work: one more intersection per query, over short lists; the union has at most ``2n`` rows.
Indexes made before fancy words existed have no such postings: the second tier is empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.documents.document import fancy_words
from indexer.core.partition.grouping import ImportanceRanks
from ranking.core.postings.blocks import Block, union_blocks
from ranking.core.postings.collect import collect_by_key
from ranking.core.postings.iterators import Budget, DecodedList, collect
from ranking.core.postings.limits import UNBOUNDED, ReadLimits
from ranking.core.postings.plan import Plan, build_plan
from ranking.core.query.parser import ParsedQuery

# the short barrel's plan may read this many times the bounds of the query's own plan: its
# fancy words are rare, so that the long word lists are read only at their few matches, a
# block for each, and they are the pages whose title or anchor text holds every word
FANCY_READS = 4


def first_matches(plan: Plan, n: int, ranks: ImportanceRanks | None) -> tuple[Block, bool]:
    """The plan's first ``n`` matches: in posting order, or in global importance order when
    the shard's partitions are importance-ordered (:func:`~ranking.core.postings.collect.collect_by_key`);
    and whether the plan was read to its end."""
    if ranks is None:
        return collect(plan.root, n)
    return collect_by_key(plan.root, n, ranks.keys)


def fancy_query(parsed: ParsedQuery) -> ParsedQuery | None:
    """``parsed`` with every word also required as a fancy hit (``fancy:<term>`` meta words);
    None when no disjunct has words (a query of meta words only has no short barrel)."""
    disjuncts = tuple(replace(d, meta=(*d.meta, *fancy_words(d.terms)))
                      for d in parsed.disjuncts if d.terms)
    if not disjuncts:
        return None
    return replace(parsed, disjuncts=disjuncts)


def candidate_block(reader: IndexBundleReader, parsed: ParsedQuery, n: int, budget: Budget,
                    ranks: ImportanceRanks | None,
                    filters: Callable[[str], np.ndarray | None] | None = None,
                    decoded: Callable[[str, bool], DecodedList | None] | None = None,
                    limits: ReadLimits = UNBOUNDED) -> tuple[Block, bool, Plan]:
    """The union of the query's first ``n`` matches and its first ``n`` fancy-hit matches
    (see the module), whether the query's own plan was read to its end, and that plan (its
    word iterators and positions decoder serve every row: the short barrel's matches are
    matches of the same words). Both plans read within ``limits``
    (:mod:`ranking.core.postings.limits`); the second tier's bounds reached are the first's too, as
    far as the answer's partial mark goes: :attr:`Plan.bounded` of the returned plan holds
    both plans' bounded iterators."""
    ordered = ranks is not None
    plan = build_plan(reader, parsed.disjuncts, budget, filters, decoded, limits, ordered)
    block, exhausted = first_matches(plan, n, ranks)
    fancy = fancy_query(parsed)
    if exhausted or fancy is None:  # every match is already held
        return block, exhausted, plan
    fancy_plan = build_plan(reader, fancy.disjuncts, budget, filters, decoded,
                            limits.scaled(FANCY_READS), ordered)
    extra, _ = first_matches(fancy_plan, n, ranks)
    plan.bounded.extend(fancy_plan.bounded)
    if len(extra):
        words = set(plan.words)
        extra = Block(extra.keys, {t: c for t, c in extra.columns.items() if t in words})
        block = union_blocks([block, extra])
    return block, exhausted, plan
