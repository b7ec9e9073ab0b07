"""Urls the public submits, and what the crawler knows of a url (issue 38, item 4).

Layer: Django glue of the ``crawler`` app (services that write :class:`UrlSubmission` rows and
seeds, selectors that read the crawl's rows). The public page is the ranking app's
(:mod:`ranking.webmasters.site_status`), which adds what the index knows (indexed, when, next recrawl);
the admin lists submissions with approve and decline actions (:mod:`crawler.admin.submissions`).

A submission is refused at once, with the reason, when the crawler could never fetch it: not an
``http(s)`` url it can take (:func:`crawler.core.urls.canonicalize`), a host none of whose
addresses the egress allow-list lets the fetchers reach (``CRAWLER_ALLOWED_NETWORKS``), or a
path the host's robots.txt, as the running crawl last read it, disallows to our robot. Else it
waits for the operator (``SUBMISSIONS`` = ``review``, the default) or joins the running crawl
as a seed at once (``auto``); an approved url is a seed of the running crawl, which its queue
server picks up as it follows the crawl's edits.

What the crawler knows of a url (:func:`crawl_state_get`), newest crawl first: refused (the
queue server's or fetcher's reason: robots, site rules, egress policy, depth ...), fetched (the
HTTP status and when), queued (a seed or approved submission of a running crawl not fetched
yet), awaiting review, declined, or nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from protego import Protego

from crawler.core.http.egress import EgressPolicy
from crawler.core.queue_server.activity import reason_label
from crawler.core.urls import canonicalize, origin_of
from crawler.identity import robots_agent_name
from crawler.models import (
    Crawl,
    CrawlHost,
    FetchedUrl,
    RefusedUrl,
    SeedSite,
    SubmissionStatus,
    UrlSubmission,
)
from crawler.models.crawls import CrawlStatus
from crawler.selectors import ConfigNotFound, page_options_data_get

MAX_URL = 2000
Resolver = Callable[[str], list[str]]


class SubmissionError(ValueError):
    """A submission that cannot be taken (the message is shown to the submitter)."""


def resolve(host: str) -> list[str]:
    """The addresses of ``host`` (an address is its own); none when it does not resolve."""
    try:
        return [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        pass
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, None)})
    except (OSError, UnicodeError):
        return []


def client_key(address: str) -> str:
    """A keyed hash of a client address (kept instead of the address)."""
    return hmac.new(str(settings.SECRET_KEY).encode(), address.encode(),
                    hashlib.sha256).hexdigest()[:32]


def submission_url(text: str) -> str:
    """The canonical url of a submission; raises SubmissionError."""
    text = (text or "").strip()
    if not text or len(text) > MAX_URL:
        raise SubmissionError("Give an http or https url of at most 2000 characters.")
    if "://" not in text:
        text = "https://" + text
    url = canonicalize(text)
    if url is None or not url.startswith(("http://", "https://")):
        raise SubmissionError("This is not an http or https url the crawler can fetch.")
    return url


def _running_crawl() -> Crawl | None:
    return Crawl.objects.filter(status=CrawlStatus.RUNNING).order_by("-pk").first()


def immediate_refusal(url: str, resolver: Resolver = resolve) -> str:
    """Why the crawler could never fetch ``url`` ("" when it might): the egress allow-list
    refuses every address of its host (or it has none), or the running crawl's copy of the
    host's robots.txt disallows it."""
    host = url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
    host = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    addresses = resolver(host)
    if not addresses:
        return "the host name does not resolve"
    policy = EgressPolicy.from_strings(settings.CRAWLER_ALLOWED_NETWORKS)
    if not any(policy.allows(a) for a in addresses):
        return reason_label("egress")
    crawl = _running_crawl()
    if crawl is not None:
        row = CrawlHost.objects.filter(crawl=crawl, origin=origin_of(url)).only(
            "robots_text").first()
        if row is not None and row.robots_text and not Protego.parse(row.robots_text).can_fetch(
                url, robots_agent_name()):
            return reason_label("robots")
    return ""


@transaction.atomic
def submission_create(text: str, client: str, resolver: Resolver = resolve) -> UrlSubmission:
    """Record a submission (``client``: the submitter's address), refused at once or waiting
    (or, with ``SUBMISSIONS = auto``, approved into the running crawl). Raises
    SubmissionError for a url that is not one."""
    url = submission_url(text)
    refusal = immediate_refusal(url, resolver)
    submission = UrlSubmission.objects.create(
        url=url, origin=origin_of(url), client=client_key(client),
        status=SubmissionStatus.REFUSED if refusal else SubmissionStatus.PENDING,
        reason=refusal, decided_at=timezone.now() if refusal else None)
    if not refusal and settings.SUBMISSIONS == "auto":
        submissions_approve([submission.pk])
        submission.refresh_from_db()
    return submission


@transaction.atomic
def submissions_approve(ids: Iterable[int]) -> int:
    """Add the pending (or declined) submissions ``ids`` to the running crawl as seeds; how
    many were. Raises SubmissionError when no crawl runs."""
    crawl = _running_crawl()
    if crawl is None:
        raise SubmissionError("No crawl is running: start one, then approve the submissions.")
    rows = list(UrlSubmission.objects.select_for_update().filter(
        pk__in=list(ids), status__in=(SubmissionStatus.PENDING, SubmissionStatus.DECLINED)))
    known = set(SeedSite.objects.filter(crawl=crawl, url__in=[r.url for r in rows])
                .values_list("url", flat=True))
    SeedSite.objects.bulk_create([SeedSite(crawl=crawl, url=u)
                                  for u in dict.fromkeys(r.url for r in rows) if u not in known])
    now = timezone.now()
    for row in rows:
        row.status, row.crawl, row.decided_at = SubmissionStatus.APPROVED, crawl, now
    # the queue servers read the crawl's seeds again every few seconds: new ones get queued
    UrlSubmission.objects.bulk_update(rows, ["status", "crawl", "decided_at"])
    return len(rows)


def submissions_decline(ids: Iterable[int]) -> int:
    return UrlSubmission.objects.filter(pk__in=list(ids), status=SubmissionStatus.PENDING).update(
        status=SubmissionStatus.DECLINED, decided_at=timezone.now())


@dataclass(frozen=True, slots=True)
class CrawlState:
    """What the crawler knows of a url: ``state`` (refused, fetched, queued, pending,
    declined or unknown), the ``reason`` of a refusal, the ``crawl`` it concerns, the HTTP
    ``status`` and time ``at`` of a fetch (or of the refusal or submission)."""

    state: str
    reason: str = ""
    crawl: str = ""
    status: int | None = None
    at: datetime | None = None


def crawl_state_get(url: str) -> CrawlState:
    """The newest of what the crawls' rows and the submissions say about ``url``."""
    crawls = list(Crawl.objects.order_by("-pk").only("pk", "name", "status")[:5])
    submission = UrlSubmission.objects.filter(url=url).first()
    for crawl in crawls:
        fetched = FetchedUrl.objects.filter(crawl=crawl, url=url).order_by("-pk").first()
        if fetched is not None:
            return CrawlState("fetched", fetched.error, crawl.name, fetched.status,
                              fetched.fetched_at)
        refused = RefusedUrl.objects.filter(crawl=crawl, url=url).order_by("-pk").first()
        if refused is not None:
            reason = reason_label(refused.reason) + (f" ({refused.detail})" if refused.detail
                                                     else "")
            return CrawlState("refused", reason, crawl.name, None, refused.refused_at)
        if crawl.status == CrawlStatus.RUNNING and SeedSite.objects.filter(
                crawl=crawl, url=url).exists():
            return CrawlState("queued", "", crawl.name)
    if submission is None:
        return CrawlState("unknown")
    if submission.status == SubmissionStatus.REFUSED:
        return CrawlState("refused", submission.reason, "", None, submission.submitted_at)
    if submission.status == SubmissionStatus.APPROVED:
        name = submission.crawl.name if submission.crawl else ""
        return CrawlState("queued", "", name, None, submission.decided_at)
    if submission.status == SubmissionStatus.DECLINED:
        return CrawlState("declined", "", "", None, submission.decided_at)
    return CrawlState("pending", "", "", None, submission.submitted_at)


def recrawl_days(timestamp: int | None) -> int:
    """The recrawl period in days of crawl ``timestamp``'s Page Options (-1: never, also for
    a crawl the database does not know)."""
    crawl = Crawl.objects.filter(timestamp=timestamp).only("pk").first() if timestamp else None
    if crawl is None:
        return -1
    try:
        options = page_options_data_get(crawl.pk) or {}
        return int(options.get("page_recrawl_days", -1))
    except (ConfigNotFound, TypeError, ValueError):
        return -1
