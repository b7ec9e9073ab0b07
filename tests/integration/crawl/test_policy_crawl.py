"""Seed policies in a real crawl (issue 9): favor, default and distrust spread from each seed
through the pages it leads to, change what is queued and in which order, and switch on the way
when the page processor marks a page as a link farm (a scraper's ``crawl_policy`` field).

The fixture web: three hosts on loopback, each a chain of pages ``/n0.html -> /n1.html -> ...
/n5.html``. One fetcher, schedules of one url: the order the servers see is the queue's order.
"""

from __future__ import annotations

import pytest

from crawler.core.definition.crawl import (
    CrawlConfig,
    CrawlOrder,
    CrawlTimeOptions,
    RobotsBehaviour,
    ScraperSpec,
    SeedSpec,
)
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.process import PageProcessor
from indexer.core.policies import CrawlPolicy
from tests.fixtures.sites import FixtureServer, Response, html_page

CHAIN = 6
FARM = ScraperSpec(name="link farm", signature="LINKFARM",
                   extract_fields=(("crawl_policy", ":=distrust"),))


def chain(farm_page: int | None = None):
    def route(request):
        if request.path == "/robots.txt":
            return Response(404, b"", {"Content-Type": "text/plain"})
        name = request.path.strip("/").removesuffix(".html")
        if not name.startswith("n") or not name[1:].isdigit() or int(name[1:]) >= CHAIN:
            return Response(404, b"no", {"Content-Type": "text/plain"})
        i = int(name[1:])
        links = [f"/n{i + 1}.html"] if i + 1 < CHAIN else []
        marker = " LINKFARM" if i == farm_page else ""
        return Response(200, html_page(f"page {i}{marker}", f"chain page {i}{marker}", links),
                        {"Content-Type": "text/html"})
    return route


@pytest.fixture
def web():
    servers = {
        "good": FixtureServer(chain(), host="127.0.0.2").start(),
        "spam": FixtureServer(chain(), host="127.0.0.3").start(),
        "plain": FixtureServer(chain(farm_page=2), host="127.0.0.4").start(),
    }
    yield servers
    for server in servers.values():
        server.stop()


def crawl(tmp_path, servers, policies, max_pages=0, favor_tier_bonus=2):
    seeds = tuple(SeedSpec(servers[name].url("/n0.html"), policies.get(name,
                                                                     CrawlPolicy.DEFAULT))
                  for name in ("good", "spam", "plain"))
    options = CrawlTimeOptions(robots=RobotsBehaviour.IGNORE, scrapers=(FARM,))
    config = CrawlConfig(crawl_id=1, timestamp=1700000001, name="policies",
                         order=CrawlOrder.BREADTH_FIRST, seeds=seeds, page_options=options,
                         max_pages=max_pages, distrust_max_depth=1,
                         favor_tier_bonus=favor_tier_bonus)
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0,
                        read_timeout=2.0, page_deadline=3.0)
    runner = LocalCrawl(config, tmp_path, fetch,
                        PageProcessor(PageProcessingConfig.from_options(options)),
                        fetchers=1, schedule_size=1, refresh_seconds=0.0)
    try:
        result = runner.run(max_seconds=90)
    finally:
        runner.close()
    assert result.finished or max_pages, "crawl did not finish in time"
    fetched = sorted(((entry.start, name, entry.path) for name, server in servers.items()
                      for entry in server.log if entry.path.endswith(".html")))
    return [(name, path) for _, name, path in fetched], result.stats[0]


def pages(order, name):
    return [path for host, path in order if host == name]


def test_without_policies_every_chain_is_crawled_breadth_first(tmp_path, web):
    order, _ = crawl(tmp_path, web, {})
    all_pages = [f"/n{i}.html" for i in range(CHAIN)]
    assert pages(order, "good") == all_pages and pages(order, "spam") == all_pages
    # the link farm at /n2 switches its links to distrust: /n3 (distrust depth 1) is queued,
    # /n4 (depth 2 > distrust_max_depth 1) is not
    assert pages(order, "plain") == all_pages[:4]
    trusted = [int(path[2]) for item, path in order if item != "plain" or path < "/n3"]
    assert trusted == sorted(trusted)  # breadth first: depth by depth
    # the distrusted page waits two tiers: after the depth-4 pages of the other chains
    position = {item: i for i, item in enumerate(order)}
    assert position[("plain", "/n3.html")] > position[("good", "/n4.html")]
    assert position[("plain", "/n3.html")] > position[("spam", "/n4.html")]


def test_policies_change_what_is_queued_and_when(tmp_path, web):
    order, stats = crawl(tmp_path, web, {"good": CrawlPolicy.FAVOR,
                                         "spam": CrawlPolicy.DISTRUST})
    # distrust from the seed: one link deep, then dropped
    assert pages(order, "spam") == ["/n0.html", "/n1.html"]
    assert stats["dropped"]["distrust"] >= 2
    # favor runs two tiers ahead: the favored chain reaches depth k+1 before the default one
    # reaches depth k, and the distrusted page (tier 1 + 2) comes after the depth-2 pages
    position = {item: i for i, item in enumerate(order)}
    for k in range(1, 4):
        assert position[("good", f"/n{k + 1}.html")] < position[("plain", f"/n{k}.html")]
    assert position[("spam", "/n1.html")] > position[("plain", "/n2.html")]
    assert position[("spam", "/n1.html")] > position[("good", "/n3.html")]
    assert pages(order, "good") == [f"/n{i}.html" for i in range(CHAIN)]


def test_a_page_limit_spends_the_budget_on_favored_pages(tmp_path, web):
    order, _ = crawl(tmp_path, web, {"good": CrawlPolicy.FAVOR}, max_pages=9)
    assert len(pages(order, "good")) > len(pages(order, "plain"))
    assert len(pages(order, "good")) > len(pages(order, "spam"))
