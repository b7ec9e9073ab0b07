"""Same-domain limits in LinkRank and trust (issue 35, item 1): a link farm of fifty pages on
fifty subdomains of one domain cannot lift its target above a page that three independent
sites link, in LinkRank or in search results; internal links are weighed down, not dropped,
so a site's own structure still ranks its pages."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.core.policies import CrawlPolicy
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import write_scores
from indexer.core.urls import hashes_of
from linkgraph.core import PLAIN_PAGERANK, LinkRankConfig, TrustSeed, WebGraph, linkrank
from linkgraph.core.domain_limits import domain_link_shares, inlink_discounts
from linkgraph.core.trust import TrustConfig, TrustMethod, propagate_trust
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from ..ranking.helpers import build, text_doc
from .helpers import graph_of

FARM_TARGET = "https://shop.example/widgets.html"
HONEST = "https://honest.example/widgets.html"
FARM = [f"https://s{i}.farm.example/" for i in range(50)]
SITES = [f"https://site{i}.org/" for i in range(3)]


def farm_web(target: str = FARM_TARGET, interlinked: bool = False) -> WebGraph:
    """The farm's 50 pages link ``target``; three independent sites link HONEST; a ring of
    ordinary pages around them."""
    edges = [(page, target) for page in FARM]
    if interlinked:
        edges += [(a, b) for a in FARM for b in FARM if a != b]
    edges += [(site, HONEST) for site in SITES]
    edges += [(f"https://w{i}.net/", f"https://w{(i + 1) % 20}.net/") for i in range(20)]
    return graph_of(edges)


def relative(graph: WebGraph, config: LinkRankConfig) -> np.ndarray:
    return linkrank(graph, config).scores * graph.n


@pytest.mark.parametrize("target", [FARM_TARGET, "https://shop.farm.example/widgets.html"])
@pytest.mark.parametrize("interlinked", [False, True])
def test_the_honest_page_outranks_the_farms_target(target, interlinked):
    graph = farm_web(target, interlinked)
    honest, farmed = graph.node_id(HONEST), graph.node_id(target)
    plain = relative(graph, PLAIN_PAGERANK)
    if not interlinked:  # plain PageRank is bought by the farm's page count
        assert plain[farmed] > 5 * plain[honest]
    limited = relative(graph, LinkRankConfig())
    assert limited[honest] > 1.5 * limited[farmed]
    # the farm's 50 links give its target about one link's worth
    assert limited[farmed] < 1.0


def _inlinks(graph: WebGraph, values: np.ndarray, url: str) -> dict[str, float]:
    """``values`` (one per inlink) of the inlinks of ``url``, by source url."""
    node = graph.node_id(url)
    rows = slice(int(graph.in_ptr[node]), int(graph.in_ptr[node + 1]))
    return dict(zip(graph.urls(graph.in_idx[rows]), values[rows].tolist(), strict=True))


def test_shares_count_one_domains_links_to_a_page_as_one():
    target = "https://t.example/"
    graph = graph_of([("https://a.x.com/", target), ("https://b.x.com/", target),
                      ("https://x.com/", target), ("https://y.org/", target),
                      ("https://t.example/a", target),
                      ("https://a.x.com/", "https://z.example/")])
    third = pytest.approx(1 / 3)
    assert _inlinks(graph, domain_link_shares(graph, 1.0), target) == {
        "https://a.x.com/": third, "https://b.x.com/": third, "https://x.com/": third,
        "https://y.org/": 1.0, "https://t.example/a": 1.0}
    # a.x.com's only link to z.example is not limited
    assert _inlinks(graph, domain_link_shares(graph, 1.0), "https://z.example/") == {
        "https://a.x.com/": 1.0}
    two_thirds = pytest.approx(2 / 3)
    assert _inlinks(graph, domain_link_shares(graph, 2.0), target)["https://x.com/"] == \
        two_thirds
    assert domain_link_shares(graph, 0.0) is None


def test_internal_links_are_weighed_not_dropped():
    graph = graph_of([("https://www.site.org/a", "https://www.site.org/b"),
                      ("https://docs.site.org/", "https://www.site.org/b"),
                      ("https://other.net/", "https://www.site.org/b")])
    weights = inlink_discounts(graph, 0.5, 0.25, 0.0)
    assert _inlinks(graph, weights, "https://www.site.org/b") == {"https://www.site.org/a": 0.5, "https://docs.site.org/": 0.25,
                   "https://other.net/": 1.0}
    assert inlink_discounts(graph, 1.0, 1.0, 0.0) is None


def test_a_site_keeps_its_internal_ranking():
    # one host: its home page, linked from every page of the site, ranks first
    pages = [f"https://docs.site.org/p{i}.html" for i in range(30)]
    home = "https://docs.site.org/"
    graph = graph_of([(p, home) for p in pages] + [(home, p) for p in pages[:3]])
    scores = relative(graph, LinkRankConfig())
    assert int(np.argmax(scores)) == graph.node_id(home)
    assert scores[graph.node_id(home)] > 5


def test_a_graph_without_urls_counts_each_host_as_a_domain():
    hashes = hashes_of(["a", "b", "c"])
    graph = WebGraph.from_edges(hashes, [0, 1], [2, 2], host_hash=np.array([1, 2, 3],
                                                                          dtype=np.uint64))
    assert graph.domain_hash().tolist() == graph.host_hash.tolist()
    assert domain_link_shares(graph, 1.0) is None  # two hosts, one link each


def test_trust_splitting_is_limited_per_domain_too():
    graph = farm_web()
    seeds = [TrustSeed(page, CrawlPolicy.DISTRUST, 1.0) for page in FARM]
    unlimited = propagate_trust(graph, seeds, TrustConfig(method=TrustMethod.SPLITTING,
                                                          domain_links_per_page=0.0))
    limited = propagate_trust(graph, seeds, TrustConfig(method=TrustMethod.SPLITTING))
    target = graph.node_id(FARM_TARGET)
    assert unlimited.distrust[target] == pytest.approx(0.85 * 50)
    assert limited.distrust[target] == pytest.approx(0.85)
    with pytest.raises(ValueError):
        TrustConfig(domain_links_per_page=-1.0)
    with pytest.raises(ValueError):
        LinkRankConfig(domain_links_per_page=-0.5)


def test_search_puts_the_honest_page_above_the_farms_target(tmp_path):
    timestamp = 1_700_000_321
    body = "The widget frobnicator assembles widgets from parts and ships them daily."
    reader = build(tmp_path / "qs0" / f"IndexData{timestamp}",
                   [text_doc(FARM_TARGET, "Widget frobnicator", body),
                    text_doc(HONEST, "Widget frobnicator", body)])
    graph = farm_web()
    options = SearchOptions(proximity_weight=0.0)

    def first(config: LinkRankConfig) -> str:
        scores = linkrank(graph, config).scores
        write_scores(scores_path(tmp_path, timestamp), graph.with_scores(score=scores))
        searcher = Searcher([LocalShard(reader)], options)
        return searcher.search("widget frobnicator").results[0].url

    assert first(PLAIN_PAGERANK) == FARM_TARGET
    assert first(LinkRankConfig()) == HONEST
