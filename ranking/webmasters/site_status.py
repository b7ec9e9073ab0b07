"""``/indexed``: "Is my site indexed?", a public page where anyone submits a url and sees its
state (issue 38, item 4).

Layer: Django glue of the ``ranking`` app (the only app that sees both the crawler's rows and
the index). ``GET /indexed?url=`` shows the url's state; ``POST /indexed`` (url, the signed
question's token and the answer: :mod:`operations.challenge`) records a submission
(:func:`crawler.submissions.submission_create`) and redirects to its state. Both count
against ``SUBMISSIONS_PER_CLIENT_PER_HOUR`` per client address (429 past it).

The state, first that holds:

1. **indexed**: the index searched holds the page (its crawl date; and its next recrawl: the
   crawl's Page Options recrawl after N days, else not scheduled);
2. what the crawler knows (:func:`crawler.submissions.crawl_state_get`): **fetched** (not in
   the index yet: it is refreshed every few seconds), **refused** and why (robots.txt, the
   crawl's rules, the egress policy, ...), **queued** (a seed of the running crawl),
   **awaiting review**, **declined**;
3. **unknown**: neither the index nor the crawler has seen it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from crawler.submissions import (
    CrawlState,
    SubmissionError,
    crawl_state_get,
    recrawl_days,
    submission_create,
    submission_url,
)
from indexer.core.errors import CorruptIndexError
from operations.challenge import challenge_check, challenge_new, rate_limited
from operations.client_address import client_address
from ranking.core.errors import NoIndexError
from ranking.search_service import search_service
from ranking.views import with_csp

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UrlStatus:
    """What the page says of one url: ``state`` (a code the template and tests read), its
    ``label`` and ``detail`` (translated), and the times it names."""

    url: str
    state: str
    label: str
    detail: str = ""
    crawled: datetime | None = None
    recrawl: str = ""

    @property
    def crawled_text(self) -> str:
        return self.crawled.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if self.crawled \
            else ""


def _labels() -> dict[str, str]:
    return {"indexed": _("Indexed"), "fetched": _("Fetched, not in the index yet"),
            "refused": _("Refused"), "queued": _("Queued for crawling"),
            "pending": _("Awaiting review"), "declined": _("Declined by the operator"),
            "unknown": _("Not known to this search engine")}


def _recrawl(its: int | None, fetched: datetime | None) -> str:
    """When the page is fetched again: its crawl's Page Options recrawl after N days."""
    try:
        days = recrawl_days(its)
    except DatabaseError:
        days = -1
    if days < 0 or fetched is None:
        return _("not scheduled: this crawl does not recrawl pages")
    due = fetched + timedelta(seconds=days * settings.RECRAWL_DAY_SECONDS)
    return _("from %(date)s") % {"date": due.strftime("%Y-%m-%d %H:%M UTC")}


def url_status(url: str) -> UrlStatus:
    """The state of ``url`` (canonical) as the page shows it (see the module docstring)."""
    labels = _labels()
    try:
        its, page, _shards = search_service().stored_page(url, None)
    except (NoIndexError, CorruptIndexError):
        its, page = None, None
    if page is not None:
        return UrlStatus(url, "indexed", labels["indexed"], "", page.fetched_at,
                         _recrawl(its, page.fetched_at))
    state: CrawlState = crawl_state_get(url)
    detail = state.reason
    if state.state == "fetched":
        detail = _("HTTP status %(status)s") % {"status": state.status or "-"}
        if state.reason:
            detail += f" ({state.reason})"
    elif state.state == "queued" and state.crawl:
        detail = _("in the crawl %(name)s") % {"name": state.crawl}
    return UrlStatus(url, state.state, labels[state.state], detail, state.at)


@require_http_methods(["GET", "POST"])
def site_status(request: HttpRequest) -> HttpResponse:
    client = client_address(request)
    context: dict = {"url": "", "status": None, "error": "", "closed": settings.SUBMISSIONS
                     == "off"}
    given = (request.POST if request.method == "POST" else request.GET).get("url", "")
    code = 200
    if given.strip():
        context["url"] = given.strip()[:2000]
        if rate_limited("indexed", client, settings.SUBMISSIONS_PER_CLIENT_PER_HOUR):
            context["error"] = _("Too many requests from your address: try again in an hour.")
            code = 429
        else:
            code = _answer(request, given, client, context)
            if code == 303:
                return HttpResponseRedirect("/indexed?" + urlencode(
                    {"url": context["url"], "submitted": "1"}), status=303)
    context["submitted"] = request.GET.get("submitted") == "1" and context["status"]
    context["question"], context["token"] = challenge_new()
    response = render(request, "ranking/site_status.html", context, status=code)
    response["X-Robots-Tag"] = "noindex"
    return with_csp(response)


def _answer(request: HttpRequest, given: str, client: str, context: dict) -> int:
    """Fill ``context`` for a lookup or a submission; the status code (303: submitted)."""
    try:
        url = submission_url(given)
    except SubmissionError:
        context["error"] = _("This is not an http or https url the crawler can fetch.")
        return 400
    context["url"] = url
    if request.method == "POST":
        if context["closed"]:
            context["error"] = _("This search engine takes no submissions.")
            return 403
        refusal = challenge_check(request.POST.get("token", ""),
                                  request.POST.get("answer", ""))
        if refusal:
            context["error"] = _("The answer to the question was not right: %(why)s.") % {
                "why": refusal}
            context["status"] = url_status(url)
            return 400
        if url_status(url).state in ("unknown", "declined"):
            submission_create(url, client)
        return 303
    context["status"] = url_status(url)
    return 200

