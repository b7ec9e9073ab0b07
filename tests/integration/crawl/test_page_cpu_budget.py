"""A per-page CPU budget (PageProcessingConfig.cpu_seconds): a crawl whose admin scraper XPath
is quadratic on one page (``//*[count(//p) > 1]`` over thousands of ``<p>``) records that page
as failed, of kind ``too_slow``, indexes the other pages and finishes."""

from __future__ import annotations

import pytest

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.scrapers import ScraperConfig
from tests.fixtures.sites.server import FixtureServer, Request, Response
from tests.integration.crawl.index_contents import stored_summaries

HTML = {"Content-Type": "text/html; charset=utf-8"}
QUADRATIC = ScraperConfig(name="Quadratic", signature="//*[count(//p) > 1]")


def site(request: Request) -> Response:
    if request.path == "/":
        return Response(200, b"<html><head><title>Home</title></head><body><p>Start here: "
                        b"<a href='/fine.html'>a fine page</a> and "
                        b"<a href='/slow.html'>a slow page</a>.</p></body></html>", HTML)
    if request.path == "/fine.html":
        return Response(200, b"<html><head><title>Fine page</title></head><body>"
                        b"<p>Hedgehogs forage at night in hedges and gardens.</p></body></html>",
                        HTML)
    if request.path == "/slow.html":
        paragraphs = b"".join(b"<p>w%d</p>" % n for n in range(30000))
        return Response(200, b"<html><head><title>Slow page</title></head><body>" + paragraphs
                        + b"</body></html>", HTML)
    return Response(404, b"missing")


def crawl(tmp_path, processes: int, processor: PageProcessor, seed: str):
    config = CrawlConfig(crawl_id=1, timestamp=1700000000, name="budget",
                         seeds=(SeedSpec(seed),))
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0,
                        read_timeout=5.0, page_deadline=10.0)
    runner = LocalCrawl(config, tmp_path, fetch, processor, fetchers=2, schedule_size=50,
                        refresh_seconds=0.0, processes=processes)
    try:
        result = runner.run(max_seconds=120)
    finally:
        runner.close()
    urls = {summary["url"] for summary in stored_summaries(result.index_paths[0])
            if "content_hash" in summary}
    kinds: dict[str, int] = {}
    for stats in result.stats:
        for kind, count in dict(stats.get("fetch_errors_by_kind") or {}).items():
            kinds[kind] = kinds.get(kind, 0) + int(count)
    return result, urls, kinds


@pytest.mark.parametrize(("processes", "config"), [
    # a pool crawl: the quadratic XPath of a scraper, in libxml2, killed with its worker
    (2, PageProcessingConfig(scrapers=(QUADRATIC,), cpu_seconds=1.0)),
    # an inline crawl: a plugin spinning in Python, stopped in the fetcher's own thread
    (1, PageProcessingConfig(indexing_plugins=("tests.fixtures.plugins.SpinningPlugin",),
                             cpu_seconds=1.0)),
], ids=["pool-quadratic-xpath", "inline-spinning-plugin"])
def test_a_page_over_its_cpu_budget_is_too_slow_and_the_crawl_goes_on(tmp_path, processes,
                                                                      config):
    with FixtureServer(site) as server:
        result, urls, kinds = crawl(tmp_path, processes, PageProcessor(config),
                                    server.url("/"))
    assert result.finished
    assert server.url("/fine.html") in urls and server.url("/") in urls
    assert server.url("/slow.html") not in urls
    assert kinds == {"too_slow": 1}
