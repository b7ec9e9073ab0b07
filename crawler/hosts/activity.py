"""The queue server's side of the admin's url and host pages: it writes what happened to urls
and hosts (``crawler.core.queue_server.activity``) to the database in bulk, trims the logs to their
retention, and applies the operator's host overrides.

Layer: Django glue, called by ``crawler.machines.queue_server`` (:class:`HostActivityPump`, once per
tick of an open crawl). One round of applied batches becomes one transaction: one bulk insert
of fetched urls, one of refused urls, the refusal counts and the touched hosts' rows upserted
(a host belongs to one queue server, so its row has one writer). The log is for people: a
database error is logged and the round's rows are dropped, the crawl goes on; so are rows of a
round taken just before a kill -9.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from datetime import UTC, datetime

from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from crawler.core.queue_server.activity import Activity, HostDelta, host_state
from crawler.core.queue_server.server import QueueServerCore
from crawler.models import (
    CrawlHost,
    FetchedUrl,
    HostOverride,
    RefusalCount,
    RefusedHostCount,
    RefusedUrl,
)

logger = logging.getLogger(__name__)

CHUNK = 500  # rows per IN (...) list: SQLite's variable limit
HOST_FIELDS = ["server", "requests", "errors", "size", "refused", "last_fetch", "last_status",
               "robots_status", "robots_text", "robots_error", "delay", "state", "updated_at"]


def _when(at: float | None) -> datetime | None:
    return None if at is None else datetime.fromtimestamp(at, tz=UTC)


def activity_write(crawl_id: int, server: int, activity: Activity,
                   dropped: dict[str, str] | None = None) -> None:
    """Write one round's activity of queue server ``server`` (see the module docstring);
    ``dropped``: the hosts it dropped, and why (their state)."""
    now = timezone.now()
    with transaction.atomic():
        FetchedUrl.objects.bulk_create(
            [FetchedUrl(crawl_id=crawl_id, url=r.url, origin=r.origin[:300], status=r.status,
                        size=max(0, r.size), fetched_at=_when(r.at), error=r.error)
             for r in activity.fetched], batch_size=1000)
        RefusedUrl.objects.bulk_create(
            [RefusedUrl(crawl_id=crawl_id, url=r.url, origin=r.origin[:300], reason=r.reason,
                        detail=r.detail, refused_at=now) for r in activity.refused],
            batch_size=1000)
        _add_refusals(crawl_id, server, activity.refusals)
        _add_host_refusals(crawl_id, server, activity.host_refusals)
        _upsert_hosts(crawl_id, server, activity.hosts, dropped or {}, now)


def _add_refusals(crawl_id: int, server: int, counts: dict[str, int]) -> None:
    if not counts:
        return
    held = {row.reason: row for row in RefusalCount.objects.filter(
        crawl_id=crawl_id, server=server, reason__in=list(counts))}
    rows = []
    for reason, count in counts.items():
        row = held.get(reason) or RefusalCount(crawl_id=crawl_id, server=server,
                                               reason=reason, count=0)
        row.count += count
        rows.append(row)
    RefusalCount.objects.bulk_create(rows, update_conflicts=True,
                                     unique_fields=["crawl", "server", "reason"],
                                     update_fields=["count"])


def _add_host_refusals(crawl_id: int, server: int,
                       counts: dict[tuple[str, str], int]) -> None:
    """Add the take's per (reason, host) refusal counts to the crawl's rows of ``server``."""
    counts = {(reason[:20], origin[:300]): n for (reason, origin), n in counts.items()}
    if not counts:
        return
    held = {(row.reason, row.origin): row for row in RefusedHostCount.objects.filter(
        crawl_id=crawl_id, server=server, reason__in={r for r, _ in counts},
        origin__in={o for _, o in counts})}
    rows = []
    for (reason, origin), count in counts.items():
        row = held.get((reason, origin)) or RefusedHostCount(
            crawl_id=crawl_id, server=server, reason=reason, origin=origin, count=0)
        row.count += count
        rows.append(row)
    RefusedHostCount.objects.bulk_create(rows, batch_size=1000, update_conflicts=True,
                                         unique_fields=["crawl", "server", "reason", "origin"],
                                         update_fields=["count"])


def _upsert_hosts(crawl_id: int, server: int, deltas: dict[str, HostDelta],
                  dropped: dict[str, str], now: datetime) -> None:
    origins = [o for o in deltas if o and len(o) <= 300]
    rows = []
    for start in range(0, len(origins), CHUNK):
        part = origins[start:start + CHUNK]
        held = {h.origin: h for h in CrawlHost.objects.filter(crawl_id=crawl_id,
                                                              origin__in=part)}
        for origin in part:
            row = held.get(origin) or CrawlHost(crawl_id=crawl_id, origin=origin)
            _apply_delta(row, deltas[origin], dropped.get(origin))
            row.server, row.updated_at = server, now
            rows.append(row)
    CrawlHost.objects.bulk_create(rows, batch_size=500, update_conflicts=True,
                                  unique_fields=["crawl", "origin"], update_fields=HOST_FIELDS)


def _apply_delta(row: CrawlHost, delta: HostDelta, dropped: str | None) -> None:
    row.requests += delta.requests
    row.errors += delta.errors
    row.size += delta.size
    row.refused += delta.refused
    if delta.last_fetch is not None:
        row.last_fetch, row.last_status = _when(delta.last_fetch), delta.last_status
    if delta.robots is not None:
        row.robots_status, row.robots_text, row.robots_error = delta.robots
    if delta.politeness is not None:
        delay, robots_read, excluded = delta.politeness
        row.delay = delay
        row.state = host_state(delay, robots_read, excluded, dropped)[:100]
    elif dropped:
        row.state = host_state(0.0, True, False, dropped)[:100]


def activity_trim(crawl_id: int, fetched_keep: int, refused_keep: int) -> int:
    """Delete a crawl's fetched urls beyond the newest ``fetched_keep`` and refused urls
    beyond the newest ``refused_keep`` per reason; returns the rows deleted."""
    deleted = _trim(FetchedUrl.objects.filter(crawl_id=crawl_id), fetched_keep)
    reasons = set(RefusalCount.objects.filter(crawl_id=crawl_id)
                  .values_list("reason", flat=True))
    for reason in sorted(reasons):
        deleted += _trim(RefusedUrl.objects.filter(crawl_id=crawl_id, reason=reason),
                         refused_keep)
    return deleted


def _trim(rows, keep: int) -> int:
    cut = list(rows.order_by("-id").values_list("id", flat=True)[keep:keep + 1])
    if not cut:
        return 0
    return rows.filter(id__lte=cut[0]).delete()[0]


def host_overrides_get(crawl_id: int) -> list[tuple[str, float, bool]]:
    """The operator's overrides of a crawl's hosts: ``(origin, minimum delay, excluded)``."""
    return [(o, float(d), bool(e)) for o, d, e in HostOverride.objects.filter(
        crawl_id=crawl_id).values_list("origin", "min_delay", "excluded")]


def host_overrides_mark_applied(crawl_id: int, origins: Iterable[str]) -> None:
    """Say in the admin that these overrides are in force (those not marked yet, or changed
    since they were)."""
    names = list(origins)
    for start in range(0, len(names), CHUNK):
        HostOverride.objects.filter(crawl_id=crawl_id, origin__in=names[start:start + CHUNK],
                                    applied_at__isnull=True).update(applied_at=timezone.now())


def activity_flush(crawl_id: int, cores: Iterable[QueueServerCore]) -> None:
    """Write what each queue server of a crawl run in one process (``manage.py crawl``,
    :class:`~crawler.core.local_crawl.LocalCrawl`) did since the last flush; a database
    error is logged (see the module docstring)."""
    for core in cores:
        try:
            activity = core.take_activity()
            if activity is not None:
                activity_write(crawl_id, core.config.server, activity, core.dropped_hosts)
        except DatabaseError as exc:
            logger.warning("the url and host log of crawl %s was not written: %s",
                           crawl_id, exc)


class HostActivityPump:
    """Called once per tick while a crawl is open (:meth:`step`): applies the operator's host
    overrides every ``HOST_OVERRIDE_SECONDS``, writes the activity of the batches applied
    since the last step, and trims the crawl's logs every ``HOST_LOG_TRIM_SECONDS``."""

    def __init__(self, server: int) -> None:
        self.server = server
        self._crawl: int | None = None
        self._overrides_read = -float("inf")
        self._trimmed = time.monotonic()

    def step(self, core: QueueServerCore, crawl_id: int) -> None:
        now = time.monotonic()
        if crawl_id != self._crawl:  # a crawl (re)opened: its overrides apply at once
            self._crawl, self._overrides_read = crawl_id, -float("inf")
        try:
            if now - self._overrides_read >= settings.HOST_OVERRIDE_SECONDS:
                self._overrides_read = now
                applied = core.apply_host_overrides(host_overrides_get(crawl_id))
                host_overrides_mark_applied(crawl_id, applied)
            activity = core.take_activity()
            if activity is not None:
                activity_write(crawl_id, self.server, activity, core.dropped_hosts)
            if now - self._trimmed >= settings.HOST_LOG_TRIM_SECONDS:
                self._trimmed = now
                activity_trim(crawl_id, settings.HOST_LOG_FETCHED_KEEP,
                              settings.HOST_LOG_REFUSED_KEEP)
        except DatabaseError as exc:
            logger.warning("queue server %d: the url and host log of crawl %s was not "
                           "written: %s", self.server, crawl_id, exc)
