"""A queue server's hosts: downloads that stalled, hosts dropped for the rest of the crawl, the
operator's overrides, and when a crawl-delayed host was last asked for a page.

Layer: ``crawler.core.queue_server``. The fetchers report a schedule's stalled downloads by host
(``FetcherBatch.stalls``, see ``crawler.core.http.hostwatch``); a host that stalled
``stall_drop_threshold`` schedules is dropped: the urls found on it are no longer queued, and
the fetchers leave it out of the schedules already queued (:meth:`HostBook.skip_hosts`). The
operator's overrides (a minimum delay, an exclusion) go to the queue source; excluded hosts are
left out the same way. The tallies that outlive a restart (errors, stalls and drops by host)
are the queue server's :class:`~crawler.core.queue_server.state.QueueServerState`, handed to
each call; what this keeps itself is rebuilt after a restart (the operator's exclusions come
again with the next overrides, and a delayed host's last request is taken to be now).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from crawler.core.queue_server.activity import ActivityLog
from crawler.core.queue_server.source import QueueSource
from crawler.core.queue_server.state import QueueServerState
from crawler.core.scheduler import DiscoveredUrl, Schedule
from crawler.core.urls import origin_of

logger = logging.getLogger(__name__)


class HostBook:
    """Stalls, drops, exclusions and delayed hosts' last requests (see the module)."""

    def __init__(self, server: int, stall_drop_threshold: int) -> None:
        self.server = server
        self.stall_drop_threshold = stall_drop_threshold
        self.excluded_hosts: set[str] = set()  # origins the operator excluded
        # origin -> when the last schedule holding it was acknowledged: a crawl-delayed host's
        # last request was no later, so its next schedule waits from there.
        self._delayed_last: dict[str, float] = {}

    def record_stalls(self, state: QueueServerState, origin: str, count: int,
                      counts: bool = True) -> None:
        """A fetcher's schedule saw ``count`` stalled downloads of ``origin`` (fetchers report
        a schedule's stalls once, at its end): they show among the error hosts, and a host
        that stalled ``stall_drop_threshold`` schedules (``counts``: none of its downloads in
        the schedule came in time) is dropped for the rest of the crawl."""
        if count <= 0:
            return
        state.error_hosts[origin] = state.error_hosts.get(origin, 0) + count
        if not counts:
            return
        stalled = state.host_stalls.get(origin, 0) + 1
        state.host_stalls[origin] = stalled
        if stalled >= self.stall_drop_threshold and origin not in state.dropped_hosts:
            state.dropped_hosts[origin] = f"stalled {stalled} schedules"
            logger.warning("queue server %d: host %s dropped for this crawl: it stalled %d "
                           "schedules", self.server, origin, stalled)

    @staticmethod
    def record_errors(state: QueueServerState, origin: str, count: int) -> None:
        """A schedule's fetch errors on one host, for the error hosts of the dashboard."""
        state.error_hosts[origin] = state.error_hosts.get(origin, 0) + count

    @staticmethod
    def without_dropped(state: QueueServerState, discovered: list[DiscoveredUrl],
                        deferred: list[Any], activity: ActivityLog
                        ) -> tuple[list[DiscoveredUrl], list[Any]]:
        """``discovered`` and ``deferred`` (wire rows, url first) less the urls of dropped
        hosts, which are counted (``dropped_host_urls``) and, the discovered ones, shown as
        refused."""
        dropped = state.dropped_hosts
        if not dropped:
            return discovered, deferred
        for d in discovered:
            if origin_of(d.url) in dropped:
                activity.refuse("host_dropped", d.url)
        kept = [d for d in discovered if origin_of(d.url) not in dropped]
        kept_deferred = [d for d in deferred if origin_of(d[0]) not in dropped]
        state.counters["dropped_host_urls"] += (len(discovered) - len(kept)
                                                + len(deferred) - len(kept_deferred))
        return kept, kept_deferred

    def skip_hosts(self, state: QueueServerState, schedule: Schedule) -> list[str]:
        """The dropped and excluded hosts among ``schedule``'s urls (the fetcher leaves them
        out)."""
        if not state.dropped_hosts and not self.excluded_hosts:
            return []
        return sorted({origin_of(e.url) for e in schedule.entries}
                      & (state.dropped_hosts.keys() | self.excluded_hosts))

    def apply_overrides(self, overrides: Iterable[tuple[str, float, bool]],
                        owns: Callable[[str], bool], queue: QueueSource) -> list[str]:
        """The operator's overrides ``(origin, minimum delay, excluded)``: those of hosts
        ``owns`` says are this queue server's go to ``queue``; they replace the exclusions.
        Returns the origins applied."""
        applied, excluded = [], set()
        for origin, min_delay, is_excluded in overrides:
            if not owns(origin):
                continue
            queue.set_host_override(origin, min_delay, is_excluded)
            applied.append(origin)
            if is_excluded:
                excluded.add(origin_of(origin))
        self.excluded_hosts = excluded
        return applied

    def acknowledged(self, schedule_id: str, outstanding: Iterable[Schedule],
                     now: float) -> None:
        """The schedule ``schedule_id`` (among ``outstanding``) is done at ``now``: its
        crawl-delayed hosts were last asked no later."""
        for schedule in outstanding:
            if schedule.id == schedule_id:
                for entry in schedule.entries:
                    if entry.crawl_delay > 0:
                        self._delayed_last[origin_of(entry.url)] = now

    def released(self, origins: Iterable[str], now: float) -> None:
        """A fetcher is done with these crawl-delayed hosts at ``now`` (before its schedule
        ends): they were last asked no later."""
        for origin in origins:
            self._delayed_last[origin_of(origin)] = now

    def last_requests(self, schedule: Schedule, now: float) -> dict[str, float]:
        """For the schedule's crawl-delayed hosts, the latest time their previous requests
        could have been made (unknown after a restart: ``now``, to be safe)."""
        return {origin_of(e.url): self._delayed_last.get(origin_of(e.url), now)
                for e in schedule.entries if e.crawl_delay > 0}
