"""Crawl-delay lanes: a schedule's crawl-delayed urls, one serial lane per host name.

Layer: ``crawler.core.fetcher``. As the seed (*Yioop Search Engine Ranking Mechanisms*) describes it,
a crawl-delayed host's urls are not in the rounds: each such host has a *lane* that requests its
urls one at a time, each (and each redirect hop: :class:`crawler.core.http.paced.PacedFetch`)
once the host's delay since its previous request has passed, beside the rounds and for the
whole schedule. When the rounds are done the worker waits for the lanes a bounded time
(:data:`LANE_GRACE_SECONDS`, or twice the longest delay if that is longer); urls whose request
has not started by then go back to the queue server (deferred), except a lane's first url,
which is always fetched (a schedule of delayed urls only still makes progress). The queue
server gives a delayed host to one outstanding schedule at a time, so the lane's pacing holds
across fetchers; once a lane has fetched all its urls and the worker has sent their pages
(:meth:`DelayLanes.finished_origins`), the worker tells the queue server, which frees the host
for the next schedule without waiting for the rest of this one.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from crawler.core.definition.siterules import SiteRules
from crawler.core.fetcher.stats import ScheduleStats
from crawler.core.http import FetchResult
from crawler.core.scheduler import Schedule, ScheduleEntry
from crawler.core.urls import origin_of
from indexer.core.urls import host_of

# crawl-delayed hosts of a schedule requested at the same time (waiting for a delay takes none)
LANE_THREADS = 8
# after its rounds, a schedule waits this long (or twice the longest delay) for its lanes
LANE_GRACE_SECONDS = 3.0


@dataclass(slots=True)
class _Lane:
    """The urls of one crawl-delayed host name in one schedule, requested in order."""

    queue: deque[ScheduleEntry] = field(default_factory=deque)
    state: str = "idle"     # "armed": waiting for the host's delay; "fetching"; "idle"
    started: int = 0        # urls taken for fetching: from then on they are fetched, not deferred
    stopped: bool = False   # its host stalled: the rest went back to the queue server
    origins: set[str] = field(default_factory=set)  # of its urls (one host name, any scheme)
    released: bool = False  # reported finished (:meth:`DelayLanes.finished_origins`)


class DelayLanes:
    """One serial lane per crawl-delayed host name of a schedule (see the module docstring).

    A lane takes its host's urls in order. For each it waits until ``crawl_delay`` has passed
    since the host's last request (``last_request``: host name -> time, which ``fetch``
    updates after every request to the host, redirect hops included), then takes the url (from
    then on it is fetched, never handed back) and fetches it with ``fetch`` in one of
    ``threads`` threads; only then does it arm for its next url. Waiting costs no thread: one
    dispatcher thread starts each lane's next url when it is due. Results wait in
    :meth:`take_results` for the schedule's main thread; :meth:`stop` and :meth:`cancel` hand
    back urls not taken yet. Thread-safe."""

    def __init__(self, fetch: Callable[[ScheduleEntry], FetchResult],
                 last_request: dict[str, float], clock: Callable[[], float],
                 threads: int) -> None:
        self._fetch = fetch
        self._last = last_request
        self._clock = clock
        self._cond = threading.Condition()
        self._lanes: dict[str, _Lane] = {}
        self._due: list[tuple[float, int, str]] = []   # heap: (ready at, seq, host)
        self._seq = 0
        self._results: list[tuple[ScheduleEntry, FetchResult]] = []
        self._failures: list[BaseException] = []
        self._cancelled = False
        self._keep_first = True
        self._closing = False
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="lane")
        self._dispatcher = threading.Thread(target=self._dispatch, name="lanes", daemon=True)
        self._dispatcher.start()

    def add(self, entry: ScheduleEntry) -> None:
        host = host_of(entry.url)
        with self._cond:
            if self._cancelled:
                raise RuntimeError("lanes already cancelled")
            lane = self._lanes.get(host)
            if lane is None:
                lane = self._lanes[host] = _Lane()
            lane.queue.append(entry)
            lane.origins.add(origin_of(entry.url))
            if lane.state == "idle":
                self._arm(host, lane)

    def _wanted(self, lane: _Lane) -> bool:
        """May the lane take its next url? (Under the lock.)"""
        protected = self._keep_first and lane.started == 0
        return bool(lane.queue) and not lane.stopped and (protected or not self._cancelled)

    def _arm(self, host: str, lane: _Lane) -> None:
        """(Under the lock.) Wait for the host's delay before the lane's next url, if any."""
        if not self._wanted(lane):
            lane.state = "idle"
        else:
            lane.state = "armed"
            self._seq += 1
            heapq.heappush(self._due, (self._ready_at(host, lane), self._seq, host))
        self._cond.notify_all()

    def _ready_at(self, host: str, lane: _Lane) -> float:
        """(Under the lock.) When the lane's next url may be requested."""
        last = self._last.get(host)
        return -math.inf if last is None else last + lane.queue[0].crawl_delay

    def _dispatch(self) -> None:
        with self._cond:
            while not self._closing:
                now = self._clock()
                while self._due and self._due[0][0] <= now:
                    _, _, host = heapq.heappop(self._due)
                    lane = self._lanes[host]
                    if lane.state != "armed":
                        continue  # stale: the lane was disarmed
                    if not self._wanted(lane):
                        lane.state = "idle"
                        self._cond.notify_all()
                        continue
                    ready = self._ready_at(host, lane)
                    if ready > now:  # (politeness never rests on the heap being right)
                        heapq.heappush(self._due, (ready, self._seq, host))
                        continue
                    entry = lane.queue.popleft()
                    lane.started += 1
                    lane.state = "fetching"
                    self._pool.submit(self._fetch_one, host, lane, entry)
                pause = self._due[0][0] - now if self._due else 0.5
                self._cond.wait(min(max(pause, 0.001), 0.5))

    def _fetch_one(self, host: str, lane: _Lane, entry: ScheduleEntry) -> None:
        try:
            result = self._fetch(entry)
        except BaseException as exc:  # a bug: surfaces in the main thread
            with self._cond:
                self._failures.append(exc)
                lane.state = "idle"
                self._cond.notify_all()
            return
        with self._cond:
            self._results.append((entry, result))
            self._arm(host, lane)

    def take_results(self) -> list[tuple[ScheduleEntry, FetchResult]]:
        with self._cond:
            if self._failures:
                raise self._failures[0]
            out, self._results = self._results, []
            return out

    def busy(self) -> bool:
        """Any url not fetched yet, or any result not taken?"""
        with self._cond:
            return bool(self._results) or any(lane.state != "idle" or lane.queue
                                              for lane in self._lanes.values())

    def finished_origins(self, unsent: Collection[str]) -> list[str]:
        """The origins of the lanes that have fetched every url they were given and whose
        results were all taken, except the host names in ``unsent`` (results taken but not
        sent yet), stopped lanes (their host stalled: the schedule's end reports it) and
        every lane once cancelled; each lane is reported once, in host-name order."""
        with self._cond:
            if self._cancelled:
                return []
            pending = set(unsent) | {host_of(entry.url) for entry, _ in self._results}
            out: list[str] = []
            for host in sorted(self._lanes):
                lane = self._lanes[host]
                if lane.released or lane.stopped or lane.queue or lane.state != "idle" \
                        or host in pending:
                    continue
                lane.released = True
                out.extend(sorted(lane.origins))
            return out

    def longest_delay(self) -> float:
        """The longest delay among the hosts that still have urls to fetch."""
        with self._cond:
            return max((entry.crawl_delay for lane in self._lanes.values()
                        for entry in lane.queue), default=0.0)

    def wait(self, timeout: float) -> None:
        """Until a result comes in or a lane ends (at most ``timeout`` seconds)."""
        with self._cond:
            if not self._results and not self._failures:
                self._cond.wait(timeout)

    def _disarm(self, lane: _Lane) -> None:
        if lane.state == "armed" and not self._wanted(lane):
            lane.state = "idle"  # its entry in the heap is now stale

    def stop(self, host: str) -> list[ScheduleEntry]:
        """Hand back the urls of ``host`` not taken yet; the lane takes no more."""
        with self._cond:
            lane = self._lanes.get(host)
            if lane is None:
                return []
            lane.stopped = True
            out = list(lane.queue)
            lane.queue.clear()
            self._disarm(lane)
            self._cond.notify_all()
            return out

    def cancel(self, keep_first: bool) -> list[ScheduleEntry]:
        """Hand back every url not taken yet, except (``keep_first``) the first url of a lane
        that has not taken one yet; the lanes take no more (urls taken are still fetched)."""
        with self._cond:
            self._cancelled = True
            self._keep_first = keep_first
            out: list[ScheduleEntry] = []
            for lane in self._lanes.values():
                keep = 1 if keep_first and lane.started == 0 and lane.queue else 0
                kept = [lane.queue.popleft() for _ in range(keep)]
                out.extend(lane.queue)
                lane.queue.clear()
                lane.queue.extend(kept)
                self._disarm(lane)
            self._cond.notify_all()
            return out

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._dispatcher.join()
        self._pool.shutdown(wait=True)


def split_schedule(schedule: Schedule, skip: frozenset[str], stats: ScheduleStats,
                   rules: SiteRules | None = None
                   ) -> tuple[list[list[ScheduleEntry]], list[ScheduleEntry]]:
    """The schedule's rounds without their crawl-delayed urls, and those urls (for the
    lanes). Delayed urls of the hosts in ``skip`` (origins the queue server dropped) are
    left out and counted in ``stats.skipped``, and so is every url but a robots.txt that the
    crawl's site ``rules`` as they are now refuse (rules edited while the crawl runs: the
    url was queued under the old ones)."""
    check = rules is not None and (bool(rules.disallowed) or rules.restrict)
    plain_rounds: list[list[ScheduleEntry]] = []
    delayed: list[ScheduleEntry] = []
    for round_entries in schedule.rounds():
        plain = []
        for entry in round_entries:
            if check and not entry.is_robots and rules.refusal(entry.url):  # type: ignore[union-attr]
                stats.skipped += 1
            elif entry.crawl_delay <= 0 or entry.is_robots:
                plain.append(entry)
            elif origin_of(entry.url) in skip:
                stats.skipped += 1
            else:
                delayed.append(entry)
        plain_rounds.append(plain)
    return plain_rounds, delayed
