"""The "n similar pages" of a result: the other pages of its near-duplicate cluster.

Layer: glue of the ``ranking`` app. The search folds each near-duplicate cluster into one
result, its canonical (``ranking.core.scoring.near_folding``); the result's link comes here,
``/near-duplicates?url=<result url>[&its=<crawl>]``, which lists the cluster from the crawl's
clusters file (``indexer.core.signals.near_clusters``, written by the link analysis): the
canonical first, then the others. ``f=json`` answers the same as JSON. A url in no cluster, or
an index without clusters, is a 404 page, never an error.
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from indexer.core.runtime.workdir import bundle_near_duplicates_path
from indexer.core.signals.near_clusters import NearDuplicateClusters, cached_near_duplicates
from ranking.core.errors import NoIndexError
from ranking.core.shard.candidates import ShardClient
from ranking.params import MAX_QUERY_CHARS, is_staff, parse_int
from ranking.search_service import search_service
from ranking.views import with_csp

from .messages import translated

logger = logging.getLogger(__name__)


def crawl_clusters(shards: list[ShardClient]) -> NearDuplicateClusters | None:
    """The clusters of the crawl of the first local shard, None when it has none."""
    for shard in shards:
        path = shard.bundle_path
        found = bundle_near_duplicates_path(path) if path is not None else None
        if found is not None:
            return cached_near_duplicates(found).get()
    return None


def cluster_answer(request: HttpRequest, url: str) -> tuple[int, dict[str, Any]]:
    """(status, context): ``pages`` (the cluster's urls, canonical first) or ``reason``."""
    context: dict[str, Any] = {"url": url, "pages": [], "canonical": "", "reason": ""}
    if not url:
        context["reason"] = "which page? give its url"
        return 400, context
    try:
        _, shards = search_service().shards(parse_int(request.GET.get("its"), None),
                                            staff=is_staff(request))
    except NoIndexError as exc:
        context["reason"] = str(exc)
        return 404, context
    clusters = crawl_clusters(shards)
    cluster = clusters.cluster_of(url) if clusters is not None else -1
    if clusters is None or cluster < 0:
        context["reason"] = "this page has no near-duplicates in the index"
        return 404, context
    members = clusters.members(cluster)
    context.update(canonical=members[0], pages=members)
    return 200, context


@require_GET
def near_duplicates(request: HttpRequest) -> HttpResponse:
    url = request.GET.get("url", "").strip()[:MAX_QUERY_CHARS]
    status, context = cluster_answer(request, url)
    if request.GET.get("f") == "json":
        return JsonResponse({"url": url, "canonical": context["canonical"] or None,
                             "pages": context["pages"],
                             "reason": context["reason"] or None}, status=status)
    context["reason"] = translated(context["reason"])
    return with_csp(render(request, "ranking/near_duplicates.html", context, status=status))
