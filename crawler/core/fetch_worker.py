"""A fetcher working through one schedule: download in rounds, process, ship to queue servers.

Layer: ``crawler.core``. The Celery task (``crawler.tasks.fetch_schedule_task``) builds a
:class:`ScheduleWorker` with the crawl's config and two callbacks — ``ship(server, batch)`` and
``should_continue()`` — and calls :meth:`ScheduleWorker.run`.

As the seed describes it:

* the schedule is downloaded a round (about 100 urls) at a time, concurrently;
* a crawl-delayed host's urls are not in the rounds: each such host has a *lane* that requests
  its urls one at a time, each (and each redirect hop) once the host's delay since its previous
  request has passed, beside the rounds and for the whole schedule. When the rounds are done the
  schedule waits for its lanes, at most ``LANE_GRACE_SECONDS`` or twice the longest delay if
  that is longer; urls whose request has not started by then go back to the queue server
  (deferred), except a lane's first url, which is always fetched (a schedule of delayed urls
  only still makes progress). The queue server gives a delayed host to one outstanding schedule
  at a time, so the lane's pacing holds across fetchers;
* each page is processed (MIME type, summary, links, robot metas, meta words, terms) into index
  documents: the page itself, and one link document per outlink, filed under the link's target;
* everything is partitioned by the queue server that owns its host (documents by their url's
  host, discovered urls by the target's host; robots data and host errors go to the schedule's
  own queue server), and shipped every ``ship_every`` pages (SEEN_URLS_BEFORE_UPDATE_SCHEDULER);
* between rounds ``should_continue()`` is asked whether the crawl still runs;
* the last batch to the schedule's own queue server carries ``done``: the schedule is then
  acknowledged there. A fetcher killed before that loses nothing: the queue server hands the
  schedule out again after its timeout.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
import time
import zlib
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from indexer.core.text import TextAnalyzer
from indexer.core.urls import host_of

from .crawl import CrawlConfig, CrawlOrder
from .fetch import (
    Cancelled,
    DnsError,
    FetchConfig,
    Fetcher,
    FetchRequest,
    FetchResult,
    RedirectLoop,
    Resolver,
    TooManyRedirects,
    system_resolver,
)
from .fetch.client import CANCEL_POLL, normalize_url
from .fetch.hostwatch import HostWatch
from .indexing import iter_index_documents
from .memory import release_free_heap
from .page import FetchedPage, Link, ProcessedPage
from .policy import child_policy, page_switch
from .process import PageProcessor
from .scheduler import DiscoveredUrl, Schedule, ScheduleEntry
from .shipping import shard_of_host
from .urls import file_extension
from .wire import deferred_to_wire, discovered_to_wire, encoded_document_to_wire

logger = logging.getLogger(__name__)

# robots.txt requests of a schedule's new hosts run beside its rounds, and the schedule's last
# batch waits for all of them: a new host may first cost a slow or failing DNS lookup
ROBOTS_THREADS = 32
# crawl-delayed hosts of a schedule requested at the same time (waiting for a delay takes none)
LANE_THREADS = 8
# after its rounds, a schedule waits this long (or twice the longest delay) for its lanes
LANE_GRACE_SECONDS = 3.0
SEEN_URLS_BEFORE_UPDATE_SCHEDULER = 380   # MEMORY_PROFILE (4) x 95
SHIP_SECONDS = 4.0   # ...or after this long, so that discovered links return to the queue soon
# ...or once what waits to go out holds this many bytes (documents' summaries, cached pages and
# index blobs, as base64, and discovered urls; see batch_item_bytes): a batch's size, and the
# memory of every process that carries it (fetcher, broker, inbox worker, queue server), stays
# bounded whatever the pages are like. Sealing and sending a batch briefly takes several times
# its size (JSON text, compressed, base64, the broker message): with 4 MiB, a page with
# thousands of links (an API reference's index) raised a fetcher's peak by 30 MiB.
SHIP_BYTES = 2 << 20
# The next round downloads while this one is processed, unless this one's bodies hold this
# many bytes (a round of an API reference's biggest pages holds 100 MB at a 4 MB byte range;
# a round of ordinary pages about 5 MB)
AHEAD_BODY_BYTES = 16 << 20
# A downloaded body this long waits for its turn deflated (zlib level 1, in the download thread;
# HTML shrinks 5-10 times): a round holds all its bodies until each is processed, and 100 pages
# of an API reference at 1-4 MB each made a fetcher's peak memory depend on the pages crawled.
# A body is inflated just before it is processed, one at a time.
PACK_BODY_BYTES = 256 << 10
SLOW_SHARE_OF_DEADLINE = 1 / 3   # a download this share of the page deadline old is blocked
DOWNLOAD_ERROR_THRESHOLD = 50
NON_HTML_EXTENSIONS = frozenset({"pdf", "txt", "csv", "tsv", "xml", "rss", "atom", "gif", "jpg",
                                 "jpeg", "png", "svg", "bmp", "webp", "gz", "zip", "tar", "mp3",
                                 "mp4", "json", "doc", "docx", "ppt", "pptx", "xls", "xlsx"})


def batch_item_bytes(item: dict[str, Any] | list[Any]) -> int:
    """About the bytes one outbox item adds to a batch's JSON text: a wire document's three
    base64 fields, or a discovered url's url, source url and anchor text plus its numbers."""
    if isinstance(item, dict):
        return len(item["s"]) + len(item["c"]) + len(item["x"])
    return len(item[0]) + len(item[3]) + len(item[11]) + 48


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


class CachingResolver:
    """A DNS cache in front of the system resolver, shared by a fetcher process's Fetchers.

    Each host name is looked up once per ``ttl`` seconds (answers and "no such host" alike)
    instead of once per page, and at most ``parallel`` lookups run at once: some resolvers
    (stub resolvers, small caching servers; this machine's among them) answer one query at a
    time and stall parallel ones until their 5-second timeout, and a round of robots.txt
    requests to a hundred new hosts is such a burst (measured here: 100 new hosts, 5.0 s in
    parallel, under 0.1 s one at a time). The Fetcher still vets every address it connects
    to, so the cache cannot widen the egress policy."""

    def __init__(self, resolver: Resolver = system_resolver, ttl: float = 300.0,
                 parallel: int = 1, max_entries: int = 50_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._resolver = resolver
        self._ttl = ttl
        self._max = max_entries
        self._clock = clock
        self._gate = threading.BoundedSemaphore(parallel)
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, Sequence[str] | DnsError]] = {}

    def __call__(self, host: str, port: int) -> Sequence[str]:
        key = host.lower()
        hit = self._cache.get(key)
        if hit is None or hit[0] <= self._clock():
            with self._gate:
                hit = self._cache.get(key)
                if hit is None or hit[0] <= self._clock():
                    try:
                        answer: Sequence[str] | DnsError = tuple(self._resolver(host, port))
                    except DnsError as exc:
                        answer = exc
                    hit = (self._clock() + self._ttl, answer)
                    with self._lock:
                        if len(self._cache) >= self._max:
                            self._cache.clear()  # bounded: start again rather than grow
                        self._cache[key] = hit
        answer = hit[1]
        if isinstance(answer, DnsError):
            raise DnsError(answer.message, url=answer.url)
        return list(answer)


@dataclass(slots=True)
class _Outbox:
    docs: list[dict[str, Any]] = field(default_factory=list)
    discovered: list[list[Any]] = field(default_factory=list)
    robots: list[dict[str, Any]] = field(default_factory=list)
    host_errors: dict[str, int] = field(default_factory=dict)
    fetched: list[list[Any]] = field(default_factory=list)
    deferred: list[list[Any]] = field(default_factory=list)
    stalls: dict[str, int] = field(default_factory=dict)
    hopeless: list[str] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def empty(self) -> bool:
        return not (self.docs or self.discovered or self.robots or self.host_errors
                    or self.fetched or self.deferred or self.stalls or self.counters)


@dataclass(slots=True)
class _Lane:
    """The urls of one crawl-delayed host name in one schedule, requested in order."""

    queue: deque[ScheduleEntry] = field(default_factory=deque)
    state: str = "idle"     # "armed": waiting for the host's delay; "fetching"; "idle"
    started: int = 0        # urls taken for fetching: from then on they are fetched, not deferred
    stopped: bool = False   # its host stalled: the rest went back to the queue server


class _DelayLanes:
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
            last = self._last.get(host)
            ready = -math.inf if last is None else last + lane.queue[0].crawl_delay
            lane.state = "armed"
            self._seq += 1
            heapq.heappush(self._due, (ready, self._seq, host))
        self._cond.notify_all()

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
                    last = self._last.get(host)
                    ready = -math.inf if last is None else last + lane.queue[0].crawl_delay
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


def hop_fetcher_for(config: FetchConfig, resolver: Resolver | None = None) -> Fetcher:
    """The Fetcher for crawl-delayed urls: it follows no redirect by itself, so that the
    worker can space every hop to a delayed host by the delay."""
    return Fetcher(replace(config, max_redirects=0, concurrency=4), resolver=resolver)


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


@dataclass(frozen=True, slots=True)
class _Packed:
    """A download whose body waits deflated (see PACK_BODY_BYTES); ``result`` has no body."""

    result: FetchResult
    deflated: bytes

    @property
    def held_bytes(self) -> int:
        return len(self.deflated)

    def unpack(self) -> FetchResult:
        return replace(self.result, body=zlib.decompress(self.deflated))


def _pack(result: FetchResult) -> FetchResult | _Packed:
    """``result`` with its body deflated if it is long (run in the download thread)."""
    if len(result.body) < PACK_BODY_BYTES:
        return result
    return _Packed(replace(result, body=b""), zlib.compress(result.body, 1))


def _unpacked(result: FetchResult | _Packed) -> FetchResult:
    return result.unpack() if isinstance(result, _Packed) else result


def _held_bytes(result: FetchResult | _Packed) -> int:
    return result.held_bytes if isinstance(result, _Packed) else len(result.body)


class ScheduleWorker:
    """Downloads and processes one schedule. Not thread-safe; make one per schedule."""

    def __init__(
        self,
        crawl: CrawlConfig,
        fetch_config: FetchConfig,
        processor: PageProcessor,
        num_servers: int,
        ship: Callable[[int, dict[str, Any]], None],
        should_continue: Callable[[], bool] = lambda: True,
        *,
        fetcher: Fetcher | None = None,
        hop_fetcher: Fetcher | None = None,
        analyzer: TextAnalyzer | None = None,
        ship_every: int = SEEN_URLS_BEFORE_UPDATE_SCHEDULER,
        ship_seconds: float = SHIP_SECONDS,
        ship_bytes: int = SHIP_BYTES,
        slow_seconds: float | None = None,
        link_scores: Callable[[Sequence[str]], np.ndarray] | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.crawl = crawl
        self.processor = processor
        self.num_servers = num_servers
        self._ship = ship
        self._continue = should_continue
        self._resolver = CachingResolver()
        self._fetcher = fetcher or Fetcher(fetch_config, resolver=self._resolver)
        self._own_fetcher = fetcher is None
        self._analyzer = analyzer or processor.analyzer
        self._ship_every = ship_every
        self._ship_seconds = ship_seconds
        self._ship_bytes = ship_bytes
        self._outbox_bytes = 0  # bytes of the documents and urls in the outboxes
        self._slow_seconds = (slow_seconds if slow_seconds is not None
                              else fetch_config.page_deadline * SLOW_SHARE_OF_DEADLINE)
        self.watch = HostWatch(self._slow_seconds)
        self._link_scores = link_scores
        self._clock = clock
        self._sleep = sleep
        self._fetch_config = fetch_config
        self._outboxes: dict[int, _Outbox] = defaultdict(_Outbox)
        # host name -> when it was last requested (crawl-delayed hosts only)
        self._last_request: dict[str, float] = {}
        self._batches = 0
        # crawl-delayed urls: fetched in their hosts' lanes one hop at a time (each redirect
        # hop waits for the delay too) by a Fetcher that follows no redirect itself
        self._hop_fetcher = hop_fetcher
        self._own_hop_fetcher = False

    def close(self) -> None:
        if self._own_hop_fetcher and self._hop_fetcher is not None:
            self._hop_fetcher.close()
        if self._own_fetcher:
            self._fetcher.close()

    # --- the loop -----------------------------------------------------------------------

    def run(self, schedule: Schedule, origin_server: int,
            last_requests: dict[str, float] | None = None,
            skip_hosts: Collection[str] = ()) -> WorkerReport:
        """Work through ``schedule``; ``last_requests`` (origin -> time) says when each
        crawl-delayed host was last requested by an earlier schedule; urls of the origins in
        ``skip_hosts`` (hosts the queue server dropped) are not fetched.

        Rounds are pipelined: the next round is downloaded (in a helper thread) while this
        one is processed, so the network wait and the page processing overlap. A round ends
        when its downloads have finished or every one still in flight is blocked (see
        :mod:`crawler.core.fetch.hostwatch`); blocked downloads finish in the background and
        are handled when they do, and their hosts' remaining urls are deferred to the queue
        server. Crawl-delayed urls are fetched in their hosts' lanes beside the rounds and
        handled as they come in; after the rounds the schedule waits a bounded time for the
        lanes and defers what they did not start. Batches go out every ``ship_every`` pages
        or ``ship_seconds``, whichever comes first."""
        started = self._clock()
        for origin, at in (last_requests or {}).items():
            key = host_of(origin)
            self._last_request[key] = max(self._last_request.get(key, at), at)
        skip = frozenset(skip_hosts)
        fetched = errors = documents = since_ship = 0
        last_ship = time.monotonic()
        host_errors: dict[str, int] = defaultdict(int)
        deferred: list[ScheduleEntry] = []
        skipped = 0
        # crawl-delayed urls go to their hosts' lanes at once; the rounds keep the others
        plain_rounds: list[list[ScheduleEntry]] = []
        delayed: list[ScheduleEntry] = []
        for round_entries in schedule.rounds():
            plain = []
            for e in round_entries:
                if e.crawl_delay <= 0 or e.is_robots:
                    plain.append(e)
                elif origin_of(e.url) in skip:
                    skipped += 1
                else:
                    delayed.append(e)
            plain_rounds.append(plain)
        rounds = iter(plain_rounds)
        lanes = self._lanes() if delayed else None
        pending: deque[tuple[list[ScheduleEntry], Future[list[FetchResult | _Packed | Future]]]] = deque()
        # robots.txt requests (new hosts: each may wait on DNS) do not hold up their round:
        # their results are handled as they arrive, all of them before the last batch
        robots: list[tuple[ScheduleEntry, Future[FetchResult]]] = []
        # blocked downloads of earlier rounds, handled when they finish
        stragglers: list[tuple[ScheduleEntry, Future[FetchResult]]] = []
        state = "more"
        lane_deferred = 0

        def ship() -> None:
            self._flush(schedule, origin_server, done=False)

        def handle(entry: ScheduleEntry, result: FetchResult | _Packed,
                   blocked: bool = False) -> None:
            nonlocal fetched, errors, documents, since_ship, last_ship
            result = _unpacked(result)
            if not entry.is_robots:
                self.watch.record(origin_of(entry.url), result, blocked=blocked)
            failed, docs = self._handle(entry, result, origin_server, ship)
            fetched += 1
            documents += docs
            since_ship += 1
            if failed:
                errors += 1
                host_errors[origin_of(entry.url)] += 1
            # checked after every page: processing a round takes seconds
            now = time.monotonic()
            if since_ship >= self._ship_every or self._outbox_bytes >= self._ship_bytes or (
                    since_ship and now - last_ship >= self._ship_seconds):
                self._flush(schedule, origin_server, done=False)
                since_ship = 0
                last_ship = now

        def handle_lane(entry: ScheduleEntry, result: FetchResult) -> None:
            # a lane's download time excludes its waits for the delay: only a download that
            # is itself slow counts as a stall, and then the host's other urls go back
            handle(entry, result)
            origin = origin_of(entry.url)
            if lanes is not None and (self.watch.stalled(origin)
                                      or host_errors[origin] >= DOWNLOAD_ERROR_THRESHOLD):
                deferred.extend(lanes.stop(host_of(entry.url)))

        def handle_finished(wait: bool) -> None:
            keep = []
            for entry, future in robots:
                if wait or future.done():
                    handle(entry, future.result())
                else:
                    keep.append((entry, future))
            robots[:] = keep
            late = []
            for entry, future in stragglers:
                if future.done():
                    finish_straggler(entry, future.result())
                else:
                    late.append((entry, future))
            stragglers[:] = late
            if lanes is not None:
                for entry, result in lanes.take_results():
                    handle_lane(entry, result)

        def finish_straggler(entry: ScheduleEntry, result: FetchResult | _Packed) -> None:
            if isinstance(result, FetchResult) and isinstance(result.error, Cancelled):
                deferred.append(entry)  # never sent: its host was stalled
            else:
                handle(entry, result, blocked=True)

        try:
            for entry in delayed:
                lanes.add(entry)  # type: ignore[union-attr]
            with ThreadPoolExecutor(1, thread_name_prefix="round") as ahead, \
                    ThreadPoolExecutor(ROBOTS_THREADS, thread_name_prefix="robots") as pool:
                def submit_next() -> str:
                    nonlocal skipped
                    for round_entries in rounds:
                        if not self._continue():
                            return "stopped"
                        entries = []
                        for e in round_entries:
                            origin = origin_of(e.url)
                            if host_errors[origin] >= DOWNLOAD_ERROR_THRESHOLD:
                                continue
                            if origin in skip:
                                skipped += 1
                            elif e.is_robots:
                                robots.append((e, pool.submit(
                                    self._fetcher.fetch, FetchRequest(e.url, etag=e.etag))))
                            elif self.watch.stalled(origin):
                                deferred.append(e)  # back off: the queue server has it again
                            else:
                                entries.append(e)
                        if entries:
                            pending.append((entries, ahead.submit(self._fetch_plain, entries)))
                            return "more"
                    return "end"

                state = submit_next()
                while pending or robots or stragglers:
                    if not pending:
                        if state == "more":
                            state = submit_next()
                            continue
                        handle_finished(wait=False)
                        if robots:
                            handle_finished(wait=True)
                        break
                    entries, future = pending.popleft()
                    results = future.result()
                    # blocked downloads were recorded as stalls by _fetch_plain, so the next
                    # round (chosen now) already leaves their hosts out. A round whose bodies
                    # are big is handled before the next one downloads (started below): two
                    # such rounds at once set a fetcher's peak memory.
                    held = sum(_held_bytes(r) for r in results if not isinstance(r, Future))
                    if state == "more" and held < AHEAD_BODY_BYTES:
                        state = submit_next()
                    for i, entry in enumerate(entries):
                        result, results[i] = results[i], None  # each body goes once handled
                        if isinstance(result, Future):
                            stragglers.append((entry, result))
                            continue
                        handle(entry, result)
                    result = None  # nor is the last one kept meanwhile
                    handle_finished(wait=False)
                    if state == "more" and not pending:
                        state = submit_next()  # the round held back above
            if lanes is not None:
                # the lanes get a little longer than the rounds; then what they have not
                # started goes back to the queue (a lane's first url is always fetched)
                if state != "stopped":
                    deadline = time.monotonic() + max(LANE_GRACE_SECONDS,
                                                      2 * lanes.longest_delay())
                    next_check = time.monotonic() + 1.0
                    while lanes.busy() and (now := time.monotonic()) < deadline:
                        if now >= next_check:
                            if not self._continue():
                                state = "stopped"
                                break
                            next_check = now + 1.0
                        lanes.wait(min(0.25, deadline - now))
                        handle_finished(wait=False)
                taken = lanes.cancel(keep_first=state != "stopped")
                lane_deferred = len(taken)
                deferred.extend(taken)
                while lanes.busy():  # requests already started, and first urls
                    lanes.wait(0.25)
                    handle_finished(wait=False)
        finally:
            if lanes is not None:
                lanes.cancel(keep_first=False)
                lanes.close()
        stopped = state == "stopped"
        # Downloads still blocked at the end are not waited for: their urls go back to the
        # queue like the host's other remaining urls (a result that comes later is dropped;
        # the page deadline ends it). A host that keeps stalling is dropped by the queue
        # server, so a trickling url is not tried for ever.
        if stragglers:  # those waiting for a slot end within CANCEL_POLL
            wait([future for _, future in stragglers], timeout=4 * CANCEL_POLL)
        for entry, future in stragglers:
            if future.done():
                finish_straggler(entry, future.result())
            else:
                deferred.append(entry)
        own = self._outboxes[origin_server]
        # Host errors of this schedule go to the owning queue server (it delays such hosts).
        for origin, count in host_errors.items():
            if count:
                own.host_errors[origin] = own.host_errors.get(origin, 0) + count
        stalls = self.watch.stalls()
        if stalls:
            own.stalls.update(stalls)
            # hosts none of whose downloads in this schedule came in time: only these count
            # towards dropping a host (a big host with a few slow pages is not dropped)
            own.hopeless.extend(sorted(o for o in stalls if self.watch.times(o).pages
                                       <= self.watch.times(o).stalls))
        if deferred and not stopped:  # a stopped schedule is handed out again whole
            own.deferred.extend(deferred_to_wire(e) for e in deferred)
            logger.info("schedule %s: %d urls deferred (%d of stalled hosts, %d not reached "
                        "in crawl-delayed hosts' lanes)", schedule.id, len(deferred),
                        len(deferred) - lane_deferred, lane_deferred)
        if skipped:
            own.counters["skipped_dropped_hosts"] += skipped
        self._flush(schedule, origin_server, done=not stopped)
        return WorkerReport(fetched, errors, documents, self._batches, stopped,
                            self._clock() - started, len(deferred), stalls)

    # --- downloading --------------------------------------------------------------------

    def _lanes(self) -> _DelayLanes:
        if self._hop_fetcher is None and self._own_fetcher:
            self._hop_fetcher = hop_fetcher_for(self._fetch_config, self._resolver)
            self._own_hop_fetcher = True
        return _DelayLanes(self._fetch_paced, self._last_request, self._clock, LANE_THREADS)

    def _fetch_plain(self, entries: Sequence[ScheduleEntry]) -> list[FetchResult | _Packed | Future]:
        """Start every download at once and wait while any is *active*: in flight for less
        than ``slow_seconds``, or waiting for a slot of a host none of whose downloads is
        blocked. Then downloads still waiting for a slot (of a blocked host) give up at once
        (their urls are deferred), and the blocked ones are handed back as futures."""
        if not entries:
            return []
        cancel = threading.Event()
        starts: list[float | None] = [None] * len(entries)

        def started(i: int) -> Callable[[], None]:
            def mark() -> None:
                starts[i] = time.monotonic()
            return mark

        futures = [self._fetcher.submit(FetchRequest(e.url, etag=e.etag), cancel, started(i),
                                        then=_pack)
                   for i, e in enumerate(entries)]
        index = {future: i for i, future in enumerate(futures)}
        origins = [origin_of(e.url) for e in entries]
        slow = self._slow_seconds
        left = set(futures)
        blocked_hosts: set[str] = set()
        while left:
            _, left = wait(left, timeout=min(slow, 0.25))
            now = time.monotonic()
            ages = {f: None if starts[index[f]] is None else now - starts[index[f]]
                    for f in left}
            blocked_hosts = {origins[index[f]] for f, age in ages.items()
                             if age is not None and age >= slow}
            if not any((age is None and origins[index[f]] not in blocked_hosts)
                       or (age is not None and age < slow) for f, age in ages.items()):
                break
        cancel.set()
        out: list[FetchResult | _Packed | Future] = [
            future if future in left and not future.done() else future.result()
            for future in futures]
        for origin in blocked_hosts:
            self.watch.record_blocked(origin)
        return out

    def _wait_for_host(self, host: str, delay: float) -> None:
        last = self._last_request.get(host)
        if last is not None:
            pause = last + delay - self._clock()
            if pause > 0:
                self._sleep(min(pause, 120.0))

    def _fetch_paced(self, entry: ScheduleEntry) -> FetchResult:
        """A crawl-delayed url, in its host's lane once the delay has passed: fetch it; a
        redirect to the same host name waits for the delay again before the next hop (up to
        max_redirects hops). The result's ``elapsed`` is the time spent downloading (the
        hops' times), not the waits between hops."""
        host = host_of(entry.url)
        hop_fetcher = self._hop_fetcher
        if hop_fetcher is None:  # an injected Fetcher: it follows the redirects itself
            try:
                return self._fetcher.fetch(FetchRequest(entry.url, etag=entry.etag))
            finally:
                self._last_request[host] = self._clock()
        spent = 0.0
        hops: list[Any] = []
        visited = {normalize_url(entry.url)}
        url, etag = entry.url, entry.etag
        max_redirects = self._fetch_config.max_redirects
        while True:
            try:
                result = hop_fetcher.fetch(FetchRequest(url, etag=etag))
            finally:
                if host_of(url) == host:
                    self._last_request[host] = self._clock()
            spent += max(0.0, result.elapsed)
            if not (isinstance(result.error, TooManyRedirects) and result.redirects):
                return replace(result, url=entry.url, redirects=(*hops, *result.redirects),
                               elapsed=spent)
            hop = result.redirects[-1]
            hops.append(hop)
            error: Exception | None = None
            if len(hops) > max_redirects:
                error = TooManyRedirects(f"more than {max_redirects} redirects", url=hop.target)
            elif normalize_url(hop.target) in visited:
                error = RedirectLoop(f"redirect loop: {url} -> {hop.target}", url=hop.target)
            if error is not None:
                return replace(result, url=entry.url, redirects=tuple(hops), error=error,
                               elapsed=spent)
            visited.add(normalize_url(hop.target))
            url, etag = hop.target, None
            if host_of(url) == host:
                self._wait_for_host(host, entry.crawl_delay)

    # --- one url ------------------------------------------------------------------------

    def _shard(self, url: str) -> int:
        return shard_of_host((urlsplit(url).hostname or "").lower(), self.num_servers)

    def _handle(self, entry: ScheduleEntry, result: FetchResult, origin_server: int,
                ship: Callable[[], None]) -> tuple[bool, int]:
        """Process one download; return (was an error, documents produced).

        A page whose documents and links pass the batch bound by themselves (an index page with
        thousands of links) is shipped in parts, by ``ship``. Its url is recorded as fetched
        only with its last part: a fetcher killed in between has not told its queue server
        that the page was fetched, so the page is fetched again with its schedule."""
        own = self._outboxes[origin_server]
        own.counters["pages_fetched"] += 1
        own.counters["bytes_downloaded"] += len(result.body)
        if entry.is_robots:
            status = 0 if result.error is not None else result.status
            body = result.body.decode("utf-8", "replace") if 200 <= status < 300 else None
            own.robots.append({"origin": origin_of(entry.url), "status": status, "body": body})
            return result.error is not None, 0
        if result.error is not None or (result.status >= 400 and result.status != 404):
            own.counters["fetch_errors"] += 1
            own.fetched.append([entry.url, None, None])
            return True, 0
        fetched_row = [entry.url, result.etag, result.expires_at]
        if result.status == 304 or result.status >= 400:
            own.fetched.append(fetched_row)
            return False, 0
        produced = 0
        for hop in result.redirects:
            page = self.processor.process(FetchedPage(
                url=hop.source, body=b"", status=hop.status,
                headers={"location": hop.target}, fetched_at=self._clock()))
            produced += self._emit(page, entry, allow_links=False, ship=ship)
        page = self.processor.process(FetchedPage(
            url=result.final_url or entry.url, body=result.body, status=result.status,
            headers=dict(result.headers), fetched_at=self._clock(),
            download_time=result.elapsed, ip=result.ip or ""))
        produced += self._emit(page, entry, allow_links=True, ship=ship)
        self._outboxes[origin_server].fetched.append(fetched_row)  # (a part may have gone)
        return False, produced

    def _put(self, box: list[Any], item: dict[str, Any] | list[Any],
             ship: Callable[[], None]) -> None:
        """Add one document or discovered url to an outbox list; ship once past the bound."""
        box.append(item)
        self._outbox_bytes += batch_item_bytes(item)
        if self._outbox_bytes >= self._ship_bytes:
            ship()

    def _emit(self, page: ProcessedPage, entry: ScheduleEntry, allow_links: bool,
              ship: Callable[[], None]) -> int:
        produced = 0
        for doc in iter_index_documents(page, self._analyzer):
            self._put(self._outboxes[self._shard(doc.url)].docs,
                      encoded_document_to_wire(doc), ship)
            produced += 1
        if not allow_links:
            return produced
        links = [link for link in page.links if link.kind not in ("location", "canonical")
                 or link.url != page.url]
        if self.crawl.max_depth >= 0 and entry.depth + 1 > self.crawl.max_depth:
            return produced
        shares = self._link_order(links)
        links = [links[i] for i in shares[0]]
        # seed policies travel with the links (crawler.core.policy); a spam page switches
        policy, policy_depth = child_policy(entry.policy, entry.policy_depth,
                                            page_switch(page.fields, page.safe))
        cash = (entry.weight * shares[1]) if (links and self.crawl.order == CrawlOrder.OPIC) \
            else np.zeros(len(links))
        for index, link in enumerate(links):
            if not self.crawl.site_rules.permits(link.url):
                continue
            is_sitemap = link.kind == "sitemap" or page.is_sitemap and link.url.endswith(
                (".xml", ".xml.gz"))
            discovered = DiscoveredUrl(
                link.url, entry.depth + 1, index, source_url=page.url,
                source_weight=entry.weight, source_tier=entry.tier, is_sitemap=is_sitemap,
                is_html=file_extension(link.url) not in NON_HTML_EXTENSIONS,
                opic_cash=float(cash[index]), policy=policy.value, policy_depth=policy_depth,
                anchor_text=link.text)
            self._put(self._outboxes[self._shard(link.url)].discovered,
                      discovered_to_wire(discovered), ship)
        return produced

    def _link_order(self, links: Sequence[Link]) -> tuple[np.ndarray, np.ndarray]:
        """The order in which a page's links are ranked (their link index i, hence the weight
        the scheduler gives them) and each one's share of the page's OPIC cash.

        Without link-analysis scores: page order and equal shares (the seed's rule). With them
        (a previous ``manage.py score_update``), better-scored targets come first and take a
        share of the cash proportional to their score (plus an even part, so an unscored url
        still gets some)."""
        n = len(links)
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        if self._link_scores is None:
            return np.arange(n), np.full(n, 1.0 / n)
        scores = np.asarray(self._link_scores([link.url for link in links]), dtype=np.float64)
        scores = np.where(np.isfinite(scores) & (scores > 0), scores, 0.0)
        order = np.argsort(-scores, kind="stable")
        weights = scores[order] + (scores.mean() if scores.any() else 1.0)
        return order, weights / weights.sum()

    # --- shipping -----------------------------------------------------------------------

    def _flush(self, schedule: Schedule, origin_server: int, done: bool) -> None:
        if done:
            self._outboxes.setdefault(origin_server, _Outbox())  # the final batch is always sent
        # the schedule's own queue server last: its "done" batch acknowledges the schedule, so
        # everything else this schedule found is already on its way when that happens
        for server in sorted(self._outboxes, key=lambda n: (n == origin_server, n)):
            box = self._outboxes[server]
            final = done and server == origin_server
            if box.empty() and not final:
                continue
            batch = {
                "crawl": self.crawl.timestamp, "server": server,
                "schedule": schedule.id if server == origin_server else None,
                "done": final, "docs": box.docs, "discovered": box.discovered,
                "robots": box.robots, "host_errors": box.host_errors, "fetched": box.fetched,
                "deferred": box.deferred, "stalls": box.stalls, "hopeless": box.hopeless,
                "counters": dict(box.counters),
            }
            self._ship(server, batch)
            self._batches += 1
        self._outboxes.clear()
        self._outbox_bytes = 0
        release_free_heap()
