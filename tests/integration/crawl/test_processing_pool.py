"""Page processing in worker processes (crawler.core.fetcher.processing): a page gives the same
documents and links in a pool as in the fetcher's thread, the pool's workers end with it, and a
whole crawl with two processes indexes what a crawl in the fetcher threads indexes."""

from __future__ import annotations

import time

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.fetcher.emit import LinkEmitter
from crawler.core.fetcher.processing import (
    InlineProcessing,
    PageJob,
    ProcessPool,
    page_processing,
)
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.builtin_scrapers import BUILTIN_SCRAPERS
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import ScheduleEntry
from crawler.core.transport.visits import Outcome
from tests.fixtures.sites import FixtureServer, normal_site
from tests.integration.crawl.index_contents import stored_summaries
from tests.processes import alive

PAGE = b"""<html><head><title>Pooled page</title></head><body>
<h1>Set intersection</h1><p>The <b>intersection</b> of two sets holds what both hold.
See <a href="/other.html">the other page</a> and <a href="https://b.example/x">elsewhere</a>.</p>
<p>A second paragraph about frozenset and hashing, long enough to be a sentence of its own.</p>
</body></html>"""


def jobs() -> list[PageJob]:
    return [
        PageJob("https://a.example/page.html", PAGE, 200, {"Content-Type": "text/html"},
                1.7e9, redirects=(("https://a.example/old.html", 301,
                                   "https://a.example/page.html"),)),
        PageJob("https://a.example/empty.html", b"", 200, {"Content-Type": "text/html"}, 1.7e9),
        PageJob("https://a.example/bin", bytes(range(256)) * 8, 200,
                {"Content-Type": "application/octet-stream"}, 1.7e9),
    ]


def test_a_pool_gives_the_documents_and_links_of_inline_processing():
    config = PageProcessingConfig(scrapers=BUILTIN_SCRAPERS)
    inline = InlineProcessing(PageProcessor(config))
    pool = ProcessPool(config, 2)
    try:
        here = [inline.submit(job).result() for job in jobs()]
        there = [future.result(timeout=60) for future in [pool.submit(job) for job in jobs()]]
    finally:
        pool.close()
    assert here == there
    page = here[0]
    assert page.outcome is Outcome.NEW and page.indexable
    kinds = [doc["url"] for _, doc in page.documents]
    assert kinds[0] == "https://a.example/old.html"  # the redirect hop's location first
    assert "https://a.example/page.html" in kinds
    assert {link.url for link in page.links.links} >= {"https://a.example/other.html",
                                                       "https://b.example/x"}


def test_a_pool_given_the_crawl_makes_the_discovered_urls_its_fetcher_would():
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t")
    entry = ScheduleEntry("https://a.example/page.html", 2, 3.0, 0, 0.0, None, 0)
    job = PageJob(**{**{f: getattr(jobs()[0], f) for f in PageJob.__slots__}, "entry": entry})
    pool = ProcessPool(PageProcessingConfig(), 2, crawl)
    try:
        assert pool.emits_links
        output = pool.submit(job).result(timeout=60)
    finally:
        pool.close()
    inline = InlineProcessing(PageProcessor()).submit(job).result()
    assert not InlineProcessing.emits_links and inline.discovered is None
    expected = tuple(LinkEmitter(crawl).discovered(inline.links, entry))
    assert output.links is None and output.discovered == expected
    assert {row[0] for row in expected} >= {"https://a.example/other.html",
                                            "https://b.example/x"}
    assert output.documents == inline.documents


def test_an_unchanged_page_makes_no_documents():
    processor = PageProcessor()
    first = InlineProcessing(processor).submit(jobs()[0]).result()
    again = PageJob(**{**{f: getattr(jobs()[0], f) for f in PageJob.__slots__},
                       "previous_hash": first.text_hash.hex()})
    output = InlineProcessing(processor).submit(again).result()
    assert output.outcome is Outcome.UNCHANGED and output.documents == ()


def test_one_process_means_inline_and_the_workers_end_with_the_pool():
    assert isinstance(page_processing(PageProcessor(), 1), InlineProcessing)
    pool = page_processing(PageProcessor(), 2)
    assert isinstance(pool, ProcessPool)
    pool.submit(jobs()[0]).result(timeout=60)
    workers = pool.pids()
    assert workers
    pool.close()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in workers)


def crawl_pages(tmp_path, seeds, processes):
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t",
                        seeds=tuple(SeedSpec(u) for u in seeds))
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0,
                        read_timeout=2.0, page_deadline=3.0)
    runner = LocalCrawl(crawl, tmp_path, fetch, PageProcessor(), fetchers=2,
                        schedule_size=200, refresh_seconds=0.0, processes=processes)
    try:
        result = runner.run(max_seconds=90)
    finally:
        runner.close()
    assert result.finished
    urls = {(summary["url"], "content_hash" in summary)
            for summary in stored_summaries(result.index_paths[0])}
    return urls, result.documents_indexed


def test_a_crawl_with_two_processes_indexes_what_one_does(tmp_path):
    site = normal_site("pooled", pages=12, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        one, docs_one = crawl_pages(tmp_path / "one", [server.url("/")], 1)
        two, docs_two = crawl_pages(tmp_path / "two", [server.url("/")], 2)
    assert one == two and docs_one == docs_two
    assert sum(1 for _, is_page in one if is_page) >= 12
