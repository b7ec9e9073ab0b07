"""Several crawls on one queue server (issue 37; Yioop's channels): how they share its fetchers
and the hosts they both crawl.

Layer: ``crawler.core.queue_server`` (pure Python). The queue-server process
(``crawler.machines.queue_server``) holds one :class:`~crawler.core.queue_server.server.
QueueServerCore` per active crawl, each with its own queue, seen-url filter, host politeness
and index; with more than one open it hands out their schedules with :func:`take_fairly` and
paces the hosts they share with :class:`SharedHosts`. With one crawl open neither is used: the
crawl takes its schedules as it always did.

*Fetchers.* The fetchers take schedules from one broker queue in the order they were sent, so
sharing them fairly is sharing the queue server's ``max_outstanding`` schedules: the crawls
take turns, one new schedule each per turn, starting each tick with the next crawl in
rotation, until the outstanding schedules of all of them reach the limit. A crawl with nothing
to hand out leaves its turns to the others (the fetchers never idle while any crawl has work).

*Hosts.* A crawl paces a crawl-delayed host itself: its queue puts the host in one outstanding
schedule at a time, and the schedule's message says when the host was last asked
(:meth:`QueueServerCore.last_requests`), from which the fetcher waits the delay. Two crawls
know nothing of each other's requests, so :class:`SharedHosts` keeps, per host, the latest
moment a request of another crawl's schedule may be made (its urls of the host, one delay
apart, after that crawl's own last request), and a schedule's ``last`` for the host is never
before it: the crawls' requests to the host stay a delay apart. Hosts without a Crawl-delay
are paced by each fetcher process's per-host concurrency, as within one crawl.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from crawler.core.scheduler import Schedule
from crawler.core.urls import origin_of


class ScheduleSource(Protocol):
    """What :func:`take_fairly` needs of a crawl's queue server (``QueueServerCore``)."""

    def schedules_out(self) -> int: ...

    def take_schedules(self, requester: str | None = None,
                       max_outstanding: int | None = None) -> list[Schedule]: ...


def take_fairly(sources: Sequence[ScheduleSource], max_outstanding: int,
                start: int = 0) -> list[tuple[int, Schedule]]:
    """New schedules of several crawls, as ``(index in sources, schedule)`` in the order to
    send them: in turns from ``sources[start]`` on, one new schedule per crawl and turn, while
    their outstanding schedules together are fewer than ``max_outstanding``. Every crawl is
    asked once even at the limit: its timed-out schedules go out again and its freed
    crawl-delayed hosts get their own schedules (``QueueServerCore.take_schedules``)."""
    count = len(sources)
    if count == 0:
        return []
    order = [(start + k) % count for k in range(count)]
    out: list[tuple[int, Schedule]] = []
    seen: set[str] = set()
    turn = order
    first = True
    while turn:
        still: list[int] = []
        for index in turn:
            source = sources[index]
            room = max_outstanding - sum(s.schedules_out() for s in sources)
            if room <= 0 and not first:
                return out
            own = source.schedules_out()
            got = [s for s in source.take_schedules(
                max_outstanding=own + (1 if room > 0 else 0)) if s.id not in seen]
            for schedule in got:
                seen.add(schedule.id)
                out.append((index, schedule))
            if got and source.schedules_out() > own:
                still.append(index)
        first = False
        turn = still
    return out


class SharedHosts:
    """The crawl-delayed hosts several crawls of one queue server share (see the module): per
    origin, the crawl whose schedule asks it last and the latest moment that schedule may
    make its last request."""

    def __init__(self) -> None:
        self._until: dict[str, tuple[int, float]] = {}

    def last_requests(self, crawl_id: int, schedule: Schedule, own: Mapping[str, float],
                      now: float) -> dict[str, float]:
        """``own`` (origin -> the crawl's own last request of each crawl-delayed host in the
        schedule, ``QueueServerCore.last_requests``), each moved to the latest request another
        crawl's schedule may make; and this schedule's own requests of those hosts are
        reserved, to be waited for by the other crawls' next schedules."""
        out = dict(own)
        delays: dict[str, float] = {}
        counts: dict[str, int] = {}
        for entry in schedule.entries:
            if entry.crawl_delay > 0 and not entry.is_robots:
                origin = origin_of(entry.url)
                delays[origin] = max(delays.get(origin, 0.0), entry.crawl_delay)
                counts[origin] = counts.get(origin, 0) + 1
        for origin in out:
            held = self._until.get(origin)
            if held is not None and held[0] != crawl_id and held[1] > out[origin]:
                out[origin] = held[1]
        for origin, delay in delays.items():
            first = max(out.get(origin, now) + delay, now)
            until = first + (counts[origin] - 1) * delay
            held = self._until.get(origin)
            if held is None or until >= held[1]:
                self._until[origin] = (crawl_id, until)
        return out

    def forget_before(self, now: float) -> None:
        """Drop the reservations whose last request is past (they hold nobody back)."""
        self._until = {o: held for o, held in self._until.items() if held[1] > now}
