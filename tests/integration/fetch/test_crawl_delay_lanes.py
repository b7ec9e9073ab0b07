"""Crawl-delayed hosts in one schedule (issue 5): each delayed host's urls are requested in the
host's own lane, one at a time and the delay apart, beside the schedule's rounds rather than one
per round; what a lane has not started when the rest of the schedule is done goes back to the
queue server, and comes back in a later schedule. Checked against real HTTP servers on loopback,
by their own request logs."""

from __future__ import annotations

import threading
import time
from typing import Any, NamedTuple

import pytest

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.fetcher import ScheduleWorker
from crawler.core.fetcher.lanes import LANE_GRACE_SECONDS, LANE_THREADS, DelayLanes
from crawler.core.http import FetchConfig
from crawler.core.http.result import FetchResult
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import Schedule, ScheduleEntry
from crawler.core.transport.wire import deferred_from_wire
from crawler.core.urls import origin_of
from indexer.core.urls import host_of
from tests.fixtures.sites import FixtureServer, LogEntry, hostile_router, normal_site

LOOPBACK = ("127.0.0.0/8",)
CRAWL = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t")
CONFIG = FetchConfig(allowed_networks=LOOPBACK, connect_timeout=2.0, read_timeout=3.0,
                     page_deadline=5.0)
SLACK = 0.02   # the server stamps a request when it reads its request line


def delayed(url: str, delay: float, slot: int) -> ScheduleEntry:
    return ScheduleEntry(url, 1, 0.0, 0, delay, None, slot)


def plain(url: str, slot: int) -> ScheduleEntry:
    return ScheduleEntry(url, 1, 0.0, 0, 0.0, None, slot)


def gaps(log: list[LogEntry]) -> list[float]:
    starts = sorted(e.start for e in log)
    return [b - a for a, b in zip(starts, starts[1:], strict=False)]


def run_worker(entries: list[ScheduleEntry], round_size: int = 100,
               last: dict[str, float] | None = None, sid: str = "s-1",
               **options: Any) -> tuple[Any, list[dict[str, Any]], float]:
    batches: list[dict[str, Any]] = []
    worker = ScheduleWorker(CRAWL, CONFIG, PageProcessor(), 1,
                            lambda server, batch: batches.append(batch.to_wire()), **options)
    schedule = Schedule(sid, tuple(sorted(entries, key=lambda e: e.slot)), 0.0, 0.0, round_size)
    started = time.monotonic()
    try:
        report = worker.run(schedule, 0, last)
    finally:
        worker.close()
    return report, batches, time.monotonic() - started


def deferred_urls(batches: list[dict[str, Any]]) -> list[str]:
    return [deferred_from_wire(row)[0] for batch in batches for row in batch["deferred"]]


class PacedRun(NamedTuple):
    urls: list[str]                # the paced host's urls in the schedule
    report: Any
    batches: list[dict[str, Any]]
    elapsed: float
    log: list[LogEntry]            # the paced host's requests
    requested: list[str]           # their urls


def paced_beside_slow_rounds(**options: Any) -> PacedRun:
    """A schedule in the old layout, one url of a host delayed 0.5 s per round of five, with
    rounds that each take 1.2 s (another host holds every answer), run by a worker with
    ``options``."""
    site = normal_site("paced", pages=10, crawl_delay=0.5)
    with FixtureServer(site.route, host="127.0.0.2") as paced, \
            FixtureServer(hostile_router(), host="127.0.0.3") as slow:
        urls = [paced.url(path) for path in site.allowed_paths][:8]
        entries = []
        for k, url in enumerate(urls):
            entries.append(delayed(url, 0.5, 5 * k))
            entries.append(plain(slow.url(f"/hold?seconds=1.2&k={k}"), 5 * k + 1))
        report, batches, elapsed = run_worker(entries, round_size=5, slow_seconds=4.0,
                                              **options)
        log = list(paced.log)
        return PacedRun(urls, report, batches, elapsed, log,
                        [paced.base_url() + e.path for e in log])


def test_a_delayed_host_keeps_its_pace_beside_slow_rounds() -> None:
    """The lane does not wait for the rounds, so the host is crawled at its delay's pace."""
    urls, report, batches, elapsed, log, requested = paced_beside_slow_rounds()
    assert sorted(requested) == sorted(urls)  # each once
    assert min(gaps(log)) >= 0.5 - SLACK, gaps(log)
    span = max(e.start for e in log) - min(e.start for e in log)
    # 7 gaps of 0.5 s at the delay's pace; one url per 1.2 s round would take 8.4 s or more
    assert span < 6.5, span
    assert elapsed >= 8 * 1.2 - 0.5   # (the rounds themselves did take their time)
    assert report.fetched == 16 and report.deferred == 0 and report.stalls == {}
    assert batches[-1]["done"] is True and deferred_urls(batches) == []
    assert sum(len(b["fetched"]) for b in batches) == 16


@pytest.mark.parametrize("ship_seconds", [0.2, 60.0])
def test_a_delayed_host_is_released_as_soon_as_its_lane_is_done(ship_seconds: float) -> None:
    """The paced host's 8 urls take 3.5 s, the slow rounds 9.6 s: a batch shipped before the
    schedule's end names the host in ``released`` (its queue server frees it for the next
    schedule then), after every one of its pages was shipped; the other host never is. The
    lane's last page is shipped at once with the release, even when no shipment is due for a
    minute (``ship_seconds`` 60)."""
    urls, _, batches, _, _, _ = paced_beside_slow_rounds(ship_seconds=ship_seconds)
    origin = origin_of(urls[0])
    released_at = [i for i, b in enumerate(batches) if b.get("released")]
    assert len(released_at) == 1 and batches[released_at[0]]["released"] == [origin]
    at = released_at[0]
    assert not batches[at]["done"]  # before the schedule's end...
    if ship_seconds < 1:
        assert at < len(batches) - 3  # ...well before it (a shipment each 0.2 s after it)
    paced_pages = sum(1 for b in batches[:at + 1] for row in b["fetched"]
                      if str(row[0]).startswith(origin))
    assert paced_pages == len(urls)


def test_a_schedule_of_delayed_urls_only_makes_progress_defers_the_rest_and_gets_it_back() -> None:
    """Two delayed hosts just requested by an earlier schedule, five urls each and nothing
    else: each lane's first url waits for the delay and is fetched, the schedule waits a
    bounded time for the lanes and hands back what they did not start; the urls handed back,
    scheduled again, are each fetched exactly once."""
    delay = 1.0
    sites = [normal_site(name, pages=6, crawl_delay=delay) for name in ("lane-a", "lane-b")]
    with FixtureServer(sites[0].route, host="127.0.0.4") as a, \
            FixtureServer(sites[1].route, host="127.0.0.5") as b:
        servers = (a, b)
        urls = [server.url(path) for server, site in zip(servers, sites, strict=True)
                for path in site.allowed_paths[:5]]
        asked = time.time()
        last = {origin_of(server.url("/")): asked for server in servers}
        report, batches, elapsed = run_worker(
            [delayed(url, delay, slot) for slot, url in enumerate(urls)], last=last)
        fetched_first = [server.base_url() + e.path for server in servers for e in server.log]
        deferred = deferred_urls(batches)
        # progress: every host's first url was fetched, no sooner than the delay allows
        for server in servers:
            assert server.log, server.name
            assert min(e.time for e in server.log) >= asked + delay - SLACK
        assert deferred, "the lanes had more urls than the bounded wait allows"
        assert not set(deferred) & set(fetched_first)
        assert sorted(fetched_first + deferred) == sorted(urls)
        assert report.deferred == len(deferred) and report.fetched == len(fetched_first)
        assert report.stalls == {} and batches[-1]["stalls"] == {}
        assert batches[-1]["done"] is True
        # bounded: the grace after the (empty) rounds, plus a request already started
        assert elapsed < LANE_GRACE_SECONDS + 2 * delay + 3.0, elapsed
        # the deferred urls come back (as the queue server requeues them) until none is left
        rest, rounds = deferred, 0
        while rest:
            rounds += 1
            assert rounds <= 5
            done_at = time.time()  # the schedule was acknowledged: its last request was before
            _, batches, _ = run_worker(
                [delayed(url, delay, slot) for slot, url in enumerate(rest)],
                last={origin_of(server.url("/")): done_at for server in servers},
                sid=f"s-{rounds + 1}")
            assert batches[-1]["done"] is True
            rest = deferred_urls(batches)
        logs = [list(server.log) for server in servers]
    requested = [server.base_url() + e.path for server, log in zip(servers, logs, strict=True)
                 for e in log]
    assert sorted(requested) == sorted(urls)  # every url exactly once
    for log in logs:
        assert min(gaps(log)) >= delay - SLACK, gaps(log)


def test_redirect_hops_of_a_delayed_url_wait_for_the_delay_and_are_no_stall() -> None:
    """Each hop of a redirect chain to the same host waits for the delay; the waits are not
    download time, so they do not make the host a slow (stalled) host."""
    with FixtureServer(hostile_router(), host="127.0.0.6") as server:
        report, batches, _ = run_worker([delayed(server.url("/redirect/chain/2"), 0.4, 0),
                                         delayed(server.url("/hold?seconds=0"), 0.4, 1)],
                                        slow_seconds=0.3)
        log = list(server.log)
    assert [e.path for e in log] == ["/redirect/chain/2", "/redirect/chain/1",
                                     "/redirect/chain/0", "/hold?seconds=0"]
    assert min(gaps(log)) >= 0.4 - SLACK, gaps(log)
    assert report.fetched == 2 and report.errors == 0 and report.deferred == 0
    assert report.stalls == {} and batches[-1]["stalls"] == {}


def test_lanes_wait_without_holding_threads_and_cancel_keeps_each_lanes_first_url() -> None:
    """Three times as many delayed hosts as lane threads, all just requested: waiting for a
    delay takes no thread, so every host's urls go at the delay's pace together; a cancel
    hands back what no lane has taken, except the first url of a lane that has none yet."""
    delay = 0.5
    hosts = [f"h{i}.test" for i in range(3 * LANE_THREADS)]
    lock = threading.Lock()
    calls: dict[str, list[float]] = {host: [] for host in hosts}
    now = time.time()
    last = dict.fromkeys(hosts, now)

    def fetch(entry: ScheduleEntry) -> FetchResult:
        host = host_of(entry.url)
        with lock:
            calls[host].append(time.time())
        time.sleep(0.01)
        last[host] = time.time()
        return FetchResult(url=entry.url, final_url=entry.url, status=200)

    lanes = DelayLanes(fetch, last, time.time, LANE_THREADS)
    try:
        for host in hosts:
            for k in range(3):
                lanes.add(delayed(f"http://{host}/{k}", delay, k))
        results = []
        while lanes.busy() and time.time() - now < 30:
            lanes.wait(0.25)
            results.extend(lanes.take_results())
        elapsed = time.time() - now
    finally:
        lanes.cancel(keep_first=False)
        lanes.close()
    assert len(results) == 3 * len(hosts)
    for host in hosts:
        times = calls[host]
        assert len(times) == 3 and times[0] >= now + delay - SLACK
        assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= delay - SLACK
    # 3 x 0.5 s at the delay's pace; a thread held per waiting lane would need three turns
    assert elapsed < 3.5, elapsed

    last = {}
    started: list[str] = []

    def slow_fetch(entry: ScheduleEntry) -> FetchResult:
        started.append(entry.url)
        time.sleep(0.05)
        last[host_of(entry.url)] = time.time()
        return FetchResult(url=entry.url, final_url=entry.url, status=200)

    lanes = DelayLanes(slow_fetch, last, time.time, 1)
    try:
        for host in ("a.test", "b.test"):
            for k in range(3):
                lanes.add(delayed(f"http://{host}/{k}", 5.0, k))
        handed_back = lanes.cancel(keep_first=True)
        while lanes.busy():
            lanes.wait(0.25)
            lanes.take_results()
    finally:
        lanes.close()
    # one of the two first urls may have been taken already; both are fetched, nothing else
    assert sorted(started) == ["http://a.test/0", "http://b.test/0"]
    assert sorted(e.url for e in handed_back) == sorted(f"http://{h}/{k}" for h in ("a.test", "b.test")
                                         for k in (1, 2))
