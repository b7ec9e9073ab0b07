from __future__ import annotations

import pytest

from indexer.core.policies import CrawlPolicy
from linkgraph.core import TrustConfig, TrustMethod, TrustSeed, propagate_trust

from .helpers import graph_of

GOOD, GOOD_A, GOOD_B = "https://good.org/", "https://good.org/a", "https://good.org/b"
NEWS, BLOG = "https://news.org/", "https://blog.org/"
SPAM, SPAM1, SPAM2, FARM = ("https://spam.biz/", "https://spam.biz/1", "https://spam.biz/2",
                            "https://farm.biz/")
NEUTRAL, BEHIND_NEUTRAL, ALONE = "https://neutral.org/", "https://neutral.org/x", \
    "https://alone.org/"
MIXED = "https://mixed.org/"

EDGES = [
    (GOOD, GOOD_A), (GOOD, GOOD_B), (GOOD_A, NEWS), (NEWS, BLOG),
    # the spam cluster links among itself, out to a farm, and into the good site
    (SPAM, SPAM1), (SPAM, SPAM2), (SPAM1, SPAM2), (SPAM2, SPAM), (SPAM2, FARM),
    (SPAM1, GOOD_B),
    # the good site links (once, among other links) into the spam cluster
    (GOOD_B, GOOD), (GOOD_B, SPAM1), (GOOD_B, "https://good.org/c"), (GOOD_B, "https://good.org/d"),
    # a page reached from both sides: closer to the spam seed
    (GOOD_A, MIXED), (SPAM, MIXED),
    # a default seed is neutral and passes on nothing, whatever links to it
    (SPAM2, NEUTRAL), (NEUTRAL, BEHIND_NEUTRAL),
]
SEEDS = [TrustSeed(GOOD, CrawlPolicy.FAVOR, 1.0), TrustSeed(SPAM, CrawlPolicy.DISTRUST, 1.0),
         TrustSeed(NEUTRAL, CrawlPolicy.DEFAULT, 1.0), TrustSeed("https://not.crawled/",
                                                            CrawlPolicy.FAVOR, 5.0)]


def _trust(method: TrustMethod) -> dict[str, float]:
    graph = graph_of(EDGES, nodes=[ALONE])
    result = propagate_trust(graph, SEEDS, TrustConfig(method=method))
    assert result.seeds_found == 3
    return {graph.url(i): float(result.trust[i]) for i in range(graph.n)}


@pytest.mark.parametrize("method", list(TrustMethod))
def test_orderings_shared_by_both_methods(method):
    t = _trust(method)
    # trust falls with the distance from the favored seed
    assert t[GOOD] == 1.0
    assert t[GOOD] > t[GOOD_A] > t[NEWS] > t[BLOG] > 0
    # the spam site's link into the good site does not taint a favored page
    assert t[GOOD_B] > 0
    # distrust spreads from the distrusted seed along its links, the favored link does not save
    # a page the spam seed is closer to
    assert t[SPAM] == -1.0
    assert t[SPAM1] < 0 and t[SPAM2] < 0 and t[FARM] < 0 and t[MIXED] < 0
    assert t[SPAM] < t[FARM]
    # pages no seed reaches, and pages behind a default seed, are neutral
    assert t[ALONE] == t[NEUTRAL] == t[BEHIND_NEUTRAL] == 0.0
    # every good page ranks above every spam page
    assert min(t[u] for u in (GOOD, GOOD_A, GOOD_B, NEWS, BLOG)) > \
        max(t[u] for u in (SPAM, SPAM1, SPAM2, FARM, MIXED))


def test_dampening_falls_geometrically():
    t = _trust(TrustMethod.DAMPENING)
    beta = TrustConfig().beta
    assert t[GOOD_A] == pytest.approx(beta)
    assert t[NEWS] == pytest.approx(beta ** 2)
    assert t[BLOG] == pytest.approx(beta ** 3)
    assert t[GOOD_A] == t[GOOD_B]  # the max of the parents, not their number
    assert t[FARM] == pytest.approx(-beta ** 2)


def test_splitting_divides_among_outlinks():
    t = _trust(TrustMethod.SPLITTING)
    beta = TrustConfig().beta
    assert t[GOOD_B] == pytest.approx(beta / 2)  # one of two outlinks of the seed
    assert t["https://good.org/c"] == pytest.approx(beta * beta / 2 / 4)
    assert t[GOOD_A] == pytest.approx(beta / 2)
    assert t[NEWS] == pytest.approx(beta * beta / 4)  # good/a splits between news and mixed
    assert t[BLOG] == pytest.approx(beta ** 3 / 4)
    assert t[BLOG] < t[NEWS]


def test_favor_on_a_tie_and_seed_weight_scale():
    edges = [("https://f/", "https://x/"), ("https://d/", "https://x/"),
             ("https://x/", "https://y/")]
    graph = graph_of(edges)
    seeds = [TrustSeed("https://f/", CrawlPolicy.FAVOR, 2.0),
             TrustSeed("https://d/", CrawlPolicy.DISTRUST, 2.0)]
    result = propagate_trust(graph, seeds)
    x, y = graph.node_id("https://x/"), graph.node_id("https://y/")
    assert result.trust[x] == pytest.approx(2 * 0.85) and result.distrust[x] == 0.0
    assert result.trust[y] > 0
    heavier = [TrustSeed("https://f/", CrawlPolicy.FAVOR, 1.0),
               TrustSeed("https://d/", CrawlPolicy.DISTRUST, 2.0)]
    assert propagate_trust(graph, heavier).trust[y] < 0
