"""Reads for the search side: Page Options rows to :class:`SearchOptions`, and the queue
servers a search reads over HTTP.

Layer: Django glue of the ``ranking`` app, above ``crawler`` (whose selectors own the rows:
:func:`crawler.selectors.page_options_data_get`,
:func:`crawler.selectors.queue_servers_elsewhere_list`). The search service
(:mod:`ranking.search_service`) keeps what these return for ``SEARCH_OPTIONS_TTL`` seconds.
"""

from __future__ import annotations

from dataclasses import fields, replace

from django.conf import settings

from crawler.selectors import page_options_data_get, queue_servers_elsewhere_list
from ranking.core.options import SearchOptions
from ranking.core.search.curation import Curation

from .models import EditedResult, HiddenHost, HiddenUrl, PinnedResult


def search_options_from(data: dict) -> SearchOptions:
    """The Search Time options among Page Options' data (other keys are ignored), with the
    semantic signal's settings (``SEMANTIC_WEIGHT``, ``SEMANTIC_DEPTH``: not Page Options)."""
    names = {f.name for f in fields(SearchOptions)}
    return with_semantic(SearchOptions(**{k: tuple(v) if isinstance(v, list) else v
                                          for k, v in data.items() if k in names}))


def with_semantic(options: SearchOptions) -> SearchOptions:
    """``options`` with the semantic signal's weight and depth from the settings."""
    return replace(options, semantic_weight=float(settings.SEMANTIC_WEIGHT),
                   semantic_depth=int(settings.SEMANTIC_DEPTH))


def search_options_get(crawl_id: int | None = None) -> SearchOptions:
    """Search-time options: the crawl's copy if given (``crawler.selectors.ConfigNotFound``
    when there is no such crawl), else the default profile's, else the defaults."""
    data = page_options_data_get(crawl_id)
    return with_semantic(SearchOptions()) if data is None else search_options_from(data)


def remote_queue_server_urls() -> tuple[str, ...]:
    """Base urls of the queue servers whose shards a search reads over HTTP (the network
    iterator): ``settings.SEARCH_REMOTE_QUEUE_SERVERS`` when it names any, else every live
    queue server that registered (by its heartbeats) a url other than this machine's
    ``QUEUE_SERVER_BASE_URL``; this machine's own shards are read from its work directory."""
    declared = tuple(settings.SEARCH_REMOTE_QUEUE_SERVERS)
    if declared:
        return declared
    return tuple(q.base_url for q in queue_servers_elsewhere_list(settings.QUEUE_SERVER_BASE_URL))


def curation_get() -> Curation:
    """Every pinned result (by normalised query), hidden url, hidden host and edited
    result."""
    pins: dict[str, list[tuple[str, int]]] = {}
    for query, url, position in PinnedResult.objects.values_list("query", "url", "position"):
        pins.setdefault(query, []).append((url, int(position)))
    edits = {url: (title, snippet) for url, title, snippet
             in EditedResult.objects.values_list("url", "title", "snippet")}
    return Curation({q: tuple(p) for q, p in pins.items()},
                    frozenset(HiddenUrl.objects.values_list("url", flat=True)),
                    frozenset(HiddenHost.objects.values_list("host", flat=True)),
                    edits)
