"""Reads behind the admin's url and host pages of a crawl: fetched urls, refused urls by
reason, what is queued, hosts, one host.

Layer: Django glue (reads only). Lists are paged by key, never by OFFSET: a page is the rows
after (or before) a cursor taken from the previous page, on the indexes of
``crawler.models.hosts``, so the thousandth page costs what the first does. Cursors come from
the query string and are checked here: a bad one raises :class:`BadCursor` (the view answers
400).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet, Sum

from crawler.core.queue_server.activity import reason_label
from crawler.core.queue_server.heartbeat import crawl_counters
from crawler.models import (
    CrawlHost,
    FetchedUrl,
    HostOverride,
    RefusalCount,
    RefusedHostCount,
    RefusedUrl,
)
from crawler.selectors import live_queue_servers

PAGE_SIZE = 50
EXAMPLES = 5            # example urls per reason on the refused urls' summary
REFUSED_HOSTS = 10      # hosts per reason on the summary (the reason's page: PAGE_SIZE)
HOST_SORTS = ("origin", "requests", "errors")


class BadCursor(ValueError):
    """A paging cursor or sort that does not parse."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a list: ``older``/``newer`` are the cursors of the next pages (None: no
    such page)."""

    rows: list[Any]
    older: str | None
    newer: str | None


def _int_cursor(text: str | None) -> int | None:
    if text in (None, ""):
        return None
    try:
        value = int(str(text))
    except ValueError:
        raise BadCursor(f"not a cursor: {str(text)[:40]!r}") from None
    if value < 0:
        raise BadCursor("a cursor is not negative")
    return value


def _by_id(rows: QuerySet, before: str | None, after: str | None,
           size: int = PAGE_SIZE) -> Page:
    """Newest first by id: the page after ``before`` (older rows) or before ``after``."""
    older_than, newer_than = _int_cursor(before), _int_cursor(after)
    if newer_than is not None:
        got = list(rows.filter(id__gt=newer_than).order_by("id")[:size + 1])
        more_newer = len(got) > size
        page = got[:size][::-1]
        return Page(page, str(page[-1].id) if page else None,
                    str(page[0].id) if page and more_newer else None)
    if older_than is not None:
        rows = rows.filter(id__lt=older_than)
    got = list(rows.order_by("-id")[:size + 1])
    page = got[:size]
    return Page(page, str(page[-1].id) if len(got) > size else None,
                str(page[0].id) if page and older_than is not None else None)


def fetched_page(crawl_id: int, before: str | None = None, after: str | None = None,
                 origin: str | None = None, size: int = PAGE_SIZE) -> Page:
    """The crawl's downloads, newest first (of one host with ``origin``)."""
    rows = FetchedUrl.objects.filter(crawl_id=crawl_id)
    if origin:
        rows = rows.filter(origin=origin)
    return _by_id(rows, before, after, size)


def refused_page(crawl_id: int, reason: str | None, before: str | None = None,
                 after: str | None = None, origin: str | None = None,
                 size: int = PAGE_SIZE) -> Page:
    """Refused urls kept as examples, newest first: of one ``reason`` or one host."""
    rows = RefusedUrl.objects.filter(crawl_id=crawl_id)
    if reason:
        rows = rows.filter(reason=reason)
    if origin:
        rows = rows.filter(origin=origin)
    page = _by_id(rows, before, after, size)
    for row in page.rows:
        row.label = reason_label(row.reason)
    return page


def refused_summary(crawl_id: int) -> list[dict[str, Any]]:
    """Each reason urls were refused for: its label, how many (all queue servers, every
    url, not only the examples kept) and its newest example urls; most refused first."""
    counts = (RefusalCount.objects.filter(crawl_id=crawl_id).values("reason")
              .annotate(total=Sum("count")).order_by("-total", "reason"))
    out = []
    for row in counts:
        examples = list(RefusedUrl.objects.filter(crawl_id=crawl_id, reason=row["reason"])
                        .order_by("-id")[:EXAMPLES])
        hosts, host_count = refused_hosts(crawl_id, row["reason"], REFUSED_HOSTS)
        out.append({"reason": row["reason"], "label": reason_label(row["reason"]),
                    "count": row["total"], "examples": examples, "hosts": hosts,
                    "host_count": host_count})
    return out


def refused_hosts(crawl_id: int, reason: str, limit: int) -> tuple[list[dict[str, Any]], int]:
    """(the ``limit`` hosts with most urls refused for ``reason``, most first, each with its
    count and newest example url; how many hosts have any). Urls counted without their host
    are the row of origin ""."""
    counts = (RefusedHostCount.objects.filter(crawl_id=crawl_id, reason=reason)
              .values("origin").annotate(total=Sum("count")))
    top = list(counts.order_by("-total", "origin")[:limit])
    examples = {origin: url for origin, url in (
        (o, RefusedUrl.objects.filter(crawl_id=crawl_id, reason=reason, origin=o)
         .order_by("-id").values_list("url", flat=True).first())
        for o in (row["origin"] for row in top)) if url}
    rows = [{"origin": row["origin"], "count": row["total"],
             "example": examples.get(row["origin"], "")} for row in top]
    return rows, counts.count()


def queued_get(crawl_id: int) -> dict[str, Any]:
    """What the crawl's live queue servers have queued, from their heartbeats: urls per tier
    (summed and per queue server) and in the other lanes."""
    lanes = ("robots_txt_queued", "waiting_robots", "crawl_delayed", "needy_queued")
    tiers: dict[int, int] = {}
    servers = []
    for q in live_queue_servers():
        counters = crawl_counters(q.counters, crawl_id)
        if counters is None:
            continue
        mine = {int(t): int(n) for t, n in (counters.get("tiers") or {}).items()}
        for tier, count in mine.items():
            tiers[tier] = tiers.get(tier, 0) + count
        servers.append({"server": q.server_id, "tiers": sorted(mine.items()),
                        "queued": int(counters.get("queued", 0) or 0),
                        **{lane: int(counters.get(lane, 0) or 0) for lane in lanes}})
    totals = {lane: sum(s[lane] for s in servers) for lane in lanes}
    return {"tiers": sorted(tiers.items()), "servers": sorted(servers, key=lambda s: s["server"]),
            "lanes": totals, "queued": sum(s["queued"] for s in servers),
            "reporting": bool(servers)}


def _host_cursor(sort: str, text: str | None) -> tuple[int, int] | str | None:
    if text in (None, ""):
        return None
    if sort == "origin":
        return str(text)
    count, _, row_id = str(text).partition(".")
    return (_int_cursor(count) or 0, _int_cursor(row_id) or 0)


def hosts_page(crawl_id: int, sort: str = "origin", after: str | None = None,
               prefix: str = "", size: int = PAGE_SIZE) -> Page:
    """The crawl's hosts by origin, or most requests or errors first; ``prefix`` keeps the
    hosts whose name starts with it. Only forward paging (``older`` is the next page)."""
    if sort not in HOST_SORTS:
        raise BadCursor(f"unknown sort {sort[:20]!r}")
    rows = CrawlHost.objects.filter(crawl_id=crawl_id)
    if prefix:
        rows = rows.filter(Q(origin__startswith="http://" + prefix)
                           | Q(origin__startswith="https://" + prefix))
    cursor = _host_cursor(sort, after)
    if sort == "origin":
        if cursor is not None:
            rows = rows.filter(origin__gt=cursor)
        got = list(rows.order_by("origin")[:size + 1])
        page = got[:size]
        return Page(page, page[-1].origin if len(got) > size else None, None)
    if isinstance(cursor, tuple):
        count, row_id = cursor
        rows = rows.filter(**{f"{sort}__lte": count}).filter(
            Q(**{f"{sort}__lt": count}) | Q(id__lt=row_id))
    got = list(rows.order_by(f"-{sort}", "-id")[:size + 1])
    page = got[:size]
    last = page[-1] if page else None
    return Page(page, f"{getattr(last, sort)}.{last.id}" if last and len(got) > size else None,
                None)


def host_get(crawl_id: int, origin: str) -> dict[str, Any] | None:
    """One host of the crawl: its row, the operator's override, its newest fetched and
    refused urls; None when the crawl has neither a row nor an override for it."""
    row = CrawlHost.objects.filter(crawl_id=crawl_id, origin=origin).first()
    override = HostOverride.objects.filter(crawl_id=crawl_id, origin=origin).first()
    if row is None and override is None:
        return None
    return {"host": row, "override": override, "origin": origin,
            "fetched": fetched_page(crawl_id, origin=origin, size=20).rows,
            "refused": refused_page(crawl_id, None, origin=origin, size=20).rows}
