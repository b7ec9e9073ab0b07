"""Issue 18: a page that never finishes (one byte per interval, for ever) is abandoned at its
page deadline, and over a whole crawl its url is requested at most three times (the first try
and two retries), against a real trickling server on loopback."""

from __future__ import annotations

import time

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.reader import IndexBundleReader
from tests.fixtures.sites import FixtureServer, Router, html_page, normal_site
from tests.fixtures.sites.sites import html, trickle_route
from tests.integration.crawl.test_core_crawl import find

LOOPBACK = ("127.0.0.0/8",)
DEADLINE = 1.0  # seconds for a whole page
TRICKLE = "/trickle?interval=0.2&size=100000"  # 5 bytes a second: never done in the deadline


def trickling_site() -> tuple[Router, object]:
    """A steady site whose index also links to a page that trickles for ever."""
    site = normal_site("steadytrickle", pages=6, crawl_delay=0.0)
    router = Router()
    router.add("/trickle", trickle_route)
    router.add("/", site.route)
    router.add("/start", lambda request: html(html_page(
        "trickle index", "trickleindexword", ["/", TRICKLE])))
    return router, site


def test_a_never_ending_page_is_abandoned_at_its_deadline_and_retried_at_most_twice(
        tmp_path) -> None:
    router, site = trickling_site()
    with FixtureServer(router, host="127.0.0.1") as server:
        crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t",
                            seeds=(SeedSpec(server.url("/start")),))
        # the read timeout well above the deadline: on a loaded machine the trickling server
        # can miss a second, and a read timeout is a failed page, not an abandoned one
        fetch = FetchConfig(allowed_networks=LOOPBACK, connect_timeout=1.0,
                            read_timeout=3 * DEADLINE, page_deadline=DEADLINE)
        # small schedules, so the deferred url comes back in many of them
        runner = LocalCrawl(crawl, tmp_path, fetch, PageProcessor(), fetchers=1,
                            schedule_size=3, refresh_seconds=0.0,
                            worker_options={"slow_seconds": 0.5})
        started = time.monotonic()
        try:
            result = runner.run(max_seconds=60)
            elapsed = time.monotonic() - started
        finally:
            runner.close()
        tries = [e for e in server.log if e.path == TRICKLE]
    assert result.finished, elapsed
    assert 1 <= len(tries) <= 3, [(e.start, e.end) for e in tries]
    for entry in tries:  # each try was given up at the deadline (and the server saw it)
        assert entry.end is not None and entry.end - entry.start < DEADLINE + 1.0
    (stats,) = result.stats
    # Given up either way, and never requested again: after its third try, or, when its
    # deadline came before its schedule ended (likely on a loaded machine), as a failed page
    # (a failed page is not retried): at its deadline, or by the read timeout when the loaded
    # machine let the trickle pause past it (each try still ended at the deadline, above).
    failed = sum(stats["fetch_errors_by_kind"].values())
    assert stats["abandoned_urls"] == 1 or failed >= 1, stats
    assert stats["dropped_hosts"] == {}  # one bad page does not cost the host its crawl
    assert elapsed < 30, elapsed
    readers = [IndexBundleReader(path) for path in result.index_paths]
    for page in site.pages.values():
        if page.allowed:
            assert find(readers, page.word) >= 1, page.path
