"""The News tab's search: the news index (``crawler.core.news``), its results in order of
recency and relevance, each with its source and date.

Layer: Django glue of the ``ranking`` app, used by :meth:`ranking.search_service.SearchService.
search` for a search with ``tab=news``. The news index is one bundle on this machine
(:func:`indexer.core.runtime.workdir.news_bundle_path`), read through the service's reader
pool like a crawl's. The search takes the best :data:`NEWS_POOL` items by score (more when
the page asked for lies further), orders them with
:func:`ranking.core.search.recency.recency_order`, and cuts the page asked for.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace

from indexer.core.bundle.layout import DOCUMENTS
from indexer.core.runtime.workdir import news_bundle_path
from ranking.core.errors import NoIndexError
from ranking.core.search.pipeline import Searcher, SearchResult
from ranking.core.search.recency import recency_order
from ranking.core.shard.local import LocalShard

from ..indexes import BundleLocation, ReaderPool
from ..params import SearchParams

NEWS_POOL = 100  # items ordered by recency and relevance for the first pages
MAX_POOL = 1000


@dataclass(frozen=True, slots=True)
class NewsFacts:
    """What the News tab shows beside a result: its source's name and publication time
    (seconds since the epoch)."""

    source: str
    published: float


def news_shard(pool: ReaderPool, work_directory: str | os.PathLike[str]) -> LocalShard:
    """The news index's shard. Raises NoIndexError while no item has been indexed."""
    path = news_bundle_path(work_directory)
    if not (path / DOCUMENTS).is_dir():
        raise NoIndexError("no news has been indexed yet")
    return pool.shard(BundleLocation(0, 0, path))


def news_search(searcher: Searcher, shard: LocalShard, params: SearchParams,
                now: float | None = None) -> tuple[SearchResult, dict[str, NewsFacts]]:
    """(the page of news results ``params`` asks for, each result's :class:`NewsFacts` by
    url)."""
    now = time.time() if now is None else now
    pool = min(max(NEWS_POOL, params.offset + params.num), MAX_POOL)
    found = searcher.search(params.searched, num=pool, offset=0, safe_search=params.safe)
    results = list(found.results)
    summaries = shard.summaries([bytes.fromhex(r.doc_id) for r in results])
    facts: dict[str, NewsFacts] = {}
    published = []
    for result, summary in zip(results, summaries, strict=True):
        summary = summary or {}
        try:
            when = float(summary.get("published", summary.get("fetched_at", 0.0)))
        except (TypeError, ValueError):
            when = 0.0
        published.append(when)
        facts[result.url] = NewsFacts(str(summary.get("news_source", "")), when)
    order = recency_order([r.score for r in results], published, now)
    page = [results[i] for i in order][params.offset:params.offset + params.num]
    total = max(found.total, len(results))
    return replace(found, results=tuple(page), offset=params.offset, num=params.num,
                   total=total, ahead=None), facts
