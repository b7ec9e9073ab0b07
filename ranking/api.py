"""The shard search endpoint: a queue server answers a name server's network iterator.

Layer: glue (Django). The payloads come from :mod:`ranking.core.remote.server`; this module
checks the shard bearer (derived from ``settings.QUEUE_SERVER_TOKEN``:
:func:`indexer.core.shard_token.shard_bearer`), sent in the ``X-Shard-Token`` header
only: a ``token`` url parameter is refused with 403, since urls land in access logs) and asks
the search service (:mod:`ranking.search_service`) for the bundle of the requested crawl on this
machine.

* ``GET /api/shard/search?q=&n=&its=&lang=&safe=&server=[&heads=k][&fmt=bin]`` -> raw
  (ungrouped) scored candidates, and the summary heads of the shard's ``k`` best groups
  (:func:`ranking.core.remote.server.shard_search_answer`: JSON, or with ``fmt=bin`` the binary
  encoding the network iterator asks for);
* ``GET /api/shard/summaries?ids=&its=&server=`` -> stored summaries of doc_ids (each with
  its representative url when the crawl's redirect table names one).
* ``GET /api/shard/links?crawl=TS[&server=N]`` and ``POST /api/shard/scores?crawl=TS``: link
  analysis of a crawl whose shards are on several machines; ``GET /api/shard/scores?crawl=TS``:
  the scores file, for a fetcher on a machine without it (:mod:`linkgraph.views`).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from indexer.core.errors import CorruptIndexError
from indexer.core.shard_token import TOKEN_HEADER, shard_bearer, shard_request_refusal
from ranking.core.errors import NoIndexError, public_reason
from ranking.core.remote.server import shard_search_answer, shard_summaries_payload
from ranking.core.shard.local import LocalShard

from .params import parse_int
from .search_service import search_service

logger = logging.getLogger(__name__)


def _refusal(request: HttpRequest) -> JsonResponse | None:
    """The 403 answer of a request without the token in its header (or with one in its url)."""
    reason = shard_request_refusal(shard_bearer(str(settings.QUEUE_SERVER_TOKEN)),
                                   request.headers.get(TOKEN_HEADER), request.GET)
    return None if reason is None else JsonResponse({"error": reason}, status=403)


def _local_shard(request: HttpRequest) -> LocalShard:
    return search_service().local_shard(parse_int(request.GET.get("its"), None),
                                        parse_int(request.GET.get("server"), None))


@require_GET
def shard_search(request: HttpRequest) -> HttpResponse:
    if (refused := _refusal(request)) is not None:
        return refused
    try:
        service = search_service()
        shard = _local_shard(request)
        body, kind = shard_search_answer(shard, request.GET, service.parser, service.options())
    except (NoIndexError, CorruptIndexError) as exc:
        return JsonResponse({"error": public_reason(exc)}, status=404)
    response = HttpResponse(body, content_type=kind)
    # a length lets the network iterator's client read the answer on a kept-alive connection
    # without chunked decoding
    response["Content-Length"] = str(len(body))
    return response


@require_GET
def shard_summaries(request: HttpRequest) -> JsonResponse:
    if (refused := _refusal(request)) is not None:
        return refused
    try:
        shard = _local_shard(request)
        payload = shard_summaries_payload(shard, request.GET)
    except (NoIndexError, CorruptIndexError) as exc:
        return JsonResponse({"error": public_reason(exc)}, status=404)
    return JsonResponse(payload)
