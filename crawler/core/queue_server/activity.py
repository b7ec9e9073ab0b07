"""What a queue server did with each url and host of its crawl, gathered batch by batch for the
admin's url and host pages.

Layer: ``crawler.core`` (plain Python). :class:`~crawler.core.queue_server.server.QueueServerCore`
feeds an :class:`ActivityLog` while it applies fetchers' batches: the batch's fetch log (one
row per download), the urls the fetcher refused (egress allow-list, noindex), the robots.txt
answers, and the urls its crawl queue refused (robots.txt, depth, site rules, policy, an
excluded host: ``crawler.core.scheduler.machine``). The glue takes it all at once
(:meth:`ActivityLog.take`, an :class:`Activity`) after each round of batches and writes it to
the database in bulk (``crawler.hosts.activity``); the admin reads only the database, so it
works for queue servers on other machines.

Refusal reasons are short codes (:data:`REASONS` gives their labels). A failed download is
both a fetched row (with its error's kind) and a ``fetch_error`` refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from crawler.core.urls import origin_of

REASONS = {
    "robots": "robots.txt disallows it",
    "egress": "egress allow-list refused the host's addresses",
    "site_rules": "site rules of the crawl (a disallowed site)",
    "outside_seeds": "outside the seed and allowed sites",
    "distrust": "crawl policy (distrusted, too far from its seed)",
    "depth": "past the crawl's depth limit",
    "noindex": "robots meta tag or header: noindex",
    "fetch_error": "fetch error",
    "excluded": "host excluded by the operator",
    "host_dropped": "host dropped (it stalled too often)",
    "invalid": "not a url the crawler can fetch",
}
ROBOTS_TEXT_KEPT = 32 * 1024  # characters of a robots.txt kept for the host page
MAX_FETCHED_ROWS = 50_000     # fetched rows kept between two takes (older ones are dropped)
MAX_REFUSED_ROWS = 2_000      # refused rows kept per reason between two takes
MAX_REFUSED_HOSTS = 5_000     # (reason, host) counts kept between two takes (then: no host)


def reason_label(reason: str) -> str:
    return REASONS.get(reason, reason.replace("_", " "))


@dataclass(frozen=True, slots=True)
class FetchedRow:
    url: str
    origin: str
    status: int       # 0: no HTTP answer
    size: int         # bytes downloaded
    at: float         # Unix time
    error: str        # the fetch error's kind, "" when none


@dataclass(frozen=True, slots=True)
class RefusedRow:
    url: str
    origin: str
    reason: str
    detail: str


@dataclass(slots=True)
class HostDelta:
    """One host's activity since the last take (counts to add, the latest values)."""

    requests: int = 0
    errors: int = 0
    size: int = 0
    refused: int = 0
    last_fetch: float | None = None
    last_status: int | None = None
    robots: tuple[int, str | None, str] | None = None  # (status, text, error) when read
    # (delay honoured, robots.txt read, excluded), filled in at the take
    politeness: tuple[float, bool, bool] | None = None


@dataclass(frozen=True, slots=True)
class Activity:
    """What :meth:`ActivityLog.take` hands the glue: rows to insert, and per-host deltas and
    per-reason counts to add."""

    fetched: tuple[FetchedRow, ...]
    refused: tuple[RefusedRow, ...]
    hosts: dict[str, HostDelta]
    refusals: dict[str, int]   # reason -> urls refused (all of them, kept or not)
    # (reason, origin) -> urls of that host refused for that reason ("" origin: past
    # MAX_REFUSED_HOSTS distinct pairs in one take, or not a url)
    host_refusals: dict[tuple[str, str], int] = field(default_factory=dict)


def is_error(status: int, error: str) -> bool:
    """A download that failed: no answer, or an HTTP error other than 404 (the fetcher's
    own rule for its error counters)."""
    return bool(error) or (status >= 400 and status != 404)


@dataclass(slots=True)
class ActivityLog:
    """The activity of one queue server since the last :meth:`take`. Not thread-safe."""

    fetched: list[FetchedRow] = field(default_factory=list)
    refused: list[RefusedRow] = field(default_factory=list)
    hosts: dict[str, HostDelta] = field(default_factory=dict)
    refusals: dict[str, int] = field(default_factory=dict)
    host_refusals: dict[tuple[str, str], int] = field(default_factory=dict)
    _kept: dict[str, int] = field(default_factory=dict)  # refused rows kept per reason

    def _host(self, origin: str) -> HostDelta:
        delta = self.hosts.get(origin)
        if delta is None:
            delta = self.hosts[origin] = HostDelta()
        return delta

    def add_log(self, rows: Iterable[Any]) -> None:
        """A batch's fetch log (``FetcherBatch.log``); malformed rows are skipped."""
        for row in rows:
            try:
                url, status, size, at, error = (str(row[0]), int(row[1]), int(row[2]),
                                                float(row[3]), str(row[4] or ""))
                origin = origin_of(url)
            except (TypeError, ValueError, IndexError):
                continue
            if len(self.fetched) < MAX_FETCHED_ROWS:
                self.fetched.append(FetchedRow(url, origin, status, size, at, error[:40]))
            delta = self._host(origin)
            delta.requests += 1
            delta.size += max(0, size)
            if delta.last_fetch is None or at >= delta.last_fetch:
                delta.last_fetch, delta.last_status = at, status
            if is_error(status, error):
                delta.errors += 1
                if error != "egress_refused":  # the fetcher's own egress row says it
                    self.refuse("fetch_error", url, error or f"HTTP {status}")

    def refuse(self, reason: str, url: str, detail: str = "") -> None:
        """One refused url; counted always, kept as an example while there is room."""
        try:
            origin = origin_of(url)
        except ValueError:
            origin = ""
        reason = str(reason)[:20]
        self.refusals[reason] = self.refusals.get(reason, 0) + 1
        if origin:
            self._host(origin).refused += 1
        key = (reason, origin)
        if key not in self.host_refusals and len(self.host_refusals) >= MAX_REFUSED_HOSTS:
            key = (reason, "")
        self.host_refusals[key] = self.host_refusals.get(key, 0) + 1
        kept = self._kept.get(reason, 0)
        if kept < MAX_REFUSED_ROWS:
            self._kept[reason] = kept + 1
            self.refused.append(RefusedRow(url[:2000], origin, reason, str(detail)[:200]))

    def add_refused(self, rows: Iterable[Any]) -> None:
        """A batch's refused rows (``FetcherBatch.refused``); malformed rows are skipped."""
        for row in rows:
            try:
                self.refuse(str(row[1]), str(row[0]), str(row[2] if len(row) > 2 else ""))
            except (TypeError, IndexError):
                continue

    def robots(self, origin: str, status: int, body: str | None, error: str | None,
               message: str | None) -> None:
        """A robots.txt answer as the queue server read it."""
        text = None if body is None else str(body)[:ROBOTS_TEXT_KEPT]
        failure = ""
        if error:
            failure = f"{error}: {message or ''}".strip()
        elif status >= 400 and status != 404:
            failure = f"HTTP {status}"
        self._host(origin).robots = (int(status), text, failure[:300])

    def take(self, politeness: Callable[[str], tuple[float, bool, bool] | None]
             ) -> Activity | None:
        """Everything since the last take (None when nothing happened), each host with its
        politeness now (``politeness(origin)``: see ``CrawlQueue.host_politeness``)."""
        if not (self.fetched or self.refused or self.hosts or self.refusals):
            return None
        for origin, delta in self.hosts.items():
            delta.politeness = politeness(origin)
        taken = Activity(tuple(self.fetched), tuple(self.refused), self.hosts,
                         self.refusals, self.host_refusals)
        self.fetched, self.refused, self.hosts, self.refusals = [], [], {}, {}
        self.host_refusals = {}
        self._kept = {}
        return taken


def host_state(delay: float, robots_read: bool, excluded: bool, dropped: str | None) -> str:
    """A host's state in words, for the admin."""
    if excluded:
        return "excluded by the operator"
    if dropped:
        return f"dropped: {dropped}"
    if not robots_read:
        return "waiting for robots.txt"
    if delay > 0:
        return f"crawl-delayed ({delay:g} s between requests)"
    return "crawling"
