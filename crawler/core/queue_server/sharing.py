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

*Hosts.* A crawl keeps a crawl-delayed host in one outstanding schedule at a time, so alone it
never asks the host faster than its delay; several crawls each schedule the host on their
own, and their fetchers take turns for it through request slots shared by every fetcher
(``crawler.core.http.paced.HostPacer``, in Redis: ``crawler.machines.host_pacing``). Hosts
without a Crawl-delay are paced by each fetcher process's per-host concurrency, as within one
crawl.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from crawler.core.scheduler import Schedule


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
