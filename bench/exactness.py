"""How exact the default search's top results are: overlap with an exhaustive reference search.

The default search (:class:`ranking.core.search.pipeline.Searcher` over
:class:`~ranking.core.shard.local.LocalShard` s with ``SearchOptions()``) is exact by
construction since issue 33: each shard bounds every match's score and scores only the matches
whose bound reaches the threshold of its best groups (:mod:`ranking.core.shard.exact`), and the
fusion with proximity is computed over the pool of the best groups by score
(:func:`ranking.core.scoring.bounds.pool_size`). Before it, a shard scored a bounded set of
candidates: the query's first ``min_results_to_group`` matches in index order, long posting
lists read for at most ``ReadLimits.blocks_per_shard`` blocks and a phrase checked on at most
``ReadLimits.phrase_checks_per_shard`` documents (``ranking/core/postings/limits.py``); a shard
made with ``exact=False`` still does.

**The exhaustive reference search** (:func:`exhaustive_searcher`) is the same code with every
bound lifted, so that every match of the query is a candidate:

* each shard is a ``LocalShard(reader, limits=UNBOUNDED, exact=False)``: the bounded search
  with no bound, no posting list or phrase check cut short, no pruning;
* ``min_results_to_group`` is at least the number of doc_map entries of all the shards times
  the number of shards (:func:`reference_options`), so that each shard's share of ``n``
  (``n * server_alpha / shards``, :func:`ranking.core.search.fanout.per_shard_results`) holds
  every entry it has: the first-``n`` collection reads every match, and the fancy-hit tier,
  which only adds matches, is skipped because the first one is exhausted;
* ``intersect_time_budget`` is 0 (no budget) and the searcher's shard timeout is an hour;
* everything else is unchanged: the same scoring (Doc Rank, DFR relevance, bonuses, link
  score; for two or more words the rank fusion with proximity over the pool of the best
  groups by score, found among *all* the matches),
  grouping by url and text hash, representative urls, link scores and semantic options.

Between the two, :func:`reads_unbounded_searcher` is the bounded search (``exact=False``) with
its read bounds lifted (``n`` and the time budget as the options say): the first-``n`` rule
alone.

An answer of the reference search marked partial (a bound or budget reached) breaks that
definition; :func:`compare` counts such answers (it should be 0).

**Overlap** of one query (:func:`overlap`): ``|top-k urls ∩ reference top-k urls| /
|reference top-k urls|``; a query whose reference answer is empty is skipped, and counted.
:func:`top_overlap` gives the mean per query kind; the kinds are the shapes of the scale
bench's query mix (``synthetic_corpus.QUERY_KINDS``: ``one_word``, ``two_words``,
``three_words`` (three or more), ``phrase``), found from the parsed query
(:func:`query_shape`) unless given.

Used by ``bench/scale_bench.py`` (synthetic corpora, and ``--index`` on a crawl's bundle).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ranking.core.options import SearchOptions
from ranking.core.postings.limits import UNBOUNDED
from ranking.core.query.parser import ParsedQuery
from ranking.core.search.pipeline import LinkScoreSource, Searcher
from ranking.core.shard.local import LocalShard

SHAPES = ("one_word", "two_words", "three_words", "phrase")  # synthetic_corpus.QUERY_KINDS
REFERENCE_TIMEOUT = 3600.0  # seconds: the reference search is never cut by the fan-out


def query_shape(parsed: ParsedQuery) -> str:
    """The shape of a parsed query: ``phrase`` when a disjunct has a quoted phrase, else by
    its number of words (the longest disjunct's): ``one_word``, ``two_words`` or
    ``three_words`` (three or more)."""
    if any(d.phrases for d in parsed.disjuncts):
        return "phrase"
    return SHAPES[min(max(parsed.word_count, 1), 3) - 1]


def kind_order(kinds: Sequence[str]) -> list[str]:
    """The distinct ``kinds``: those of :data:`SHAPES` first, in that order, then any other
    in order of appearance."""
    return [*(k for k in SHAPES if k in kinds), *dict.fromkeys(k for k in kinds
                                                               if k not in SHAPES)]


def reference_options(options: SearchOptions, documents: int, shards: int) -> SearchOptions:
    """``options`` with the bounds of the candidate set lifted (see the module): ``n`` large
    enough that every shard's share holds all of its ``documents`` (the doc_map entries of
    every shard searched, summed), no time budget."""
    n = max(1, documents) * max(1, shards)
    return replace(options, min_results_to_group=max(n, options.min_results_to_group),
                   intersect_time_budget=0.0)


def exhaustive_searcher(shards: Sequence[LocalShard], options: SearchOptions | None = None,
                        link_scores: LinkScoreSource | None = None) -> Searcher:
    """The exhaustive reference search (see the module) over the readers of ``shards`` (the
    default search's shards; each gets a new ``LocalShard`` of the same name on the same
    reader, with ``limits=UNBOUNDED``), with ``options`` (default ``SearchOptions()``)
    otherwise unchanged. Searches must not run at the same time as the default search's on
    the same readers (a reader serves one query at a time)."""
    exact = [LocalShard(s.reader, name=s.name, limits=UNBOUNDED, exact=False) for s in shards]
    documents = sum(s.collection_stats().documents for s in exact)
    return Searcher(exact, reference_options(options or SearchOptions(), documents,
                                             len(exact)),
                    shard_timeout=REFERENCE_TIMEOUT, link_scores=link_scores)


def reads_unbounded_searcher(shards: Sequence[LocalShard],
                             options: SearchOptions | None = None,
                             link_scores: LinkScoreSource | None = None) -> Searcher:
    """The search of ``options`` (default ``SearchOptions()``: its ``n`` and time budget)
    with the read bounds lifted (``limits=UNBOUNDED``), over the readers of ``shards``, as
    :func:`exhaustive_searcher` builds its shards."""
    return Searcher([LocalShard(s.reader, name=s.name, limits=UNBOUNDED, exact=False)
                     for s in shards],
                    options or SearchOptions(), link_scores=link_scores)


@dataclass(frozen=True, slots=True)
class Answers:
    """The top-k urls of each query (in order), the seconds each search took and whether it
    was marked partial."""

    urls: list[list[str]]
    seconds: list[float]
    partial: list[bool]


def answer(searcher: Searcher, queries: Sequence[str], k: int = 10, snippets: bool = False,
           warm: bool = False) -> Answers:
    """Search every query once for its top ``k`` (with ``snippets``, as the page shows
    them), timing each; with ``warm``, after one untimed pass over all of them (as
    ``latency.measure`` does)."""
    if warm:
        for q in queries:
            searcher.search(q, num=k, snippets=snippets)
    urls, seconds, partial = [], [], []
    for q in queries:
        start = time.perf_counter()
        res = searcher.search(q, num=k, snippets=snippets)
        seconds.append(time.perf_counter() - start)
        urls.append([r.url for r in res.results])
        partial.append(res.partial)
    return Answers(urls, seconds, partial)


def overlap(got: Sequence[str], want: Sequence[str]) -> float | None:
    """``|got ∩ want| / |want|`` over distinct urls; None when ``want`` is empty."""
    reference = set(want)
    if not reference:
        return None
    return len(set(got) & reference) / len(reference)


@dataclass(frozen=True, slots=True)
class Overlap:
    """Mean overlap per query kind (:func:`overlap` of each query, means over the queries
    whose reference answer is not empty), how many queries of each kind were ``counted`` and
    ``skipped`` (empty reference), and how many reference answers were marked partial."""

    mean: dict[str, float]
    counted: dict[str, int]
    skipped: dict[str, int]
    reference_partial: int = 0
    kinds: tuple[str, ...] = field(default=SHAPES)

    def minimum(self) -> float | None:
        """The lowest mean over the kinds that have one (None: no kind has a query)."""
        return min(self.mean.values(), default=None)


def compare(kinds: Sequence[str], got: Answers, want: Answers) -> Overlap:
    """The per-kind overlap of ``got`` with the reference ``want`` (query i of kind
    ``kinds[i]``), the kinds in :func:`kind_order`."""
    order = kind_order(kinds)
    values: dict[str, list[float]] = {k: [] for k in order}
    skipped = dict.fromkeys(order, 0)
    for kind, g, w in zip(kinds, got.urls, want.urls, strict=True):
        value = overlap(g, w)
        if value is None:
            skipped[kind] += 1
        else:
            values[kind].append(value)
    return Overlap({k: statistics.fmean(values[k]) for k in order if values[k]},
                   {k: len(values[k]) for k in order}, skipped, sum(want.partial),
                   tuple(order))


def shapes(searcher: Searcher, queries: Sequence[str]) -> list[str]:
    """The shape of every query (:func:`query_shape`) as ``searcher`` parses it."""
    return [query_shape(searcher.parser.parse(q)) for q in queries]


def top_overlap(searcher: Searcher, reference: Searcher, queries: Sequence[str], k: int = 10,
                kinds: Sequence[str] | None = None) -> Overlap:
    """The mean overlap per query kind of ``searcher``'s top ``k`` urls with ``reference``'s
    (see the module: queries whose reference top k is empty are skipped and counted).
    ``kinds`` names each query's kind; by default its shape (:func:`query_shape`)."""
    kinds = list(kinds) if kinds is not None else shapes(reference, queries)
    return compare(kinds, answer(searcher, queries, k), answer(reference, queries, k))


__all__ = ["Answers", "Overlap", "SHAPES", "answer", "compare", "exhaustive_searcher", "kind_order",
           "overlap", "query_shape", "reads_unbounded_searcher", "reference_options", "shapes",
           "top_overlap"]
