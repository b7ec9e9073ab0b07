"""The search page and its outputs, the cached page view, and query suggestions.

Layer: glue (Django). A view parses the request (:mod:`ranking.params`), asks the process's
search service (:mod:`ranking.search_service`: options, shards, searchers and their caches)
and renders the answer; a first-page search is recorded in the query log
(:func:`querylog.services.query_log_record`) once its answer has been sent.

URLs and parameters:

* ``GET /?q=QUERY`` the search page (a query longer than ``MAX_QUERY_CHARS``, 1,000
  characters, is cut to that length and the answer says so in its messages); ``num`` results per page (default: Page Options' results
  per page), ``limit`` the offset of the first, ``its`` a crawl timestamp, ``safe=off`` turns
  safe search off (the parser then adds ``safe:all`` instead of ``safe:true``), ``lang=xx``
  keeps pages in language ``xx`` (``lang=all``: any language; empty: the guessed query
  language) by adding the ``lang:`` meta word. ``f=json`` answers ``{results: [{url, title,
  snippet, score, explanation}], total, time, partial, messages, query, rewritten, offset,
  num, searched, fallback, index, elsewhere}``; ``f=rss`` RSS 2.0 with OpenSearch response elements
  (:mod:`ranking.feeds`). A query with no result shows a spelling correction's results
  (``fallback: "corrected"``, ``searched``: the correction; ``nfpr=1`` forces the query as
  typed) or the pages with most of its words (``fallback: "partial"``); ``fallback`` is null
  otherwise (:mod:`ranking.core.search.relax`). ``partial`` is about shards: true when a shard did
  not answer or a time budget ran out.
* ``GET /cache?url=&its=&q=`` the stored copy of a page under a banner; the copy itself comes
  from ``GET /cache/frame?...`` into a sandboxed iframe, with a restrictive CSP
  (:mod:`ranking.cached`). Pages whose robot metas say NOARCHIVE or NONE have none (404).
* ``GET /suggest?q=&its=`` completions of the last word, ``{query, suggestions}``; with
  ``f=opensearch`` the OpenSearch suggestions form ``[query, [completions]]``
  (:mod:`ranking.suggest`).
* ``GET /opensearch.xml`` the OpenSearch description document the page links.
* ``GET /similar?url=&its=`` the pages whose stored embeddings are nearest ``url``'s page
  (:mod:`ranking.similar`; ``f=json``: ``{url, similar: [{url, title, description,
  similarity}], fallback}``). Without embeddings for the index or the page it redirects to
  the keyword "similar" search (``fallback: "keywords"`` and its ``search`` url in JSON).

Bad input (syntax, numbers) becomes messages; a missing index is a message; never a 500 for
the JSON API.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_GET

from indexer.core.errors import CorruptIndexError
from operations.client_address import client_address
from querylog.services import query_log_record
from ranking.core.errors import NoIndexError, ShardError, public_reason
from ranking.core.options import SearchOptions
from ranking.core.search.messages import MessageKind, SearchMessage, message_texts
from ranking.core.search.pipeline import NO_SHARD_ANSWERED, Result, SearchResult
from ranking.core.shard.candidates import ShardClient
from searchindex.selectors import finished_crawls

from . import cached, feeds, page
from . import similar as similar_pages
from .metrics import SEARCH_SECONDS
from .params import (
    MAX_QUERY_CHARS,
    effective_query,
    is_staff,
    parse_int,
    search_filters,
    search_params,
    search_period,
    search_tab,
)
from .search_service import IndexInfo, SearchAnswer, search_service
from .searchpage import media
from .searchpage import views as site_views
from .searchpage.messages import NOT_EVERY_PART, index_label, translated
from .searchpage.news import NewsFacts
from .searchpage.preferences import asked

logger = logging.getLogger(__name__)
PAGE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; "
            "form-action 'self'; frame-ancestors 'none'")


def run_search(request: HttpRequest, options: SearchOptions) -> SearchAnswer:
    """The request's search (:meth:`SearchService.search`), its query log entry kept for
    :func:`sent_then_log`."""
    answer = search_service().search(search_params(request, options.results_per_page), options)
    if answer.log is not None:
        log_when_sent(request, *answer.log)
    return answer


def log_when_sent(request: HttpRequest, query: str, total: int, scores: list[float]) -> None:
    """Log the search (:func:`querylog.services.query_log_record`) once its answer has been
    sent: the view hands the response over with :func:`sent_then_log`, whose close (the WSGI
    server's call after the last byte, the test client's at the end of the request) writes the
    row. The insert, and now and then SQLite's WAL checkpoint, no longer delay the page."""
    request._query_log = (query, total, scores,  # type: ignore[attr-defined]
                          client_address(request))


def sent_then_log(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    logged = getattr(request, "_query_log", None)
    if logged is not None:
        del request._query_log  # type: ignore[attr-defined]
        # HttpResponse.close() runs its closers before request_finished closes the database
        # connection; query_log_record() never raises
        response._resource_closers.append(lambda: query_log_record(*logged))
    return response


def with_csp(response: HttpResponse, policy: str = PAGE_CSP) -> HttpResponse:
    response["Content-Security-Policy"] = policy
    response["X-Content-Type-Options"] = "nosniff"
    response["Referrer-Policy"] = "same-origin"
    return response


def base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


# -- the search page ---------------------------------------------------------------------


def _classify(result: SearchResult, query: str) -> dict[str, list[str]]:
    """The search's messages sorted by their kind into notices, warnings (partial results) and
    errors (:mod:`ranking.core.search.messages`; the rewritten query is shown apart)."""
    notices: list[str] = []
    warnings: list[str] = []
    errors: list[str] = []
    shown = {MessageKind.NOTICE: notices, MessageKind.WARNING: warnings,
             MessageKind.ERROR: errors}
    for m in result.messages:
        if m.kind in shown:
            shown[m.kind].append(translated(m.text))
    nothing_answered = any(m == SearchMessage.error(NO_SHARD_ANSWERED) for m in result.messages)
    if result.partial and not warnings and not nothing_answered:
        warnings.append(translated(NOT_EVERY_PART))
    return {"notices": notices, "warnings": warnings, "errors": errors}


# What the search pipeline raises when it cannot answer at all: a shard (or this machine's
# index files) failing in a way the fan-out could not contain. The answer then says so, with
# the failed shard's name, as a normal page (no 5xx: the search service is up, the index is not).
SEARCH_FAILURES = (ShardError, OSError, ValueError)


def failed_search(query: str, exc: Exception) -> SearchResult:
    """The result of a search that raised ``exc``: no results, marked partial, and a message
    naming what failed (absolute paths cut)."""
    logger.exception("search failed for %r", query)
    return SearchResult(query, query, (), 0, 0.0, True,
                        (SearchMessage.error(f"the search failed: {public_reason(exc)}"),))


def run_search_or_failure(request: HttpRequest, options: SearchOptions
                          ) -> tuple[SearchResult, IndexInfo | None]:
    """(the result, the index that answered) of the request's search, or of its failure."""
    try:
        answer = run_search(request, options)
    except SEARCH_FAILURES as exc:
        return failed_search(request.GET.get("q", "")[:MAX_QUERY_CHARS], exc), None
    return answer.result, answer.index


def json_answer(request: HttpRequest, options: SearchOptions) -> dict[str, Any]:
    """The JSON form of the search: the result's fields (each result as
    :func:`result_json`), ``index``, the index that answered
    (its label, kind, crawl timestamps and page count; null when none could be read), and
    ``elsewhere``, the crawls not searched that hold the ``site:`` hosts of a query with no
    result (:func:`ranking.page.crawls_holding`)."""
    try:
        answer = run_search(request, options)
    except SEARCH_FAILURES as exc:
        failed = failed_search(request.GET.get("q", "")[:MAX_QUERY_CHARS], exc)
        return {**failed.as_dict(), "index": None, "elsewhere": []}
    index = answer.index
    found = sites_elsewhere(answer, {"q": answer.params.query.strip(), "f": "json"})
    explain = request.GET.get("explain", "") in ("1", "on", "true", "yes")
    return {**answer.result.as_dict(),
            "results": [result_json(r, explain, answer.news) for r in answer.result.results],
            "index": index.as_dict() if index is not None else None,
            "elsewhere": [e.as_dict() for e in found]}


def result_json(result: Result, explain: bool,
                news: dict[str, NewsFacts] | None = None) -> dict[str, Any]:
    """One result of the JSON answer: ``title`` the page's title as plain text (it was the
    highlighted HTML until issue 39; that is ``title_html`` now, escaped, the query's words in
    ``<b>``), ``snippet`` highlighted HTML as before, ``score``; ``explanation`` (the score's
    parts, about 2 KB) only with ``explain=1``; on the News tab, ``source`` (the news source's
    name) and ``published`` (ISO 8601, UTC)."""
    item = {"url": result.url, "title": result.plain_title or result.url,
            "title_html": result.title, "snippet": result.snippet, "score": result.score}
    if result.sections:  # the page's other matching sections, grouped under it (issue 36)
        item["sections"] = [{"url": u, "title": t} for u, t in result.sections]
    facts = news.get(result.url) if news else None
    if facts is not None:
        item["source"] = facts.source
        item["published"] = datetime.fromtimestamp(facts.published, UTC).isoformat() \
            if facts.published > 0 else None
    if result.similar_count:  # its near-duplicates, folded into it (issue 38)
        item["similar_count"] = result.similar_count
    if explain:
        item["explanation"] = result.explanation
    return item


def sites_elsewhere(answer: SearchAnswer, params: dict[str, str]) -> list[page.Elsewhere]:
    """For a search with no result whose query names ``site:`` hosts, the finished crawls
    not searched that hold pages of them (links keep ``params`` but a mix); else none."""
    result = answer.result
    if result.results or result.offset or (answer.index is None and answer.its is None):
        return []
    service = search_service()
    hosts = page.site_hosts(service.parser.parse(answer.params.searched,
                                            safe_search=answer.params.safe))
    if not hosts:
        return []
    searched = answer.index.timestamps if answer.index is not None and \
        answer.index.timestamps else (answer.its,)
    try:
        crawls = finished_crawls(page.MAX_CRAWLS)
    except DatabaseError:
        return []
    staff, safe = answer.params.staff, answer.params.safe

    def holds(its: int, host: str) -> bool:
        return service.crawl_holds_site(its, host, staff=staff, safe=safe)
    keep = {k: v for k, v in params.items() if k not in ("mix", "its", "limit")}
    return page.crawls_holding(hosts, searched, crawls, holds, keep)


@require_GET
def search(request: HttpRequest) -> HttpResponse:
    fmt = request.GET.get("f", "")
    with SEARCH_SECONDS.labels(fmt if fmt in ("json", "rss") else "html").time():
        return _search(request, fmt)


def _search(request: HttpRequest, fmt: str) -> HttpResponse:
    query = request.GET.get("q", "")
    options = search_service().options()
    if fmt == "json":
        return sent_then_log(request, JsonResponse(json_answer(request, options)))
    if fmt == "rss":
        result, _ = run_search_or_failure(request, options)
        params = {k: v for k, v in request.GET.items()
                  if k in ("q", "num", "limit", "its", "mix", "safe", "lang", "t", "tab", "size",
                           "duration", "f")}
        body = feeds.rss(result, base_url(request), params,
                         search_service().appearance().name)
        return sent_then_log(request, with_csp(HttpResponse(
            body, content_type="application/rss+xml; charset=utf-8")))
    safe, lang = search_filters(request)
    period = search_period(request)
    context: dict[str, Any] = {
        "query": query.strip()[:MAX_QUERY_CHARS], "result": None, "safe": safe, "lang": lang,
        "languages": page.LANGUAGES, "options": options, "its": request.GET.get("its", ""),
        "num": request.GET.get("num", ""), "period": period, "periods": site_views.periods(),
        "period_label": site_views.PERIOD_LABELS[period] if period else "",
        "new_tab": asked(request, "nt") == "1",
        **media_context(request),
    }
    if query.strip():
        try:
            context.update(search_context(request, options))
        except SEARCH_FAILURES as exc:
            failed = failed_search(context["query"], exc)
            context["notes"] = {"notices": [], "warnings": [],
                                "errors": [translated(m) for m in message_texts(failed.messages)]}
    response = render(request, "ranking/search.html", context)
    return sent_then_log(request, with_csp(response))


def media_context(request: HttpRequest) -> dict[str, Any]:
    """The Images and Videos tabs' part of the page (:mod:`ranking.searchpage.media`)."""
    tab, size, duration = search_tab(request)
    return {"tab": tab, "size": size, "duration": duration,
            "sizes": list(media.SIZE_LABELS.items()),
            "durations": list(media.DURATION_LABELS.items())}


def search_context(request: HttpRequest, options: SearchOptions) -> dict[str, Any]:
    answer = run_search(request, options)
    query, result, its, shards = answer.params.query, answer.result, answer.its, answer.shards
    safe, lang = answer.params.safe, answer.params.lang
    service = search_service()
    keep = {"safe": "off"} if not safe else {}
    if lang:
        keep["lang"] = lang
    if request.GET.get("its"):
        keep["its"] = request.GET["its"]
    for name in ("num", "t", "tab", "size", "duration"):
        if request.GET.get(name):
            keep[name] = request.GET[name]
    if answer.params.forced:
        keep["nfpr"] = "1"
    if answer.params.mix:
        keep["mix"] = answer.params.mix
    params = {"q": query.strip(), **keep}
    if request.GET.get("limit"):
        params["limit"] = request.GET["limit"]
    views = page.result_views(result, shards, its, options, keep, query.strip())
    tab = search_tab(request)[0]
    media.decorate(views, tab, its, shards, answer.news)
    parsed = service.parser.parse(effective_query(query, lang), safe_search=safe)
    suggestion = None
    if options.show_word_suggest and query.strip() and not result.fallback:
        suggestion = service.did_you_mean(query.strip(), its, shards, parsed.lang)
    rewritten = page.as_typed(result.rewritten, "", answer.params.period_words,
                              answer.params.media_words) \
        if parsed.guessed and not result.fallback and \
        result.rewritten.strip() != answer.params.searched.strip() else ""
    corrected = ""
    if result.fallback == "corrected":
        corrected = page.as_typed(result.searched, lang, answer.params.period_words,
                                  answer.params.media_words)
    unforced = {k: v for k, v in keep.items() if k != "nfpr"}
    rss_params = {**params, "f": "rss"}
    return {
        "result": result, "results": views, "its_value": its, "index": answer.index,
        "index_label": index_label(answer.index.label) if answer.index is not None else "",
        "elsewhere": [replace(e, label=index_label(e.label))
                      for e in sites_elsewhere(answer, params)],
        "pagination": page.pagination(result, params, answer.reach),
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
        "tabs": media.tab_links(params, tab),
        "any_time_href": "/?" + urlencode(
            {**{k: v for k, v in params.items() if k != "limit"}, "t": ""}),
    }


# -- the cached page -----------------------------------------------------------------------


def _cached_page(request: HttpRequest) -> tuple[str, int | None, Any, list[ShardClient]]:
    url = request.GET.get("url", "").strip()
    if not url:
        raise Http404("which page? give its url")
    try:
        its, stored, shards = search_service().stored_page(
            url, parse_int(request.GET.get("its"), None), staff=is_staff(request))
    except NoIndexError as exc:
        raise Http404(str(exc)) from exc
    return url, its, stored, shards


def _no_copy(request: HttpRequest, url: str, reason: str, status: int = 404) -> HttpResponse:
    """The cached page's answer when there is no copy to show: the reason, and a link to the
    page only when its url is a web url (:func:`ranking.cached.is_web_url`)."""
    response = render(request, "ranking/cache.html",
                      {"url": url, "reason": translated(reason),
                       "query": request.GET.get("q", ""),
                       "linkable": cached.is_web_url(url)},
                      status=status)
    return with_csp(response)


NOT_WEB_URL = "only http and https pages have a cached copy"
DAMAGED_COPY = "the stored copy of this page is damaged and cannot be shown"


@require_GET
def cache(request: HttpRequest) -> HttpResponse:
    asked = request.GET.get("url", "").strip()
    if asked and not cached.is_web_url(asked):
        return _no_copy(request, asked, NOT_WEB_URL, status=400)
    try:
        url, its, stored, _ = _cached_page(request)
    except Http404 as exc:
        return _no_copy(request, request.GET.get("url", ""), str(exc))
    except CorruptIndexError as exc:  # this page's stored record is damaged: it is gone
        logger.warning("stored page of %r unreadable: %s", asked, exc)
        return _no_copy(request, asked, DAMAGED_COPY, status=410)
    if stored is None:
        return _no_copy(request, url, "this page is not in the index")
    if not stored.archivable:
        return _no_copy(request, url, "the page asked not to be archived (NOARCHIVE)")
    if not stored.has_cache:
        return _no_copy(request, url, "no copy of this page was kept")
    query = request.GET.get("q", "")[:MAX_QUERY_CHARS]
    words = search_service().parser.parse(query).highlight if query.strip() else ()
    params = {"url": url, "q": query, **({"its": str(its)} if its is not None else {})}
    summary = stored.summary
    context = {
        "url": url, "linkable": cached.is_web_url(url), "its": its, "query": query,
        "words": words,
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
        if not cached.is_web_url(request.GET.get("url", "").strip()):
            raise Http404(NOT_WEB_URL)
        url, _, stored, shards = _cached_page(request)
    except Http404:
        stored = None
        shards = []
        url = ""
    except CorruptIndexError as exc:
        logger.warning("stored page of %r unreadable: %s", request.GET.get("url"), exc)
        stored = None
    data = None
    if stored is not None and stored.archivable and stored.has_cache:
        try:
            data = page.cached_copy(shards, stored)
        except CorruptIndexError as exc:
            logger.warning("cached copy of %r unreadable: %s", url, exc)
    if data is None:
        response = HttpResponse("no cached copy", content_type="text/plain; charset=utf-8",
                                status=404)
    else:
        query = request.GET.get("q", "")[:MAX_QUERY_CHARS]
        words = search_service().parser.parse(query).highlight if query.strip() else ()
        document = cached.frame_document(data, url, str(stored.summary.get("mime_type", "")),
                                         words)
        response = HttpResponse(document, content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "private, max-age=300"
    with_csp(response, cached.FRAME_CSP)
    response["Referrer-Policy"] = "no-referrer"
    return response


# -- similar pages ---------------------------------------------------------------------------

SIMILAR_RESULTS = 10


def _similar_answer(request: HttpRequest, url: str) -> tuple[int, dict[str, Any]]:
    """(status, context) of the Similar pages of ``url``: ``pages`` (None: fall back to the
    keyword search ``search_href``, "" when the page is not in the index either)."""
    service = search_service()
    its = parse_int(request.GET.get("its"), None)
    keep = {"its": request.GET["its"]} if request.GET.get("its") else {}
    context: dict[str, Any] = {"url": url, "pages": None, "search_href": "", "reason": "",
                               "keep": keep}
    try:
        _, shards = service.shards(its, staff=is_staff(request))
        found = similar_pages.similar_to(shards, url, SIMILAR_RESULTS, service.hidden_urls())
        if found is not None:
            context["pages"] = [dict(p.as_dict(), similar_href="/similar?" + urlencode(
                {"url": p.url, **keep})) for p in found]
            return 200, context
        stored = page.find_stored_page(shards, url)
    except NoIndexError as exc:
        context["reason"] = str(exc)
        return 404, context
    except SEARCH_FAILURES + (CorruptIndexError,) as exc:
        logger.warning("similar pages of %r failed: %s", url, exc)
        context["reason"] = f"the index could not be read: {public_reason(exc)}"
        return 200, context
    query = page.similar_query(stored.summary, str(stored.summary.get("title", ""))) \
        if stored is not None else ""
    if not query:
        context["reason"] = "this page is not in the index"
        return 404, context
    context["search_href"] = "/?" + urlencode({"q": query, **keep})
    return 200, context


@require_GET
def similar(request: HttpRequest) -> HttpResponse:
    url = request.GET.get("url", "").strip()[:MAX_QUERY_CHARS]
    if not url:
        status, context = 400, {"url": "", "pages": None, "reason": "which page? give its url"}
    else:
        status, context = _similar_answer(request, url)
    if request.GET.get("f") == "json":
        return JsonResponse({"url": url, "similar": context.get("pages") or [],
                             "fallback": "keywords" if context.get("search_href") else None,
                             "search": context.get("search_href") or None,
                             "reason": context.get("reason") or None}, status=status)
    if context.get("search_href"):
        return HttpResponseRedirect(context["search_href"])
    context["reason"] = translated(context.get("reason") or "")
    return with_csp(render(request, "ranking/similar.html", context, status=status))


# -- suggestions and OpenSearch --------------------------------------------------------------


@require_GET
def suggest(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")[:200]
    suggestions: list[str] = []
    service = search_service()
    if query.strip() and service.options().show_word_suggest:
        suggestions = service.suggestions(query, parse_int(request.GET.get("its"), None),
                                          staff=is_staff(request))
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
    look = search_service().appearance()
    image = f"{base_url(request)}/site/logo?v={look.logo_version}" if look.logo_version else None
    response = HttpResponse(feeds.opensearch_description(base_url(request), look.name, image),
                            content_type="application/opensearchdescription+xml; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    return response
