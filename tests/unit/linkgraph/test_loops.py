from __future__ import annotations

import numpy as np

from linkgraph.core import LoopsConfig, find_loops

from .helpers import graph_of, int_graph


def _marked(graph, marks):
    src = graph.edge_sources()
    return {(graph.url(int(src[e])), graph.url(int(graph.out_idx[e])))
            for e in np.flatnonzero(marks)}


def test_cycles_up_to_the_configured_length():
    two = [("https://a/", "https://b/"), ("https://b/", "https://a/")]
    three = [("https://c/", "https://d/"), ("https://d/", "https://e/"),
             ("https://e/", "https://c/")]
    four = [("https://f/", "https://g/"), ("https://g/", "https://h/"),
            ("https://h/", "https://i/"), ("https://i/", "https://f/")]
    tail = [("https://a/", "https://c/"), ("https://e/", "https://z/")]
    graph = graph_of(two + three + four + tail)
    assert _marked(graph, find_loops(graph, LoopsConfig(max_length=2))) == set(two)
    assert _marked(graph, find_loops(graph, LoopsConfig(max_length=3))) == set(two + three)
    assert _marked(graph, find_loops(graph, LoopsConfig(max_length=4))) == \
        set(two + three + four)


def test_block_size_does_not_change_the_marks():
    rng = np.random.default_rng(11)
    graph, _ = int_graph(300, rng.integers(0, 300, 900), rng.integers(0, 300, 900))
    whole = find_loops(graph, LoopsConfig(max_length=4, block_nodes=1000, max_frontier=10**6))
    blocks = find_loops(graph, LoopsConfig(max_length=4, block_nodes=7, max_frontier=10**6))
    assert np.array_equal(whole, blocks) and whole.any()


def test_frontier_cap_bounds_the_search_and_only_misses_loops():
    # a hub: many pages link to the hub and it links back to all of them through one page
    n = 400
    edges = [(f"https://p/{i}", "https://hub/") for i in range(n)]
    edges += [("https://hub/", "https://back/")] + [("https://back/", f"https://p/{i}")
                                                  for i in range(n)]
    graph = graph_of(edges)
    full = find_loops(graph, LoopsConfig(max_length=3, max_frontier=10_000))
    capped = find_loops(graph, LoopsConfig(max_length=3, max_frontier=5))
    assert full.sum() == graph.edges
    assert 0 < capped.sum() < full.sum()
    assert not np.any(capped & ~full)


def test_progress_is_reported():
    graph = graph_of([("https://a/", "https://b/"), ("https://b/", "https://a/")])
    calls = []
    find_loops(graph, LoopsConfig(block_nodes=1), progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (2, 2)
