"""Seed policies kept inside their registered domain (issue 35, item 5; seed 004: "or perhaps
only for pages belonging to the same domain"): in the crawl, a link that leaves the page's
domain carries the default policy; in trust propagation, no favor or distrust crosses a
domain."""

from __future__ import annotations

import pytest

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.definition.policy import domain_scoped, same_domain
from crawler.core.fetcher.emit import LinkEmitter
from crawler.core.fetcher.processing import PageLinks
from crawler.core.processing.page import Link
from crawler.core.scheduler import ScheduleEntry
from crawler.core.transport.wire import discovered_from_wire
from indexer.core.policies import CrawlPolicy
from linkgraph.core import TrustConfig, TrustMethod, TrustSeed, propagate_trust

from ..linkgraph.helpers import graph_of

FAVOR, DEFAULT, DISTRUST = CrawlPolicy.FAVOR, CrawlPolicy.DEFAULT, CrawlPolicy.DISTRUST


def test_same_domain_reads_the_public_suffix_list():
    assert same_domain("https://docs.python.org/3/", "https://wiki.python.org/")
    assert not same_domain("https://a.com.au/", "https://b.com.au/")
    assert not same_domain("https://x.example/", "not a url")


def test_a_link_out_of_the_domain_carries_the_default():
    assert domain_scoped((FAVOR, 2), "https://www.good.org/a", "https://docs.good.org/b") == \
        (FAVOR, 2)
    assert domain_scoped((FAVOR, 2), "https://www.good.org/a", "https://other.net/") == \
        (DEFAULT, 0)
    assert domain_scoped((DISTRUST, 1), "https://spam.biz/", "https://good.org/") == \
        (DEFAULT, 0)
    assert domain_scoped((DEFAULT, 3), "https://spam.biz/", "https://good.org/") == (DEFAULT, 3)


def _policies(within_domain: bool) -> dict[str, tuple[str, int]]:
    crawl = CrawlConfig(crawl_id=1, timestamp=1, name="t", policy_within_domain=within_domain)
    page = PageLinks("https://www.good.org/", (Link("https://www.good.org/a"),
                                               Link("https://blog.good.org/b"),
                                               Link("https://other.net/c")), {}, True, False)
    entry = ScheduleEntry(page.url, 0, 1.0, 0, 0.0, None, 0, policy="favor", policy_depth=0)
    rows = [discovered_from_wire(row) for row in LinkEmitter(crawl).discovered(page, entry)]
    return {row.url: (row.policy, row.policy_depth) for row in rows}


def test_the_fetchers_emitter_keeps_a_favored_sites_policy_at_home():
    assert _policies(False) == {"https://www.good.org/a": ("favor", 1),
                                "https://blog.good.org/b": ("favor", 1),
                                "https://other.net/c": ("favor", 1)}
    assert _policies(True) == {"https://www.good.org/a": ("favor", 1),
                               "https://blog.good.org/b": ("favor", 1),
                               "https://other.net/c": ("default", 0)}


@pytest.mark.parametrize("method", list(TrustMethod))
def test_trust_stays_in_the_seeds_domain(method):
    graph = graph_of([("https://good.org/", "https://good.org/a"),
                      ("https://good.org/a", "https://docs.good.org/b"),
                      ("https://good.org/a", "https://cited.net/"),
                      ("https://spam.biz/", "https://victim.org/")])
    seeds = [TrustSeed("https://good.org/", FAVOR, 1.0),
             TrustSeed("https://spam.biz/", DISTRUST, 1.0)]
    everywhere = propagate_trust(graph, seeds, TrustConfig(method=method))
    at_home = propagate_trust(graph, seeds, TrustConfig(method=method, within_domain=True))

    def trust(result, url):
        return result.trust[graph.node_id(url)]

    for url in ("https://good.org/a", "https://docs.good.org/b"):  # at home: unchanged
        assert trust(at_home, url) == pytest.approx(trust(everywhere, url))
        assert trust(at_home, url) > 0
    assert trust(everywhere, "https://cited.net/") > 0
    assert trust(everywhere, "https://victim.org/") < 0
    assert trust(at_home, "https://cited.net/") == 0
    assert trust(at_home, "https://victim.org/") == 0
