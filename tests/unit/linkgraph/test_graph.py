from __future__ import annotations

import json

import numpy as np
import pytest

from indexer.core.errors import CorruptGraphError, GraphFormatTooNew, GraphNotFound
from indexer.core.urls import hashes_of, url_hash
from linkgraph.core import PageLinks, WebGraph, WebGraphBuilder, load_graph, save_graph

from .helpers import graph_of, int_graph

A, B, C, D = "https://a.org/", "https://b.org/", "https://c.org/", "https://a.org/d"


def _links(graph: WebGraph, url: str) -> set[str]:
    return set(graph.urls(graph.outlinks(graph.node_id(url))[0]))


def _inlinks(graph: WebGraph, url: str) -> set[str]:
    return set(graph.urls(graph.inlinks(graph.node_id(url))[0]))


def test_csr_invariants_dedup_and_self_links():
    rng = np.random.default_rng(5)
    n = 200
    src, dst = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    graph, ids = int_graph(n, src, dst)
    assert np.all(np.diff(graph.url_hash.astype(np.float64)) > 0)
    pairs = {(int(ids[s]), int(ids[d])) for s, d in zip(src, dst, strict=True) if s != d}
    got = set(zip(graph.edge_sources().tolist(), graph.out_idx.tolist(), strict=True))
    assert got == pairs and graph.edges == len(pairs)
    assert graph.in_count.sum() == graph.out_count.sum() == graph.edges
    # inlinks mirror outlinks through in_edge
    assert np.array_equal(graph.edge_sources()[graph.in_edge], graph.in_idx)
    assert np.array_equal(np.repeat(np.arange(n), graph.in_count), graph.out_idx[graph.in_edge])


def test_urls_anchors_hosts_and_lookup():
    graph = graph_of([(A, B), (A, D), (B, A)], anchors={(A, B): "bee site", (A, D): "dee"})
    assert graph.n == 3 and graph.edges == 3
    assert graph.url(graph.node_id(B)) == B and graph.node_id("https://none/") == -1
    _, edges = graph.outlinks(graph.node_id(A))
    assert sorted(graph.anchor(int(e)) for e in edges) == ["bee site", "dee"]
    same = dict(zip(graph.edge_sources().tolist(), graph.same_host().tolist(), strict=False))
    assert same[graph.node_id(B)] is False
    ids = graph.node_ids(hashes_of([C, A]))
    assert ids.tolist() == [-1, graph.node_id(A)]
    assert graph.node_ids(np.frombuffer(b"".join(url_hash(u).to_bytes(8, "big")
                                                  for u in (A, B)), dtype="S8")).tolist() \
        == [graph.node_id(A), graph.node_id(B)]


def test_newer_fetch_replaces_a_pages_links():
    builder = WebGraphBuilder()
    builder.add(PageLinks(A, 10.0, ((B, "old"), (C, "c"))))
    builder.add(PageLinks(B, 10.0, ((A, "home"),)))
    first = builder.build()
    assert _links(first, A) == {B, C} and _inlinks(first, C) == {A}
    update = WebGraphBuilder(first)
    update.add(PageLinks(A, 20.0, ((D, "new"),)))
    update.add(PageLinks(B, 5.0, ((C, "stale"),)))  # older than what the graph holds: ignored
    second = update.build()
    assert _links(second, A) == {D}
    assert _inlinks(second, C) == set() and _inlinks(second, B) == set()
    assert _links(second, B) == {A}
    assert second.node_id(C) >= 0  # nodes stay
    node = second.node_id(A)
    assert second.fetched_at[node] == 20.0
    assert second.anchor(int(second.outlinks(node)[1][0])) == "new"
    assert update.ignored == 1


def test_within_one_build_the_newest_record_wins():
    builder = WebGraphBuilder()
    builder.add(PageLinks(A, 30.0, ((C, ""),)))
    builder.add(PageLinks(A, 10.0, ((B, ""),)))
    assert _links(builder.build(), A) == {C}


def test_save_and_load_round_trip(tmp_path):
    graph = graph_of([(A, B), (B, C), (C, A)], anchors={(A, B): "ünïcode"})
    stored = save_graph(graph, tmp_path / "g")
    loaded = load_graph(tmp_path / "g", verify=True)
    for name in ("url_hash", "out_ptr", "out_idx", "in_ptr", "in_idx", "in_edge", "host_hash"):
        assert np.array_equal(getattr(loaded, name), getattr(graph, name))
    assert isinstance(loaded.out_idx, np.memmap) and stored.path == tmp_path / "g"
    assert loaded.anchor(int(loaded.outlinks(loaded.node_id(A))[1][0])) == "ünïcode"
    scored = save_graph(loaded.with_scores(score=np.array([0.2, 0.3, 0.5])), tmp_path / "g",
                        changed=["score"])
    manifest = json.loads((tmp_path / "g" / "manifest.json").read_text())
    assert manifest["generation"] == 2
    assert manifest["files"]["out_idx"]["file"] == "out_idx.1.npy"
    assert manifest["files"]["score"]["file"] == "score.2.npy"
    assert not (tmp_path / "g" / "score.1.npy").exists()
    assert scored.score.tolist() == [0.2, 0.3, 0.5]


def test_damaged_files_are_detected(tmp_path):
    save_graph(graph_of([(A, B), (B, C)]), tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    path = tmp_path / manifest["files"]["out_idx"]["file"]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    load_graph(tmp_path)  # sizes are still right: only the checksum sees it
    with pytest.raises(CorruptGraphError, match="checksum"):
        load_graph(tmp_path, verify=True)
    manifest["version"] = 99
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(GraphFormatTooNew):
        load_graph(tmp_path)
    with pytest.raises(GraphNotFound):
        load_graph(tmp_path / "missing")


def test_empty_graph_round_trip(tmp_path):
    graph = save_graph(WebGraph.empty(), tmp_path)
    assert graph.n == 0 and graph.edges == 0 and graph.node_id(A) == -1
