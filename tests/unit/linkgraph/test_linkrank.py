from __future__ import annotations

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkgraph.core import PLAIN_PAGERANK, LinkRankConfig, linkrank

from .helpers import graph_of, int_graph


def _networkx(n, src, dst, **kw):
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((int(a), int(b)) for a, b in zip(src, dst, strict=True) if a != b)
    return nx.pagerank(g, alpha=0.85, tol=1e-13, max_iter=10_000, **kw)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(0, 200), st.integers(0, 2**32 - 1))
def test_equals_networkx_on_random_graphs(n, m, seed):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    graph, ids = int_graph(n, src, dst)
    ours = linkrank(graph, PLAIN_PAGERANK)
    assert ours.converged
    ref = _networkx(n, src, dst)
    assert np.allclose(ours.scores[ids], [ref[i] for i in range(n)], atol=1e-6, rtol=0)


def test_equals_networkx_on_a_larger_seeded_graph_with_dangling_nodes():
    rng = np.random.default_rng(7)
    n = 500
    src = rng.integers(0, n // 2, 3000)  # the upper half has no outlinks: dangling
    dst = rng.integers(0, n, 3000)
    graph, ids = int_graph(n, src, dst)
    assert int((graph.out_count == 0).sum()) >= n // 2
    ref = _networkx(n, src, dst)
    assert np.abs(linkrank(graph, PLAIN_PAGERANK).scores[ids] - [ref[i] for i in range(n)]) \
        .max() < 1e-6


def test_personalisation_equals_networkx():
    rng = np.random.default_rng(3)
    n = 60
    src, dst = rng.integers(0, n, 240), rng.integers(0, n // 2, 240)
    graph, ids = int_graph(n, src, dst)
    weights = rng.random(n) * (rng.random(n) < 0.3)
    weights[0] = 1.0
    p = np.zeros(n)
    p[ids] = weights
    ours = linkrank(graph, PLAIN_PAGERANK, personalization=p)
    ref = _networkx(n, src, dst, personalization={i: float(weights[i]) for i in range(n)})
    assert np.abs(ours.scores[ids] - [ref[i] for i in range(n)]).max() < 1e-6


def test_small_graph_by_hand():
    # a -> b, a -> c, b -> c, c -> a; d = 0.85, no dangling pages, (1 - d)/3 = 0.05:
    #   b = 0.05 + 0.85 a/2
    #   c = 0.05 + 0.85 (a/2 + b) = 0.0925 + 0.78625 a
    #   a = 0.05 + 0.85 c          = 0.128625 + 0.6683125 a  =>  a = 0.128625 / 0.3316875
    d = Fraction(85, 100)
    t = (1 - d) / 3
    a = (t + d * (t + d * t)) / (1 - d * (d / 2 + d * d / 2))
    b = t + d * a / 2
    c = t + d * (a / 2 + b)
    assert a + b + c == 1
    graph = graph_of([("https://a/", "https://b/"), ("https://a/", "https://c/"),
                      ("https://b/", "https://c/"), ("https://c/", "https://a/")])
    scores = linkrank(graph, PLAIN_PAGERANK).scores
    for url, want in (("https://a/", a), ("https://b/", b), ("https://c/", c)):
        assert scores[graph.node_id(url)] == pytest.approx(float(want), abs=1e-9)


def test_only_dangling_pages_give_uniform_scores():
    graph = graph_of([], nodes=["https://a/", "https://b/", "https://c/", "https://d/"])
    result = linkrank(graph, PLAIN_PAGERANK)
    assert np.allclose(result.scores, 0.25) and result.converged


def test_iteration_cap_is_reported():
    rng = np.random.default_rng(1)
    graph, _ = int_graph(30, rng.integers(0, 30, 100), rng.integers(0, 30, 100))
    result = linkrank(graph, LinkRankConfig(max_iter=2, tol=1e-15))
    assert result.iterations == 2 and not result.converged
    assert result.scores.sum() == pytest.approx(1.0)


def test_same_host_links_count_less():
    # x.org/1 links to its own x.org/2 and to y.org/; with the discount y gains on x.org/2.
    edges = [("https://x.org/1", "https://x.org/2"), ("https://x.org/1", "https://y.org/"),
             ("https://x.org/2", "https://x.org/1"), ("https://y.org/", "https://x.org/1")]
    graph = graph_of(edges)
    plain = linkrank(graph, PLAIN_PAGERANK).scores
    discounted = linkrank(graph, LinkRankConfig(same_host_weight=0.2, loop_weight=1.0)).scores
    x2, y = graph.node_id("https://x.org/2"), graph.node_id("https://y.org/")
    assert plain[x2] == pytest.approx(plain[y])
    assert discounted[x2] < discounted[y]
    assert discounted.sum() == pytest.approx(1.0)


def test_loop_links_count_less():
    from linkgraph.core import find_loops

    edges = [("https://a/", "https://b/"), ("https://b/", "https://a/"),
             ("https://a/", "https://c/"), ("https://c/", "https://d/")]
    graph = graph_of(edges)
    graph = graph.with_loops(find_loops(graph), 2)
    plain = linkrank(graph, PLAIN_PAGERANK).scores
    cfg = LinkRankConfig(same_host_weight=1.0, loop_weight=0.1)
    discounted = linkrank(graph, cfg).scores
    b, c = graph.node_id("https://b/"), graph.node_id("https://c/")
    assert plain[b] == pytest.approx(plain[c])
    assert discounted[b] < discounted[c]


def test_bad_config_and_personalisation_are_refused():
    with pytest.raises(ValueError):
        LinkRankConfig(damping=1.0)
    with pytest.raises(ValueError):
        LinkRankConfig(loop_weight=2.0)
    graph = graph_of([("https://a/", "https://b/")])
    with pytest.raises(ValueError):
        linkrank(graph, personalization=[0.0, 0.0])
