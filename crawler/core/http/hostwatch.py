"""Which hosts stall a fetcher's rounds (seed 004, points 2 and 4: slow and misbehaving hosts).

Layer: ``crawler.core.http`` (pure Python). The schedule worker
(:class:`crawler.core.fetcher.ScheduleWorker`) keeps one :class:`HostWatch` per schedule and
tells it how each download went; the watch says which hosts have stalled.

A download *stalls* when

* it is still in flight ``slow_seconds`` after its round started (it is *blocked*: the round
  waits for its *active* downloads, those in flight for less, and stops waiting once every
  download left is blocked), or
* it ends with a read timeout, a connect timeout or the page deadline, or
* it takes ``slow_seconds`` or more (each host's response times are watched).

A host with a stall is backed off for the rest of the schedule: its remaining urls are handed
back to the queue server (deferred) instead of holding up later rounds. The queue server counts
each host's stalls over the crawl and drops a host that keeps stalling.
"""

from __future__ import annotations

from dataclasses import dataclass

from crawler.core.http.result import FetchResult

STALL_ERRORS = frozenset({"deadline", "read_timeout", "connect_timeout"})


@dataclass(slots=True)
class HostTimes:
    """Downloads of one host in one schedule."""

    pages: int = 0
    seconds: float = 0.0
    stalls: int = 0

    @property
    def mean_seconds(self) -> float:
        return self.seconds / self.pages if self.pages else 0.0


class HostWatch:
    """Response times and stalls per host (``scheme://host[:port]``) in one schedule.

    Not thread-safe: the schedule worker's main thread records everything."""

    def __init__(self, slow_seconds: float) -> None:
        if not slow_seconds > 0:
            raise ValueError(f"slow_seconds must be positive, got {slow_seconds!r}")
        self.slow_seconds = float(slow_seconds)
        self._hosts: dict[str, HostTimes] = {}

    def _times(self, origin: str) -> HostTimes:
        times = self._hosts.get(origin)
        if times is None:
            times = self._hosts[origin] = HostTimes()
        return times

    def is_stall(self, result: FetchResult) -> bool:
        """Did this finished download stall (a timeout, the deadline, or too slow)?"""
        return ((result.error is not None and result.error.kind in STALL_ERRORS)
                or result.elapsed >= self.slow_seconds)

    def record(self, origin: str, result: FetchResult, *, blocked: bool = False) -> bool:
        """A finished download of ``origin``; True when it stalled. ``blocked``: it was
        already counted by :meth:`record_blocked` (its stall is not counted again)."""
        times = self._times(origin)
        times.pages += 1
        times.seconds += max(0.0, result.elapsed)
        stalled = blocked or self.is_stall(result)
        if stalled and not blocked:
            times.stalls += 1
        return stalled

    def record_blocked(self, origin: str) -> None:
        """A download of ``origin`` still in flight at the slow threshold: a stall (its
        result, if it comes in this schedule, is recorded with ``blocked=True``)."""
        self._times(origin).stalls += 1

    def stalled(self, origin: str) -> bool:
        times = self._hosts.get(origin)
        return times is not None and times.stalls > 0

    def times(self, origin: str) -> HostTimes:
        """A copy of what is known of ``origin`` (zeros when nothing is)."""
        times = self._hosts.get(origin) or HostTimes()
        return HostTimes(times.pages, times.seconds, times.stalls)

    def stalls(self) -> dict[str, int]:
        """Hosts that stalled in this schedule -> their stalls."""
        return {origin: t.stalls for origin, t in self._hosts.items() if t.stalls}
