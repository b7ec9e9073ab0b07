"""A per-page CPU budget (PageProcessingConfig.cpu_seconds): a crawl whose admin scraper XPath
is quadratic on one page (``//*[count(//p) > 1]`` over thousands of ``<p>``) records that page
as failed, of kind ``too_slow``, indexes the other pages and finishes."""

from __future__ import annotations

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.scrapers import ScraperConfig
from indexer.core.bundle.reader import IndexBundleReader
from tests.fixtures.sites.server import FixtureServer, Request, Response

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
    reader = IndexBundleReader(result.index_paths[0])
    try:
        urls = set()
        for part in reader.partitions:
            for index in range(part.doc_map.n):
                summary = reader.summary(reader.doc_id(part.number, index))
                if summary and "content_hash" in summary:
                    urls.add(summary["url"])
    finally:
        reader.close()
    kinds: dict[str, int] = {}
    for stats in result.stats:
        for kind, count in dict(stats.get("fetch_errors_by_kind") or {}).items():
            kinds[kind] = kinds.get(kind, 0) + int(count)
    return result, urls, kinds


def test_a_pool_crawl_records_the_quadratic_page_too_slow_and_goes_on(tmp_path):
    processor = PageProcessor(PageProcessingConfig(scrapers=(QUADRATIC,), cpu_seconds=1.0))
    with FixtureServer(site) as server:
        result, urls, kinds = crawl(tmp_path, 2, processor, server.url("/"))
    assert result.finished
    assert server.url("/fine.html") in urls and server.url("/") in urls
    assert server.url("/slow.html") not in urls
    assert kinds == {"too_slow": 1}


def test_an_inline_crawl_stops_a_page_spinning_in_python_as_too_slow(tmp_path):
    processor = PageProcessor(PageProcessingConfig(
        indexing_plugins=("tests.fixtures.plugins.SpinningPlugin",), cpu_seconds=1.0))
    with FixtureServer(site) as server:
        result, urls, kinds = crawl(tmp_path, 1, processor, server.url("/"))
    assert result.finished
    assert server.url("/fine.html") in urls and server.url("/") in urls
    assert server.url("/slow.html") not in urls
    assert kinds == {"too_slow": 1}
