"""A fetcher ships its outboxes once the documents and discovered urls in them reach
``ship_bytes`` (besides every
``ship_every`` pages and ``ship_seconds``): a batch stays small whatever the pages hold, so the
memory of every process that carries it stays bounded. Real HTTP on loopback."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.fetcher import ScheduleWorker
from crawler.core.fetcher.outboxes import batch_item_bytes
from crawler.core.http import FetchConfig
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import Schedule, ScheduleEntry
from tests.fixtures.sites import FixtureServer, normal_site

CRAWL = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t")
CONFIG = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0, read_timeout=3.0,
                     page_deadline=5.0)


def crawl_pages(ship_bytes: int, ship_every: int = 1000) -> list[dict[str, Any]]:
    site = normal_site("bytes", pages=12, crawl_delay=0.0)
    batches: list[dict[str, Any]] = []
    with FixtureServer(site.route, host="127.0.0.2") as server:
        entries = tuple(ScheduleEntry(server.url(path), 1, 0.0, 0, 0.0, None, slot)
                        for slot, path in enumerate(site.allowed_paths))
        worker = ScheduleWorker(CRAWL, CONFIG, PageProcessor(), 1,
                                lambda _server, batch: batches.append(batch.to_wire()),
                                ship_every=ship_every, ship_seconds=1000.0,
                                ship_bytes=ship_bytes)
        try:
            worker.run(Schedule("s-1", entries, 0.0, 0.0, 100), 0)
        finally:
            worker.close()
    return batches


def doc_bytes(batch: dict[str, Any]) -> int:
    return sum(len(d["s"]) + len(d["c"]) + len(d["x"]) for d in batch["docs"])


def batch_bytes(batch: dict[str, Any]) -> int:
    return sum(batch_item_bytes(item) for item in [*batch["docs"], *batch["discovered"]])


def test_item_bytes_count_documents_and_discovered_urls() -> None:
    assert batch_item_bytes({"s": "ab", "c": "", "x": "cde"}) == 5
    row = ["https://a.example/x", 1, 0, "https://a.example/", 1.0, 0, False, True, 0.0,
           "normal", 0, "anchor"]
    assert batch_item_bytes(row) == len(row[0]) + len(row[3]) + len(row[11]) + 48


def test_batches_are_cut_at_the_byte_bound_and_nothing_is_lost() -> None:
    whole = crawl_pages(ship_bytes=1 << 30)
    assert len(whole) == 1 and whole[0]["done"]  # one schedule, no other reason to ship
    page = max(doc_bytes({"docs": [d]}) for d in whole[0]["docs"])
    bound = 3 * page
    cut = crawl_pages(ship_bytes=bound)
    assert len(cut) > 2 and cut[-1]["done"] and not any(b["done"] for b in cut[:-1])
    # a batch goes out once its documents and urls pass the bound, not before
    assert all(batch_bytes(b) >= bound for b in cut[:-1])
    assert max(batch_bytes(b) for b in cut) < batch_bytes(whole[0])
    # the same documents and urls in all (the two crawls' servers listen on different ports)
    assert sorted(urlsplit(d["url"]).path for b in cut for d in b["docs"]) == \
        sorted(urlsplit(d["url"]).path for d in whole[0]["docs"])
    assert sorted(urlsplit(d[0]).path for b in cut for d in b["discovered"]) == \
        sorted(urlsplit(d[0]).path for d in whole[0]["discovered"])


def test_a_page_over_the_bound_ships_in_parts_and_is_recorded_fetched_with_the_last() -> None:
    whole = crawl_pages(ship_bytes=1 << 30)
    parts = crawl_pages(ship_bytes=1)  # every document and url goes out as soon as it is made
    assert len(parts) > sum(len(b["docs"]) + len(b["discovered"]) for b in whole) // 2
    key = lambda url: urlsplit(url).path  # noqa: E731 (the two crawls' ports differ)
    assert sorted(key(d["url"]) for b in parts for d in b["docs"]) == \
        sorted(key(d["url"]) for d in whole[0]["docs"])
    assert sorted(key(d[0]) for b in parts for d in b["discovered"]) == \
        sorted(key(d[0]) for d in whole[0]["discovered"])
    fetched_in = {key(row[0]): i for i, b in enumerate(parts) for row in b["fetched"]}
    assert fetched_in.keys() == {key(row[0]) for row in whole[0]["fetched"]}
    for i, batch in enumerate(parts):  # a page's links go out before (or with) its record
        for row in batch["discovered"]:
            assert i <= fetched_in[key(row[3])]


def test_batches_shipped_inside_a_page_are_marked_partial() -> None:
    """A queue server applies a page's parts together (crawler.core.queue_server.page_parts): a
    batch shipped in the middle of a page (its documents passed the bound) says so; one shipped
    between pages, and the schedule's last, do not."""
    whole = crawl_pages(ship_bytes=1 << 30)
    assert not whole[0]["partial"]
    parts = crawl_pages(ship_bytes=1)  # every ship happens inside a page
    assert all(b["partial"] for b in parts[:-1]) and not parts[-1]["partial"]
    between = crawl_pages(ship_bytes=1 << 30, ship_every=1)  # a ship after every page
    assert len(between) > 5 and not any(b["partial"] for b in between)
