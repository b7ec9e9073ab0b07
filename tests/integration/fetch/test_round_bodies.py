"""A fetcher downloads the next round while it processes this one, unless this round's bodies
are big (AHEAD_BODY_BYTES): then it handles them first, and lets each body go once handled, so
that two rounds of an API reference's biggest pages are never in memory at once. Real HTTP on
loopback; the order of downloads and page handling is recorded around the worker's own
methods."""

from __future__ import annotations

import threading
import time

import pytest

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.fetcher import ScheduleWorker
from crawler.core.fetcher import rounds as rounds_module
from crawler.core.http import FetchConfig
from crawler.core.http import round as fetch_round_module
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import Schedule, ScheduleEntry
from tests.fixtures.sites import FixtureServer
from tests.fixtures.sites.server import Request, Response

CRAWL = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t")
CONFIG = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0, read_timeout=3.0,
                     page_deadline=5.0)
PAGES, ROUND = 9, 3
PAGE_BYTES = 200_000


def route(request: Request) -> Response:
    if request.path == "/robots.txt":
        return Response(404)
    if request.path == "/small":
        return Response(200, b"<html><body><p>small page</p></body></html>",
                        {"Content-Type": "text/html"})
    words = f"<p>{request.path.strip('/')} words here</p>" * (PAGE_BYTES // 30)
    return Response(200, f"<html><body>{words}</body></html>".encode(),
                    {"Content-Type": "text/html"})


def crawl_events(monkeypatch: pytest.MonkeyPatch, ahead_bytes: int) -> list[tuple[str, str]]:
    """(event, path) in order: "fetch" when a round's downloads start (its first url),
    "handle" when a page is handled."""
    monkeypatch.setattr(rounds_module, "AHEAD_BODY_BYTES", ahead_bytes)
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    with FixtureServer(route, host="127.0.0.2") as server:
        entries = tuple(ScheduleEntry(server.url(f"/p{i}"), 1, 0.0, 0, 0.0, None, i)
                        for i in range(PAGES))
        worker = ScheduleWorker(CRAWL, CONFIG, PageProcessor(), 1, lambda _s, _b: None,
                                ship_every=1000, ship_seconds=1000.0)
        fetch_plain, start = worker._download_round, worker._pages.start

        def fetch_round(round_entries):
            with lock:
                events.append(("fetch", round_entries[0].url.rsplit("/", 1)[1]))
            return fetch_plain(round_entries)

        def handle_page(entry, result, *args):
            with lock:
                events.append(("handle", entry.url.rsplit("/", 1)[1]))
            if entry.url.endswith("/p0"):
                time.sleep(0.3)  # time for a round downloading ahead to be under way
            return start(entry, result, *args)

        monkeypatch.setattr(worker, "_download_round", fetch_round)
        monkeypatch.setattr(worker._pages, "start", handle_page)
        try:
            worker.run(Schedule("s-1", entries, 0.0, 0.0, ROUND), 0)
        finally:
            worker.close()
    return events


def test_big_rounds_are_handled_before_the_next_downloads(monkeypatch):
    events = crawl_events(monkeypatch, ahead_bytes=2 * PAGE_BYTES)  # a round holds ~3 pages
    assert [e for e in events if e[0] == "fetch"] == [("fetch", "p0"), ("fetch", "p3"),
                                                      ("fetch", "p6")]
    assert sorted(p for e, p in events if e == "handle") == [f"p{i}" for i in range(PAGES)]
    for first in ("p3", "p6"):  # every page of the round before was handled first
        at = events.index(("fetch", first))
        assert len([e for e in events[:at] if e[0] == "handle"]) == int(first[1:])


def test_small_rounds_download_ahead(monkeypatch):
    events = crawl_events(monkeypatch, ahead_bytes=100 * PAGE_BYTES)
    # the second round starts while the first round's pages are being handled
    assert events.index(("fetch", "p3")) < events.index(("handle", "p1"))
    assert sorted(p for e, p in events if e == "handle") == [f"p{i}" for i in range(PAGES)]


def test_long_bodies_wait_deflated_and_are_handled_whole(monkeypatch):
    """A body of PACK_BODY_BYTES or more waits for its turn deflated, and is handled with
    every byte; shorter ones wait as they came."""
    monkeypatch.setattr(fetch_round_module, "PACK_BODY_BYTES", PAGE_BYTES // 2)
    waiting: list[tuple[str, int]] = []
    handled: dict[str, bytes] = {}
    with FixtureServer(route, host="127.0.0.2") as server:
        paths = [f"/p{i}" for i in range(4)] + ["/small"]
        entries = tuple(ScheduleEntry(server.url(p), 1, 0.0, 0, 0.0, None, i)
                        for i, p in enumerate(paths))
        worker = ScheduleWorker(CRAWL, CONFIG, PageProcessor(), 1, lambda _s, _b: None,
                                ship_every=1000, ship_seconds=1000.0)
        fetch_plain, start = worker._download_round, worker._pages.start

        def fetch_round(round_entries):
            results = fetch_plain(round_entries)
            waiting.extend((type(r).__name__, fetch_round_module.held_bytes(r)) for r in results)
            return results

        def handle_page(entry, result, *args):
            handled[entry.url.rsplit("/", 1)[1]] = result.body
            return start(entry, result, *args)

        monkeypatch.setattr(worker, "_download_round", fetch_round)
        monkeypatch.setattr(worker._pages, "start", handle_page)
        try:
            report = worker.run(Schedule("s-1", entries, 0.0, 0.0, 10), 0)
        finally:
            worker.close()
    assert report.fetched == 5
    packed = [held for kind, held in waiting if kind == "PackedResult"]
    assert len(packed) == 4 and all(held < PAGE_BYTES // 20 for held in packed)
    assert ("FetchResult", 43) in waiting  # a short page: kept as it came
    assert handled["small"] == b"<html><body><p>small page</p></body></html>"
    for i in range(4):
        page = route(Request("GET", f"/p{i}", "", {}, "http", threading.Event())).body
        assert handled[f"p{i}"] == page
