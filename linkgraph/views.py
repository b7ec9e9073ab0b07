"""A queue server's side of a link analysis computed on another machine (seed 002, "Nutch's new
scoring and indexing framework": the WebGraph job reads every shard; ScoreUpdater hands the
scores back).

Layer: glue (Django). The client is :class:`linkgraph.core.remote.RemoteShard`; both
endpoints check the shared QUEUE_SERVER_TOKEN (:mod:`indexer.core.shard_token`) as the shard
search endpoints do (``ranking.api``).

* ``GET /api/shard/links?crawl=TS&server=N`` -> queue server N's link records of crawl TS
  from its bundle under this machine's WORK_DIRECTORY, streamed in the ``linkrecords`` format
  (:mod:`linkgraph.core.transfer`); 404 when this machine has no such bundle, 409 when
  it cannot be read.
* ``POST /api/shard/scores?crawl=TS`` with a ``scores.npz`` as the body -> installed at
  ``WORK_DIRECTORY/linkgraph/TS/scores.npz`` once checked (temp file, fsync, rename:
  :func:`indexer.core.signals.link_scores.receive_scores`), where this queue server's indexer
  and searches read it.
* ``GET /api/shard/scores?crawl=TS`` -> that file (404 when this machine has none): what a
  fetcher on a machine without a queue server fetches when a schedule message announces a
  version its machine does not hold (``crawler.machines.score_delivery``).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import (
    FileResponse,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from indexer.core.errors import CorruptGraphError, IndexStoreError
from indexer.core.runtime.workdir import crawl_bundles, queue_server_dir, scores_path
from indexer.core.shard_token import TOKEN_HEADER, shard_bearer, shard_request_refusal
from indexer.core.signals.link_scores import receive_scores
from linkgraph.core.bundles import read_shard_links
from linkgraph.core.transfer import CONTENT_TYPE, encode_shard_links

logger = logging.getLogger(__name__)

MAX_SCORES_BYTES = 4 << 30  # 4 GiB: about 70 million urls (56 bytes each)


class _BadParameter(ValueError):
    """A query parameter that is missing or out of range (answered 400 with its message)."""


def _int_param(request: HttpRequest, name: str, low: int, high: int) -> int:
    raw = request.GET.get(name)
    try:
        value = int(raw or "")
    except ValueError:
        raise _BadParameter(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise _BadParameter(f"{name} must be between {low} and {high}")
    return value


def _refusal(request: HttpRequest) -> JsonResponse | None:
    """The 403 answer of a request without the token in its header (or with one in its url:
    :func:`indexer.core.shard_token.shard_request_refusal`)."""
    reason = shard_request_refusal(shard_bearer(str(settings.QUEUE_SERVER_TOKEN)),
                                   request.headers.get(TOKEN_HEADER), request.GET)
    return None if reason is None else JsonResponse({"error": reason}, status=403)


@require_GET
def shard_links(request: HttpRequest) -> HttpResponse:
    if (refused := _refusal(request)) is not None:
        return refused
    try:
        crawl = _int_param(request, "crawl", 0, 2**62)
        server = _int_param(request, "server", 0, 1023)
    except _BadParameter as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    own = queue_server_dir(settings.WORK_DIRECTORY, server)
    bundles = [b for b in crawl_bundles(settings.WORK_DIRECTORY, crawl) if b.parent == own]
    if not bundles:
        return JsonResponse({"error": f"queue server {server} has no index of crawl {crawl} "
                                      "on this machine"}, status=404)
    try:  # read it all before answering, so a bad bundle is an error status, not a torn body
        shard = read_shard_links(bundles[0])
    except (IndexStoreError, OSError) as exc:
        logger.error("link records of crawl=%s server=%s unreadable: %s", crawl, server, exc)
        # the caller's request was fine; this shard cannot serve it (never a 5xx: the name
        # server records the shard's message and the run fails naming it)
        return JsonResponse({"error": f"the index cannot be read: {exc}"}, status=409)
    return StreamingHttpResponse(encode_shard_links(shard, crawl, server),
                                 content_type=CONTENT_TYPE)


@csrf_exempt  # a machine-to-machine endpoint: the shard token authenticates it, not a cookie
@require_http_methods(["GET", "POST"])
def shard_scores(request: HttpRequest) -> HttpResponse:
    if (refused := _refusal(request)) is not None:
        return refused
    try:
        crawl = _int_param(request, "crawl", 0, 2**62)
    except _BadParameter as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    path = scores_path(settings.WORK_DIRECTORY, crawl)
    if request.method == "GET":
        try:  # the file open is the version sent, even if the analysis replaces it meanwhile
            handle = open(path, "rb")  # FileResponse closes it
        except FileNotFoundError:
            return JsonResponse({"error": f"no link scores of crawl {crawl} on this machine"},
                                status=404)
        return FileResponse(handle, content_type="application/octet-stream")
    try:
        length = int(request.headers.get("Content-Length") or "")
    except ValueError:
        return JsonResponse({"error": "a Content-Length header is required"}, status=411)
    if not 0 < length <= MAX_SCORES_BYTES:
        return JsonResponse({"error": f"the scores file must be 1 to {MAX_SCORES_BYTES} "
                                      "bytes long"}, status=413)
    try:
        urls = receive_scores(request.read, length, path, crawl)
    except CorruptGraphError as exc:
        return JsonResponse({"error": f"not a usable scores file: {exc.reason}"}, status=400)
    logger.info("link scores of crawl=%s received: %d urls at %s", crawl, urls, path)
    return JsonResponse({"ok": True, "crawl": crawl, "urls": urls})

