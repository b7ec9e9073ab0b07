"""The fetcher's side of the admin's url pages (issue 19, item 3), in a whole crawl in one
process (``LocalCrawl``) against loopback sites: every download becomes a fetch-log row
(status, bytes), a url whose host the egress allow-list refuses a refused row with the
``egress`` reason, and a page whose robots meta says noindex a ``noindex`` row."""

from __future__ import annotations

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.process import PageProcessor
from tests.fixtures.sites import FixtureServer, Response
from tests.fixtures.sites.sites import html, html_page


def site(request):
    if request.path == "/robots.txt":
        return Response(404, b"", {"Content-Type": "text/plain"})
    if request.path == "/hidden.html":
        return html(b'<html><head><meta name="robots" content="noindex"><title>h</title>'
                    b"</head><body><p>not for the index</p></body></html>")
    return html(html_page("home", "the home page", ["/hidden.html"]))


def test_fetch_log_egress_and_noindex_rows(tmp_path):
    with FixtureServer(site) as allowed, FixtureServer(site, host="127.0.0.2") as refused:
        crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t", seeds=(
            SeedSpec(allowed.url("/")), SeedSpec(refused.url("/"))))
        fetch = FetchConfig(allowed_networks=("127.0.0.1/32",), connect_timeout=2.0,
                            read_timeout=2.0, page_deadline=3.0)
        runner = LocalCrawl(crawl, tmp_path, fetch, PageProcessor(), fetchers=1,
                            schedule_size=50, refresh_seconds=0.0)
        try:
            assert runner.run(max_seconds=60).finished
            (activity,) = [s.take_activity() for s in runner.servers]
        finally:
            runner.close()
        assert refused.log == []
    rows = {r.url: (r.status, r.size > 0, r.error) for r in activity.fetched}
    assert rows[allowed.url("/")] == (200, True, "")
    assert rows[allowed.url("/hidden.html")] == (200, True, "")
    assert rows[refused.url("/robots.txt")] == (0, False, "egress_refused")
    reasons = {(r.reason, r.url) for r in activity.refused}
    assert ("egress", refused.url("/robots.txt")) in reasons
    assert ("noindex", allowed.url("/hidden.html")) in reasons
    assert ("robots", refused.url("/")) in reasons  # its robots.txt failed: host disallowed
    host = activity.hosts[allowed.url("/").rstrip("/")]
    assert host.requests == 3 and host.errors == 0  # robots.txt, /, /hidden.html
