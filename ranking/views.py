"""The search page and its outputs, the cached page view, and query suggestions.

Layer: glue (Django). Reads the Search Time page options (``crawler.selectors``), finds the
crawl's bundles (:mod:`ranking.indexes`), and runs :class:`ranking.core.pipeline.Searcher`:
local bundles in-process, remote queue servers (``settings.SEARCH_REMOTE_QUEUE_SERVERS``, a list
of base urls) over HTTP through the network iterator.

URLs and parameters:

* ``GET /?q=QUERY`` the search page; ``num`` results per page (default: Page Options' results
  per page), ``limit`` the offset of the first, ``its`` a crawl timestamp, ``safe=off`` turns
  safe search off (the parser then adds ``safe:all`` instead of ``safe:true``), ``lang=xx``
  keeps pages in language ``xx`` (``lang=all``: any language; empty: the guessed query
  language) by adding the ``lang:`` meta word. ``f=json`` answers ``{results: [{url, title,
  snippet, score, explanation}], total, time, partial, messages, query, rewritten, offset,
  num, searched, fallback}``; ``f=rss`` RSS 2.0 with OpenSearch response elements
  (:mod:`ranking.feeds`). A query with no result shows a spelling correction's results
  (``fallback: "corrected"``, ``searched``: the correction; ``nfpr=1`` forces the query as
  typed) or the pages with most of its words (``fallback: "partial"``); ``fallback`` is null
  otherwise (:mod:`ranking.core.relax`). ``partial`` is about shards: true when a shard did
  not answer or a time budget ran out.
* ``GET /cache?url=&its=&q=`` the stored copy of a page under a banner; the copy itself comes
  from ``GET /cache/frame?...`` into a sandboxed iframe, with a restrictive CSP
  (:mod:`ranking.cached`). Pages whose robot metas say NOARCHIVE or NONE have none (404).
* ``GET /suggest?q=&its=`` completions of the last word, ``{query, suggestions}``; with
  ``f=opensearch`` the OpenSearch suggestions form ``[query, [completions]]``
  (:mod:`ranking.suggest`).
* ``GET /opensearch.xml`` the OpenSearch description document the page links.

Bad input (syntax, numbers) becomes messages; a missing index is a message; never a 500 for
the JSON API.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET

from crawler.selectors import ConfigNotFound, search_options_get
from indexer.core.errors import CorruptIndexError
from indexer.core.text import TextAnalyzer
from ranking.core.errors import NoIndexError, ShardError
from ranking.core.network import HttpShard
from ranking.core.options import SearchOptions
from ranking.core.pipeline import Searcher, SearchResult
from ranking.core.query import QueryParser
from ranking.core.relax import search_with_fallback
from ranking.core.shard import LocalShard, ShardClient

from . import cached, feeds, page
from .indexes import ReaderPool, locate_index
from .suggest import LexiconCache

logger = logging.getLogger(__name__)
POOL = ReaderPool()  # open readers of this process, reopened when a bundle changes
LEXICONS = LexiconCache()
MAX_NUM = 100
MAX_QUERY_CHARS = 1000
SHARD_TIMEOUT = 5.0
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; "
            "form-action 'self'; frame-ancestors 'none'")
_ANALYZER = TextAnalyzer()
_PARSER = QueryParser(_ANALYZER)


def parse_int(value: str | None, default: int | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else default
    except (TypeError, ValueError):
        return default


_OPTIONS: list[tuple[float, SearchOptions]] = []  # (read at, options) of this process


def options_for_search() -> SearchOptions:
    """The Search Time options, read from the database at most every SEARCH_OPTIONS_TTL
    seconds (two queries that cost as much as a warm search); defaults, not cached, when the
    database cannot give them."""
    ttl = float(getattr(settings, "SEARCH_OPTIONS_TTL", 0.0))
    now = time.monotonic()
    if ttl > 0 and _OPTIONS and now - _OPTIONS[0][0] < ttl:
        return _OPTIONS[0][1]
    try:
        options = search_options_get()
    except (ConfigNotFound, DatabaseError):
        logger.warning("search options unavailable, using defaults", exc_info=True)
        return SearchOptions()
    _OPTIONS[:] = [(now, options)]
    return options


def forget_search_options(**_: Any) -> None:
    """Signal receiver: Page Options or a crawl changed, read the options again."""
    _OPTIONS.clear()


KEPT = 32  # remote shards and searchers kept per process (each its own key)
_REMOTE: dict[tuple[str, str, int | None], HttpShard] = {}
_SEARCHERS: dict[tuple[tuple[int, ...], SearchOptions], Searcher] = {}
_KEPT_LOCK = threading.Lock()


def remote_shard(url: str, token: str, its: int | None) -> HttpShard:
    """The process's client of a remote queue server (kept, so that its connections stay open
    from one search to the next)."""
    key = (url, token, its)
    with _KEPT_LOCK:
        shard = _REMOTE.get(key)
        if shard is None:
            if len(_REMOTE) >= KEPT:
                for old in _REMOTE.values():
                    old.close()
                _REMOTE.clear()
            shard = _REMOTE[key] = HttpShard(url, token, its=its, timeout=SHARD_TIMEOUT)
        return shard


def searcher_for(shards: list[ShardClient], options: SearchOptions) -> Searcher:
    """A Searcher over ``shards`` with ``options``, kept while both stay the same: its query
    parser keeps what it derives once per language (the stop words' terms, the stemmers)."""
    key = (tuple(id(s) for s in shards), options)
    with _KEPT_LOCK:
        searcher = _SEARCHERS.get(key)
        # the kept searcher holds its shards, so their ids cannot be reused meanwhile
        if searcher is None or not all(a is b for a, b in zip(searcher.shards, shards,
                                                               strict=True)):
            if len(_SEARCHERS) >= KEPT:
                _SEARCHERS.clear()
            searcher = _SEARCHERS[key] = Searcher(shards, options, analyzer=_ANALYZER,
                                                  shard_timeout=SHARD_TIMEOUT)
        return searcher


def index_shards(its: int | None) -> tuple[int | None, list[ShardClient]]:
    """(crawl timestamp, shards of crawl ``its`` (default the newest)): local bundles, then
    remote servers."""
    shards: list[ShardClient] = []
    remote = list(getattr(settings, "SEARCH_REMOTE_QUEUE_SERVERS", ()) or ())
    try:
        chosen, bundles = locate_index(settings.WORK_DIRECTORY, its)
        shards.extend(POOL.shard(b) for b in bundles)
        its = chosen
    except NoIndexError:
        if not remote:
            raise
    token = str(settings.QUEUE_SERVER_TOKEN)
    shards.extend(remote_shard(url, token, its) for url in remote)
    return its, shards


def search_filters(request: HttpRequest) -> tuple[bool, str]:
    """(safe search on, language filter) from ``safe`` and ``lang``."""
    safe = request.GET.get("safe", "on").lower() not in ("off", "0", "false", "no")
    lang = request.GET.get("lang", "").strip().lower()
    if lang and not (lang == "all" or (2 <= len(lang) <= 8 and lang.replace("-", "").isalnum())):
        lang = ""
    return safe, lang


def effective_query(query: str, lang: str) -> str:
    """The query searched: the language filter becomes a ``lang:`` meta word unless the query
    has one."""
    if lang and "lang:" not in query.lower():
        return f"{query} lang:{lang}"
    return query


def forced(request: HttpRequest) -> bool:
    """``nfpr=1``: search the query as typed, never a spelling correction of it."""
    return request.GET.get("nfpr", "").lower() in ("1", "true", "on", "yes")


def run_search(request: HttpRequest, options: SearchOptions | None = None
               ) -> tuple[str, SearchResult, int | None, list[ShardClient]]:
    """(query, result, crawl timestamp, shards) of the request's search. A query with no
    result shows a spelling correction's results (unless ``nfpr=1``) or the pages with most
    of its words (:func:`ranking.core.relax.search_with_fallback`); ``result.fallback`` says
    which, ``result.searched`` what was searched."""
    options = options or options_for_search()
    query = request.GET.get("q", "")
    messages: list[str] = []
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS]
        messages.append(f"the query was shortened to its first {MAX_QUERY_CHARS} characters")
    default_num = max(1, min(options.results_per_page or 10, MAX_NUM))
    num = parse_int(request.GET.get("num"), None)
    offset = parse_int(request.GET.get("limit"), None)
    its = parse_int(request.GET.get("its"), None)
    for name, value, parsed in (("num", request.GET.get("num"), num),
                                ("limit", request.GET.get("limit"), offset)):
        if (value not in (None, "") and parsed is None) or (parsed is not None and parsed < 0):
            messages.append(f"{name}={value} is not a valid number (default used)")
    num = min(max(num if num is not None and num >= 0 else default_num, 0), MAX_NUM)
    offset = offset if offset is not None and offset >= 0 else 0
    if request.GET.get("its") and its is None:
        messages.append(f"its={request.GET.get('its')} is not a crawl timestamp (newest used)")
    safe, lang = search_filters(request)
    shards: list[ShardClient] = []
    searched = effective_query(query, lang)
    try:
        its, shards = index_shards(its)
        correct = None
        if options.show_word_suggest and not forced(request):
            def correct(text: str) -> str | None:
                lang_of = _PARSER.parse(text, safe_search=safe).lang
                fixed = did_you_mean(query.strip(), its, shards, lang_of)
                return effective_query(fixed, lang) if fixed else None
        result = search_with_fallback(searcher_for(shards, options), searched, num=num,
                                      offset=offset, safe_search=safe, correct=correct)
    except (NoIndexError, CorruptIndexError) as exc:
        result = SearchResult(searched, searched, (), 0, 0.0, False, (str(exc),), offset, num)
    if offset == 0 and num > 0:  # the query log needy-query crawling reads (crawler.needy)
        # partial matches are logged as what they are: no page has all the query's words
        partial = result.fallback == "partial"
        log_when_sent(request, query, 0 if partial else result.total,
                      [] if partial else [r.score for r in result.results])
    if messages:
        result = replace(result, messages=(*messages, *result.messages))
    return query, result, its, shards


def log_when_sent(request: HttpRequest, query: str, total: int, scores: list[float]) -> None:
    """Log the search (:meth:`QueryLog.record`) once its answer has been sent: the view hands
    the response over with :func:`sent_then_log`, whose close (the WSGI server's call after
    the last byte, the test client's at the end of the request) writes the row. The insert,
    and now and then SQLite's WAL checkpoint, no longer delay the page."""
    request._query_log = (query, total, scores)  # type: ignore[attr-defined]


def sent_then_log(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    logged = getattr(request, "_query_log", None)
    if logged is not None:
        from .models import QueryLog

        del request._query_log  # type: ignore[attr-defined]
        # HttpResponse.close() runs its closers before request_finished closes the database
        # connection; record() never raises
        response._resource_closers.append(lambda: QueryLog.record(*logged))
    return response


def with_csp(response: HttpResponse, policy: str = PAGE_CSP) -> HttpResponse:
    response["Content-Security-Policy"] = policy
    response["X-Content-Type-Options"] = "nosniff"
    response["Referrer-Policy"] = "same-origin"
    return response


def base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


# -- the search page ---------------------------------------------------------------------


def _local_shards(shards: list[ShardClient]) -> list[LocalShard]:
    return [s for s in shards if isinstance(s, LocalShard)]


def _known_to_index(shards: list[ShardClient], lang: str) -> Any:
    local = _local_shards(shards)

    def known(word: str) -> bool:
        terms = _ANALYZER.query_terms(word, lang)
        if not terms:
            return False
        for shard in local:
            with shard.lock:
                if all(shard.reader.term_stats(t).docs > 0 for t in terms):
                    return True
        return False

    return known


def did_you_mean(query: str, its: int | None, shards: list[ShardClient],
                 lang: str = "en") -> str | None:
    if its is None or not _local_shards(shards):
        return None
    try:
        _, bundles = locate_index(settings.WORK_DIRECTORY, its)
    except NoIndexError:
        return None
    lexicon = LEXICONS.get(settings.WORK_DIRECTORY, its, bundles)
    if not len(lexicon):
        return None
    return lexicon.did_you_mean(query, _known_to_index(shards, lang))


def _classify(result: SearchResult, query: str) -> dict[str, list[str]]:
    """The pipeline's messages sorted into notices, warnings (partial results) and errors."""
    notices, warnings, errors = [], [], []
    failed = set(result.failed_shards)
    for m in result.messages:
        low = m.lower()
        if m.startswith("searched for:"):
            continue  # shown as the rewritten query
        if m in failed or "time budget" in low or "partial" in low or "shard" in low:
            warnings.append(m)
        elif "no index" in low or "cannot be read" in low or "corrupt" in low:
            errors.append(m)
        else:
            notices.append(m)
    if result.partial and not warnings:
        warnings.append("not every part of the index answered in time")
    return {"notices": notices, "warnings": warnings, "errors": errors}


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    fmt = request.GET.get("f", "")
    query = request.GET.get("q", "")
    options = options_for_search()
    if fmt == "json":
        return sent_then_log(request, JsonResponse(run_search(request, options)[1].as_dict()))
    if fmt == "rss":
        _, result, _, _ = run_search(request, options)
        params = {k: v for k, v in request.GET.items() if k in ("q", "num", "limit", "its",
                                                                 "safe", "lang", "f")}
        body = feeds.rss(result, base_url(request), params)
        return sent_then_log(request, with_csp(HttpResponse(
            body, content_type="application/rss+xml; charset=utf-8")))
    safe, lang = search_filters(request)
    context: dict[str, Any] = {
        "query": query.strip()[:MAX_QUERY_CHARS], "result": None, "safe": safe, "lang": lang,
        "languages": page.LANGUAGES, "options": options, "its": request.GET.get("its", ""),
        "num": request.GET.get("num", ""),
    }
    status = 200
    if query.strip():
        try:
            context.update(search_context(request, options, safe, lang))
        except (ShardError, OSError, ValueError) as exc:
            logger.exception("search failed for %r", query)
            context["notes"] = {"notices": [], "warnings": [],
                                   "errors": [f"the search failed: {exc}"]}
            status = 500
    response = render(request, "ranking/search.html", context, status=status)
    return sent_then_log(request, with_csp(response))


def search_context(request: HttpRequest, options: SearchOptions, safe: bool,
                   lang: str) -> dict[str, Any]:
    query, result, its, shards = run_search(request, options)
    keep = {"safe": "off"} if not safe else {}
    if lang:
        keep["lang"] = lang
    if request.GET.get("its"):
        keep["its"] = request.GET["its"]
    if request.GET.get("num"):
        keep["num"] = request.GET["num"]
    if forced(request):
        keep["nfpr"] = "1"
    params = {"q": query.strip(), **keep}
    if request.GET.get("limit"):
        params["limit"] = request.GET["limit"]
    views = page.result_views(result, shards, its, options, keep)
    parsed = _PARSER.parse(effective_query(query, lang), safe_search=safe)
    suggestion = None
    if options.show_word_suggest and query.strip() and not result.fallback:
        suggestion = did_you_mean(query.strip(), its, shards, parsed.lang)
    rewritten = result.rewritten if parsed.guessed and not result.fallback and \
        result.rewritten.strip() != effective_query(query, lang).strip() else ""
    corrected = ""
    if result.fallback == "corrected":
        corrected = result.searched
        if lang and corrected.endswith(f" lang:{lang}"):
            corrected = corrected[:-len(f" lang:{lang}")]
    unforced = {k: v for k, v in keep.items() if k != "nfpr"}
    rss_params = {**params, "f": "rss"}
    return {
        "result": result, "results": views, "its_value": its,
        "pagination": page.pagination(result, params),
        "notes": _classify(result, query),
        "did_you_mean": suggestion,
        "did_you_mean_href": "/?" + urlencode({**unforced, "q": suggestion})
        if suggestion else "",
        "corrected": corrected,
        "corrected_href": "/?" + urlencode({**unforced, "q": corrected, "nfpr": "1"})
        if corrected else "",
        "original_href": "/?" + urlencode({**unforced, "q": query.strip(), "nfpr": "1"}),
        "partial_match": result.fallback == "partial",
        "rewritten": rewritten,
        "rss_href": "/?" + urlencode(rss_params),
        "json_href": "/?" + urlencode({**params, "f": "json"}),
        "safe_toggle_href": "/?" + urlencode(
            {**params, "safe": "on" if not safe else "off"}),
        "elapsed": f"{result.elapsed:.2f}",
    }


# -- the cached page -----------------------------------------------------------------------


def _cached_page(request: HttpRequest) -> tuple[str, int | None, Any, list[ShardClient]]:
    url = request.GET.get("url", "").strip()
    if not url:
        raise Http404("which page? give its url")
    its = parse_int(request.GET.get("its"), None)
    try:
        its, shards = index_shards(its)
    except NoIndexError as exc:
        raise Http404(str(exc)) from exc
    stored = page.find_stored_page(shards, url)
    return url, its, stored, shards


def _no_copy(request: HttpRequest, url: str, reason: str) -> HttpResponse:
    response = render(request, "ranking/cache.html",
                      {"url": url, "reason": reason, "query": request.GET.get("q", "")},
                      status=404)
    return with_csp(response)


@require_GET
def cache(request: HttpRequest) -> HttpResponse:
    try:
        url, its, stored, _ = _cached_page(request)
    except Http404 as exc:
        return _no_copy(request, request.GET.get("url", ""), str(exc))
    if stored is None:
        return _no_copy(request, url, "this page is not in the index")
    if not stored.archivable:
        return _no_copy(request, url, "the page asked not to be archived (NOARCHIVE)")
    if not stored.has_cache:
        return _no_copy(request, url, "no copy of this page was kept")
    query = request.GET.get("q", "")[:MAX_QUERY_CHARS]
    words = _PARSER.parse(query).highlight if query.strip() else ()
    params = {"url": url, "q": query, **({"its": str(its)} if its is not None else {})}
    summary = stored.summary
    context = {
        "url": url, "its": its, "query": query, "words": words,
        "fetched_at": stored.fetched_at, "title": summary.get("title") or url,
        "description": summary.get("description", ""),
        "frame_src": "/cache/frame?" + urlencode(params),
        "sandbox": cached.FRAME_SANDBOX,
        "back_href": "/?" + urlencode({"q": query}) if query.strip() else "/",
    }
    return with_csp(render(request, "ranking/cache.html", context))


@require_GET
@xframe_options_sameorigin
def cache_frame(request: HttpRequest) -> HttpResponse:
    try:
        url, _, stored, shards = _cached_page(request)
    except Http404:
        stored = None
        shards = []
        url = ""
    data = None
    if stored is not None and stored.archivable and stored.has_cache:
        data = page.cached_copy(shards, stored)
    if data is None:
        response = HttpResponse("no cached copy", content_type="text/plain; charset=utf-8",
                                status=404)
    else:
        query = request.GET.get("q", "")[:MAX_QUERY_CHARS]
        words = _PARSER.parse(query).highlight if query.strip() else ()
        document = cached.frame_document(data, url, str(stored.summary.get("mime_type", "")),
                                         words)
        response = HttpResponse(document, content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "private, max-age=300"
    with_csp(response, cached.FRAME_CSP)
    response["Referrer-Policy"] = "no-referrer"
    return response


# -- suggestions and OpenSearch --------------------------------------------------------------


@require_GET
def suggest(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")[:200]
    suggestions: list[str] = []
    if query.strip() and options_for_search().show_word_suggest:
        its = parse_int(request.GET.get("its"), None)
        try:
            chosen, bundles = locate_index(settings.WORK_DIRECTORY, its)
            suggestions = LEXICONS.get(settings.WORK_DIRECTORY, chosen, bundles) \
                .suggest_queries(query.lstrip(), 8)
        except NoIndexError:
            suggestions = []
    if request.GET.get("f") == "opensearch":
        response: HttpResponse = JsonResponse([query, suggestions], safe=False)
        response["Content-Type"] = "application/x-suggestions+json"
    else:
        response = JsonResponse({"query": query, "suggestions": suggestions})
    response["Cache-Control"] = "public, max-age=60"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@require_GET
def opensearch(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(feeds.opensearch_description(base_url(request)),
                            content_type="application/opensearchdescription+xml; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    return response
