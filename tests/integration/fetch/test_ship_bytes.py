"""A fetcher ships its outboxes once the documents in them reach ``ship_bytes`` (besides every
``ship_every`` pages and ``ship_seconds``): a batch stays small whatever the pages hold, so the
memory of every process that carries it stays bounded. Real HTTP on loopback."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from crawler.core.crawl import CrawlConfig
from crawler.core.fetch import FetchConfig
from crawler.core.fetch_worker import ScheduleWorker
from crawler.core.process import PageProcessor
from crawler.core.scheduler import Schedule, ScheduleEntry
from tests.fixtures.sites import FixtureServer, normal_site

CRAWL = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t")
CONFIG = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0, read_timeout=3.0,
                     page_deadline=5.0)


def crawl_pages(ship_bytes: int) -> list[dict[str, Any]]:
    site = normal_site("bytes", pages=12, crawl_delay=0.0)
    batches: list[dict[str, Any]] = []
    with FixtureServer(site.route, host="127.0.0.2") as server:
        entries = tuple(ScheduleEntry(server.url(path), 1, 0.0, 0, 0.0, None, slot)
                        for slot, path in enumerate(site.allowed_paths))
        worker = ScheduleWorker(CRAWL, CONFIG, PageProcessor(), 1,
                                lambda _server, batch: batches.append(batch),
                                ship_every=1000, ship_seconds=1000.0, ship_bytes=ship_bytes)
        try:
            worker.run(Schedule("s-1", entries, 0.0, 0.0, 100), 0)
        finally:
            worker.close()
    return batches


def doc_bytes(batch: dict[str, Any]) -> int:
    return sum(len(d["s"]) + len(d["c"]) + len(d["x"]) for d in batch["docs"])


def test_batches_are_cut_at_the_byte_bound_and_nothing_is_lost() -> None:
    whole = crawl_pages(ship_bytes=1 << 30)
    assert len(whole) == 1 and whole[0]["done"]  # one schedule, no other reason to ship
    page = max(doc_bytes({"docs": [d]}) for d in whole[0]["docs"])
    bound = 3 * page
    cut = crawl_pages(ship_bytes=bound)
    assert len(cut) > 2 and cut[-1]["done"] and not any(b["done"] for b in cut[:-1])
    # a batch goes out once its documents pass the bound, not before
    assert all(doc_bytes(b) >= bound for b in cut[:-1])
    assert max(doc_bytes(b) for b in cut) < doc_bytes(whole[0])
    # the same documents in all (the two crawls' servers listen on different ports)
    assert sorted(urlsplit(d["url"]).path for b in cut for d in b["docs"]) == \
        sorted(urlsplit(d["url"]).path for d in whole[0]["docs"])
