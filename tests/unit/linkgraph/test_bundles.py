"""A graph built from a real bundle: fixture HTML through the page processor and the writer."""

from __future__ import annotations

from indexer.core.runtime.workdir import crawl_bundles, crawl_timestamps, newest_crawl
from linkgraph.core import (
    PLAIN_PAGERANK,
    WebGraphBuilder,
    anchor_fields,
    linkrank,
    read_bundle_links,
)

from .helpers import write_bundle

HOME = "https://home.org/"
DOCS = "https://docs.org/guide.html"
OLD = "https://old.org/"

PAGES = [
    (HOME, '<title>Home</title><p>A home page about gardens.</p>'
           '<a href="https://docs.org/guide.html">Garden guide</a>'
           '<a href="/about.html">About us</a>'),
    (DOCS, '<title>Guide</title><p>The guide to planting vegetables.</p>'
           '<a href="https://home.org/">Home of gardens</a>'),
    (OLD, '<meta http-equiv="refresh" content="0; url=https://home.org/"><p>moved</p>'),
    ("https://hidden.org/", '<meta name="robots" content="noindex"><p>secret text</p>'
                            '<a href="https://docs.org/guide.html">Planting guide</a>'),
]


def test_graph_from_a_crawl_bundle(tmp_path):
    write_bundle(tmp_path / "qs0" / "IndexData100", PAGES[:2])
    write_bundle(tmp_path / "qs1" / "IndexData100", PAGES[2:])
    write_bundle(tmp_path / "qs0" / "IndexData50", PAGES[:1])
    assert crawl_timestamps(tmp_path) == [50, 100] and newest_crawl(tmp_path) == 100
    bundles = crawl_bundles(tmp_path, 100)
    assert [b.parent.name for b in bundles] == ["qs0", "qs1"]
    seen = []
    links = read_bundle_links(bundles, progress=seen.append)
    assert links.redirects == {OLD: HOME}
    assert seen and seen[-1] == links.documents
    builder = WebGraphBuilder()
    builder.add_all(links.records)
    graph = builder.build()
    out = set(graph.urls(graph.outlinks(graph.node_id(HOME))[0]))
    assert out == {DOCS, "https://home.org/about.html"}
    # the redirect passes its score on; the noindex page's links come from its link documents
    assert graph.node_id(HOME) in graph.outlinks(graph.node_id(OLD))[0].tolist()
    sources = set(graph.urls(graph.inlinks(graph.node_id(DOCS))[0]))
    assert sources == {HOME, "https://hidden.org/"}
    assert graph.fetched_at[graph.node_id(HOME)] == 1_700_000_000.0
    graph = graph.with_scores(score=linkrank(graph, PLAIN_PAGERANK).scores)
    texts = {f.text for f in anchor_fields(graph, DOCS)}
    assert texts == {"garden guide", "planting guide"}
