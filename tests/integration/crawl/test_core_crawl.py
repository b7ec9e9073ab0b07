"""A whole crawl in one process: queue servers (scheduler + indexer) and schedule workers
(fetch + process) wired together through the real spools, against fixture sites on loopback.
The Celery and process glue is tested separately; this pins the crawl's behaviour."""

from __future__ import annotations

import time

import pytest

from crawler.core.definition.crawl import CrawlConfig, CrawlOrder, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.text import TextAnalyzer
from tests.fixtures.sites import FixtureServer, hostile_router, normal_site


def run_crawl(tmp_path, seeds, num_servers, order=CrawlOrder.HOST_BUDGETING, max_depth=-1,
              max_pages=0, timeout=90.0, fetch_overrides=None):
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t", order=order,
                        max_depth=max_depth, max_pages=max_pages,
                        seeds=tuple(SeedSpec(u) for u in seeds))
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0,
                        read_timeout=2.0, page_deadline=3.0, **(fetch_overrides or {}))
    runner = LocalCrawl(crawl, tmp_path, fetch, PageProcessor(), num_servers=num_servers,
                        fetchers=2, schedule_size=200, refresh_seconds=0.0)
    try:
        result = runner.run(max_seconds=timeout)
    finally:
        runner.close()
    assert result.finished, "crawl did not finish in time"
    readers = [IndexBundleReader(path) for path in result.index_paths]
    return crawl, list(result.stats), readers


def indexed_urls(readers):
    """Urls of the fetched pages (not link documents) in the indexes."""
    urls = set()
    for reader in readers:
        for part in reader.partitions:
            for index in range(part.doc_map.n):
                summary = reader.summary(reader.doc_id(part.number, index))
                if summary and "content_hash" in summary and not summary.get("location"):
                    urls.add(summary["url"])
    return urls


def find(readers, word):
    analyzer = TextAnalyzer()
    (term,) = analyzer.query_terms(word, "en")
    return sum(reader.term_stats(term).docs for reader in readers)


def test_one_and_three_queue_servers_index_the_same_urls(tmp_path):
    sites = [normal_site(name, pages=5, crawl_delay=0.0) for name in ("one", "two", "three")]
    servers = [FixtureServer(site.route).start() for site in sites]
    try:
        seeds = [server.url("/") for server in servers]
        _, _, single = run_crawl(tmp_path / "single", seeds, 1)
        _, _, sharded = run_crawl(tmp_path / "sharded", seeds, 3)
        assert indexed_urls(single) == indexed_urls(sharded)
        assert len(indexed_urls(single)) >= 3 * 5
    finally:
        for server in servers:
            server.stop()


@pytest.mark.parametrize("num_servers", [1, 3])
def test_crawl_indexes_allowed_pages_and_respects_robots(tmp_path, num_servers):
    site_a = normal_site("alpha", pages=8, crawl_delay=0.0)
    site_b = normal_site("beta", pages=6, crawl_delay=0.3)
    with FixtureServer(site_a.route) as a, FixtureServer(site_b.route) as b:
        seeds = [a.url("/"), b.url("/")]
        _, stats, readers = run_crawl(tmp_path, seeds, num_servers)
        for site, server in ((site_a, a), (site_b, b)):
            for page in site.pages.values():
                if page.allowed:
                    assert find(readers, page.word) >= 1, (server.url(page.path), page.word)
                else:
                    assert find(readers, page.word) == 0
            assert server.requests_for("/private/") == []
            assert server.requests_for("/robots.txt")
        delayed = [e.start for e in b.log if e.path != "/robots.txt"]
        gaps = [y - x for x, y in zip(delayed, delayed[1:], strict=False)]
        assert gaps and min(gaps) >= 0.3 - 0.02, gaps
        assert sum(s["documents_indexed"] for s in stats) > 0


def test_robots_rules_for_the_crawlers_own_name_are_obeyed(tmp_path):
    """robots.txt groups name the crawler by its user agent's first word (YioopyBot), not
    only by ``*``; its Crawl-delay is the one for that group."""
    site = normal_site("named", pages=4, crawl_delay=0.2, agent="YioopyBot")
    with FixtureServer(site.route) as server:
        run_crawl(tmp_path, [server.url("/")], 1)
        assert server.requests_for("/private/") == []
        fetched = [e.start for e in server.log if e.path != "/robots.txt"]
        gaps = [y - x for x, y in zip(fetched, fetched[1:], strict=False)]
        assert len(fetched) >= 4 and min(gaps) >= 0.2 - 0.02, gaps


def test_trap_stays_within_depth_and_hostile_servers_cost_bounded_time(tmp_path):
    with FixtureServer(hostile_router()) as hostile:
        seeds = [hostile.url("/trap/1"), hostile.url("/trickle?interval=1&size=100"),
                 hostile.url("/endless-headers?interval=0"), hostile.url("/big?mb=50"),
                 hostile.url("/gzip-bomb?gb=5"), hostile.url("/redirect/loop/a"),
                 hostile.url("/status/500"), hostile.url("/status/404"),
                 hostile.url("/redirect/chain/3")]
        started = time.monotonic()
        _, stats, readers = run_crawl(tmp_path, seeds, 1, max_depth=3, timeout=60)
        assert time.monotonic() - started < 55  # the trickle alone would take 100 s
        trap = [e.path for e in hostile.log if e.path.startswith("/trap/")]
        assert trap and max(p.count("/") for p in trap) - 1 <= 1 + 3
        assert stats[0]["fetch_errors"] >= 2
