"""The schedule worker: runs one schedule through the fetcher's parts, and only orchestrates.

Layer: ``crawler.core.fetcher``. The glue (``crawler.machines.fetching``, ``crawler.core.local_crawl``)
builds a :class:`ScheduleWorker` with the crawl's config and two callbacks, ``ship(server,
batch)`` and ``should_continue()``, and calls :meth:`ScheduleWorker.run`:

1. the schedule is split into rounds of plain urls and crawl-delayed urls
   (:func:`.lanes.split_schedule`); the delayed urls go to their hosts' lanes at once
   (:class:`.lanes.DelayLanes`, each fetched by :class:`crawler.core.http.paced.PacedFetch`);
2. the rounds are downloaded and handled (:class:`.rounds.Rounds`), the lanes' results as they
   come in; each download is processed into the outboxes (:class:`.pages.PageHandler`), which
   are shipped as batches (:class:`.outboxes.Outboxes`,
   :class:`crawler.core.transport.batch.FetcherBatch`) every few hundred pages, seconds or
   megabytes;
3. after the rounds the lanes get a bounded grace time (:data:`.lanes.LANE_GRACE_SECONDS`), then
   what they did not start goes back to the queue server;
4. the last batch to the schedule's own queue server carries the schedule's host errors,
   stalls and deferred urls, and ``done``: the schedule is then acknowledged there. A fetcher
   killed before that loses nothing: the queue server hands the schedule out again after its
   timeout.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.fetcher.emit import LinkEmitter, LinkScores
from crawler.core.fetcher.lanes import LANE_GRACE_SECONDS, LANE_THREADS, DelayLanes, split_schedule
from crawler.core.fetcher.outboxes import (
    SEEN_URLS_BEFORE_UPDATE_SCHEDULER,
    SHIP_BYTES,
    SHIP_SECONDS,
    Outboxes,
)
from crawler.core.fetcher.pages import Handling, PageHandler
from crawler.core.fetcher.processing import InlineProcessing, PageProcessing
from crawler.core.fetcher.rounds import Rounds
from crawler.core.fetcher.stats import ScheduleStats
from crawler.core.http import FetchConfig, Fetcher, FetchRequest, FetchResult
from crawler.core.http.hostwatch import HostWatch
from crawler.core.http.paced import (
    HostPacer,
    PacedFetch,
    hop_fetcher_for,
    merge_last_requests,
)
from crawler.core.http.resolver import CachingResolver
from crawler.core.http.round import Download, download_round, unpacked
from crawler.core.memory import release_free_heap
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import Schedule, ScheduleEntry
from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.wire import deferred_to_wire
from crawler.core.urls import origin_of
from indexer.core.text import TextAnalyzer
from indexer.core.urls import host_of

logger = logging.getLogger(__name__)

# robots.txt requests of a schedule's new hosts run beside its rounds, and the schedule's last
# batch waits for all of them: a new host may first cost a slow or failing DNS lookup
ROBOTS_THREADS = 32
SLOW_SHARE_OF_DEADLINE = 1 / 3   # a download this share of the page deadline old is blocked
LANE_POLL_SECONDS = 0.25         # how often the lanes' results are collected after the rounds
# downloads of one schedule processed elsewhere (a ProcessPool) and not yet in the outboxes, at
# most: a few per worker process keeps them all busy, and bounds the bodies held meanwhile
IN_FLIGHT_PAGES = 8

Ship = Callable[[int, FetcherBatch], None]
"""Sends one batch to queue server n (the glue seals it: ``crawler.core.transport.shipping``)."""


@dataclass(frozen=True, slots=True)
class WorkerReport:
    fetched: int
    errors: int
    documents: int
    shipped_batches: int
    stopped_early: bool
    elapsed: float
    deferred: int = 0                         # urls handed back (stalled hosts, lanes)
    stalls: dict[str, int] = field(default_factory=dict)  # origin -> stalled downloads


class ScheduleWorker:
    """Downloads and processes one schedule. Not thread-safe; make one per schedule."""

    def __init__(
        self,
        crawl: CrawlConfig,
        fetch_config: FetchConfig,
        processor: PageProcessor,
        num_servers: int,
        ship: Ship,
        should_continue: Callable[[], bool] = lambda: True,
        *,
        fetcher: Fetcher | None = None,
        hop_fetcher: Fetcher | None = None,
        analyzer: TextAnalyzer | None = None,
        ship_every: int = SEEN_URLS_BEFORE_UPDATE_SCHEDULER,
        ship_seconds: float = SHIP_SECONDS,
        ship_bytes: int = SHIP_BYTES,
        slow_seconds: float | None = None,
        link_scores: LinkScores | None = None,
        processing: PageProcessing | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        host_pacer: HostPacer | None = None,
    ) -> None:
        """``processing``: where pages are processed (default: inline, in this thread, by
        ``processor``; :class:`.processing.ProcessPool` shares the cores between the
        schedules of one process). ``host_pacer``: slots of crawl-delayed hosts shared with
        the fetchers of other crawls (:class:`crawler.core.http.paced.HostPacer`)."""
        self._host_pacer = host_pacer
        self.crawl = crawl
        self.processor = processor
        self.num_servers = num_servers
        self._ship = ship
        self._continue = should_continue
        self._resolver = CachingResolver()
        self._fetcher = fetcher or Fetcher(fetch_config, resolver=self._resolver)
        self._own_fetcher = fetcher is None
        # crawl-delayed urls: fetched in their hosts' lanes one hop at a time (each redirect
        # hop waits for the delay too) by a Fetcher that follows no redirect itself
        self._hop_fetcher = hop_fetcher
        self._own_hop_fetcher = False
        self._fetch_config = fetch_config
        self._slow_seconds = (slow_seconds if slow_seconds is not None
                              else fetch_config.page_deadline * SLOW_SHARE_OF_DEADLINE)
        self.watch = HostWatch(self._slow_seconds)
        self._clock = clock
        self._sleep = sleep
        self._outboxes = Outboxes(num_servers, ship_every, ship_seconds, ship_bytes)
        self._pages = PageHandler(
            processing or InlineProcessing(processor, analyzer or processor.analyzer),
            LinkEmitter(crawl, link_scores), self._outboxes, clock)
        # downloads handed to the processing, in the order they came (applied in that order)
        self._in_flight: deque[Handling] = deque()
        # the lanes' results taken and not handed to the processing yet
        self._lane_results: deque[tuple[ScheduleEntry, FetchResult]] = deque()
        # host name -> when it was last requested (crawl-delayed hosts only)
        self._last_request: dict[str, float] = {}
        self._batches = 0
        # the schedule being run
        self._schedule: Schedule | None = None
        self._origin = 0
        self._stats = ScheduleStats()
        self._lanes: DelayLanes | None = None

    def close(self) -> None:
        if self._own_hop_fetcher and self._hop_fetcher is not None:
            self._hop_fetcher.close()
        if self._own_fetcher:
            self._fetcher.close()

    def run(self, schedule: Schedule, origin_server: int,
            last_requests: dict[str, float] | None = None,
            skip_hosts: Collection[str] = ()) -> WorkerReport:
        """Work through ``schedule`` (see the module docstring); ``last_requests`` (origin ->
        time) says when each crawl-delayed host was last requested by an earlier schedule;
        urls of the origins in ``skip_hosts`` (hosts the queue server dropped) are not
        fetched."""
        started = self._clock()
        merge_last_requests(self._last_request, last_requests or {})
        self._schedule, self._origin = schedule, origin_server
        stats = self._stats = ScheduleStats()
        self._outboxes.start(time.monotonic())
        skip = frozenset(skip_hosts)
        plain_rounds, delayed = split_schedule(schedule, skip, stats, self.crawl.site_rules)
        self._lanes = self._make_lanes() if delayed else None
        try:
            for entry in delayed:
                self._lanes.add(entry)  # type: ignore[union-attr]
            with ThreadPoolExecutor(1, thread_name_prefix="round") as ahead, \
                    ThreadPoolExecutor(ROBOTS_THREADS, thread_name_prefix="robots") as pool:
                rounds = Rounds(
                    plain_rounds, stats=stats, watch=self.watch, skip=skip,
                    download=self._download_round, fetch_robots=self._fetch_robots,
                    should_continue=self._continue, ahead=ahead, robots_pool=pool,
                    handle=self._handle, poll=self._collect_lanes)
                rounds.run()
            stopped = rounds.stopped
            if self._lanes is not None:
                stopped = self._wind_down_lanes(rounds, stopped)
        finally:
            if self._lanes is not None:
                self._lanes.cancel(keep_first=False)
                self._lanes.close()
        rounds.settle_stragglers()
        self._apply_processed(wait=len(self._in_flight))
        stalls = self._report_to_own_server(stopped)
        self._flush(done=not stopped)
        return WorkerReport(stats.fetched, stats.errors, stats.documents, self._batches,
                            stopped, self._clock() - started, len(stats.deferred), stalls)

    # --- downloading --------------------------------------------------------------------

    def _make_lanes(self) -> DelayLanes:
        if self._hop_fetcher is None and self._own_fetcher:
            self._hop_fetcher = hop_fetcher_for(self._fetch_config, self._resolver)
            self._own_hop_fetcher = True
        paced = PacedFetch(self._fetcher, self._hop_fetcher, self._fetch_config.max_redirects,
                           self._last_request, self._clock, self._sleep, self._host_pacer)
        return DelayLanes(lambda entry: paced(entry.url, entry.etag, entry.crawl_delay,
                                              entry.last_modified),
                          self._last_request, self._clock, LANE_THREADS)

    def _download_round(self, entries: list[ScheduleEntry]) -> list[Download | Future[Download]]:
        requests = [FetchRequest(e.url, etag=e.etag, last_modified=e.last_modified)
                    for e in entries]
        return download_round(self._fetcher, requests, self._slow_seconds, self.watch)

    def _fetch_robots(self, entry: ScheduleEntry) -> FetchResult:
        return self._fetcher.fetch(FetchRequest(entry.url, etag=entry.etag))

    def _wind_down_lanes(self, rounds: Rounds, stopped: bool) -> bool:
        """After the rounds: the lanes get a little longer (unless the crawl stopped), then
        what they have not started goes back to the queue (a lane's first url is always
        fetched, unless the crawl stopped); wait for the requests already started. Returns
        whether the crawl stopped meanwhile."""
        lanes = self._lanes
        assert lanes is not None
        if not stopped:
            deadline = time.monotonic() + max(LANE_GRACE_SECONDS, 2 * lanes.longest_delay())
            next_check = time.monotonic() + 1.0
            while lanes.busy() and (now := time.monotonic()) < deadline:
                if now >= next_check:
                    if not self._continue():
                        stopped = True
                        break
                    next_check = now + 1.0
                lanes.wait(min(LANE_POLL_SECONDS, deadline - now))
                rounds.collect_finished(wait=False)
        taken = lanes.cancel(keep_first=not stopped)
        self._stats.lane_deferred = len(taken)
        self._stats.deferred.extend(taken)
        while lanes.busy():  # requests already started, and first urls
            lanes.wait(LANE_POLL_SECONDS)
            rounds.collect_finished(wait=False)
        return stopped

    # --- handling -----------------------------------------------------------------------

    def _handle(self, entry: ScheduleEntry, result: Download, blocked: bool) -> None:
        """One finished download: watch its host, process it, count it, ship when due
        (checked after every page: processing a round takes seconds)."""
        result = unpacked(result)
        if not entry.is_robots:
            self.watch.record(origin_of(entry.url), result, blocked=blocked)
        self._in_flight.append(self._pages.start(entry, result, self._origin))
        self._apply_processed(wait=len(self._in_flight) - IN_FLIGHT_PAGES)

    def _apply_processed(self, wait: int) -> None:
        """Put the processed downloads in the outboxes in the order they came: the first
        ``wait`` of them whether ready or not (waiting), then as long as the next is ready;
        count each, and ship when due (checked after every page: processing a round takes
        seconds)."""
        while self._in_flight and (wait > 0 or self._in_flight[0].ready()):
            wait -= 1
            handling = self._in_flight.popleft()
            failed, documents = self._pages.finish(handling, self._ship_part)
            self._stats.count_page(handling.entry, failed, documents)
            now = time.monotonic()
            if self._outboxes.page_handled(now) or self._lane_released(handling.entry):
                self._ship_now()
                self._outboxes.shipped(now)

    def _collect_lanes(self) -> None:
        """Handle the lanes' results. A lane's download time excludes its waits for the
        delay: only a download that is itself slow counts as a stall, and then (or when the
        host fails too often) the host's other urls go back to the queue server."""
        if self._lanes is None:
            return
        self._lane_results.extend(self._lanes.take_results())
        while self._lane_results:
            entry, result = self._lane_results.popleft()
            self._handle(entry, result, False)
            origin = origin_of(entry.url)
            if self.watch.stalled(origin) or self._stats.failing(origin):
                self._stats.deferred.extend(self._lanes.stop(host_of(entry.url)))

    # --- shipping -----------------------------------------------------------------------

    def _report_to_own_server(self, stopped: bool) -> dict[str, int]:
        """Put the schedule's host errors, stalls, deferred and skipped urls in the outbox of
        its own queue server (which delays, and in the end drops, such hosts); return the
        stalls (origin -> stalled downloads)."""
        stats, own = self._stats, self._outboxes.of(self._origin)
        for origin, count in stats.host_errors.items():
            if count:
                own.host_errors[origin] = own.host_errors.get(origin, 0) + count
        stalls = self.watch.stalls()
        if stalls:
            own.stalls.update(stalls)
            # hosts none of whose downloads in this schedule came in time: only these count
            # towards dropping a host (a big host with a few slow pages is not dropped)
            own.hopeless.extend(sorted(o for o in stalls if self.watch.times(o).pages
                                       <= self.watch.times(o).stalls))
        if stats.deferred and not stopped:  # a stopped schedule is handed out again whole
            own.deferred.extend(deferred_to_wire(e) for e in stats.deferred)
            own.abandoned.extend(stats.abandoned)
            logger.info("schedule %s: %d urls deferred (%d of stalled hosts, %d not reached "
                        "in crawl-delayed hosts' lanes)", self._schedule_id(),
                        len(stats.deferred), len(stats.deferred) - stats.lane_deferred,
                        stats.lane_deferred)
        if stats.skipped:
            own.counters["skipped_dropped_hosts"] += stats.skipped
        return stalls

    def _schedule_id(self) -> str:
        assert self._schedule is not None, "no schedule is running"
        return self._schedule.id

    def _ship_now(self) -> None:
        self._flush(done=False)

    def _ship_part(self) -> None:
        """Ship in the middle of a page (its documents passed the batch bound): the batches
        are marked partial, so that its queue server applies the page's parts together
        (:mod:`crawler.core.queue_server.page_parts`)."""
        self._flush(done=False, partial=True)

    def _lane_released(self, entry: ScheduleEntry) -> bool:
        """Whether the page of ``entry`` just sent was the last of its crawl-delayed host's
        lane: then the batch goes now, so that its queue server frees the host (which may
        be scheduled again at once) without waiting for the next shipment (every
        ``ship_seconds``, or the schedule's end when no other page comes)."""
        if self._lanes is None or entry.crawl_delay <= 0 or entry.is_robots:
            return False
        self._release_finished_lanes()
        return bool(self._outboxes.of(self._origin).released)

    def _release_finished_lanes(self) -> None:
        """Tell the schedule's own queue server which crawl-delayed hosts this schedule is
        done with (every url fetched, every page in the outboxes or sent), so that it frees
        them before the schedule's end (:meth:`.lanes.DelayLanes.finished_origins`)."""
        if self._lanes is None:
            return
        unsent = {host_of(entry.url) for entry, _ in self._lane_results}
        unsent.update(host_of(handling.entry.url) for handling in self._in_flight)
        self._outboxes.of(self._origin).released.extend(self._lanes.finished_origins(unsent))

    def _flush(self, done: bool, partial: bool = False) -> None:
        self._release_finished_lanes()
        for server, batch in self._outboxes.take_batches(self.crawl.timestamp,
                                                         self._schedule_id(), self._origin,
                                                         done, partial):
            self._ship(server, batch)
            self._batches += 1
        release_free_heap()
