"""Candidate pages for the classifiers' admin: a query run against a chosen crawl's index.

Layer: Django glue of ``ranking``. :class:`IndexCandidates` is the search side's
:class:`classifiers.sources.CandidateSource`, given to the classifiers app when this app starts
(:class:`ranking.apps.RankingConfig`): the crawls whose index this machine holds, and a query's
results read through the process's search service, each with its stored summary's title and
description (the text a classifier reads).
"""

from __future__ import annotations

from django.conf import settings

from classifiers.sources import CandidatePage
from crawler.selectors import crawl_names_get
from indexer.core.errors import CorruptIndexError
from ranking.core.errors import NoIndexError

from .indexes import list_bundles
from .page import find_stored_page
from .search_service import search_service


class IndexCandidates:
    """Pages of this machine's indexes (see the module docstring)."""

    def indexes(self) -> list[tuple[int, str]]:
        stamps = sorted({b.timestamp for b in list_bundles(settings.WORK_DIRECTORY)},
                        reverse=True)
        names = crawl_names_get(stamps)
        return [(t, names.get(t, f"crawl {t}")) for t in stamps]

    def pages(self, timestamp: int, query: str, limit: int) -> list[CandidatePage]:
        service = search_service()
        try:
            _, shards = service.shards(timestamp, staff=True)  # the admin's classifier pages
            found = service.searcher(shards, service.options()).search(
                query, num=limit, safe_search=False, snippets=False)
        except (NoIndexError, CorruptIndexError) as exc:
            raise LookupError(str(exc)) from None
        pages = []
        for result in found.results:
            try:
                stored = find_stored_page(shards, result.url)
            except CorruptIndexError:  # a damaged record: that page is not offered
                continue
            if stored is None:  # a page only a remote shard holds, or a link-only result
                continue
            summary = stored.summary
            pages.append(CandidatePage(result.url, str(summary.get("title") or ""),
                                       str(summary.get("description") or "")))
        return pages
