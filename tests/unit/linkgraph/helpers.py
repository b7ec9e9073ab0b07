"""Small webs for the link-analysis tests: graphs from url edge lists, and real bundles written
from fixture HTML by the crawler's page processor and the index writer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.urls import hashes_of
from linkgraph.core import PageLinks, WebGraph, WebGraphBuilder


def graph_of(edges: Iterable[tuple[str, str]], nodes: Sequence[str] = (),
             anchors: dict[tuple[str, str], str] | None = None) -> WebGraph:
    """A graph whose sources were all fetched at time 1, from (source, target) url pairs."""
    builder = WebGraphBuilder()
    links: dict[str, list[tuple[str, str]]] = {u: [] for u in nodes}
    for src, dst in edges:
        links.setdefault(src, []).append((dst, (anchors or {}).get((src, dst), "")))
        links.setdefault(dst, [])
    for url, out in links.items():
        builder.add(PageLinks(url, 1.0, tuple(out)))
    return builder.build()


def int_graph(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[WebGraph, np.ndarray]:
    """A graph on nodes 0..n-1 (urls "n<i>"); returns it and the node id of each i."""
    urls = [f"https://h{i % 3}.example/n{i}" for i in range(n)]
    hashes = hashes_of(urls)
    graph = WebGraph.from_edges(hashes, src, dst, urls=urls)
    return graph, graph.node_ids(hashes)


def page(url: str, body: str, fetched_at: float = 1_700_000_000.0):
    return PageProcessor().process(FetchedPage(url, body.encode(), 200,
                                               {"Content-Type": "text/html"},
                                               fetched_at=fetched_at))


def write_bundle(path: Path, pages: Sequence[tuple[str, str]]) -> Path:
    """An IndexDocumentBundle holding the documents a crawl of ``pages`` (url, html) makes."""
    documents = []
    for url, body in pages:
        documents.extend(to_index_documents(page(url, body)))
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=8)) as writer:
        writer.append(documents)
    return path


# A garden site and a spam site that link to each other: the web of the link analysis tests
# (trust from a favoured seed reaches the garden pages, distrust the spam ones).
GOOD, GOOD_A, SPAM, SPAM_A = ("https://good.org/", "https://good.org/a.html",
                              "https://spam.biz/", "https://spam.biz/a.html")
GARDEN_AND_SPAM = [
    (GOOD, '<title>Good</title><p>Good gardening advice.</p>'
           '<a href="/a.html">Growing tomatoes</a><a href="https://spam.biz/">Cheap seeds</a>'),
    (GOOD_A, '<title>Tomatoes</title><p>How to grow tomatoes.</p>'
             '<a href="https://good.org/">Gardening home</a>'),
    (SPAM, '<title>Spam</title><p>Buy cheap pills now.</p>'
           '<a href="/a.html">Pills</a><a href="https://good.org/a.html">Tomato tips</a>'),
    (SPAM_A, '<title>More spam</title><p>Pills pills pills.</p>'
             '<a href="https://spam.biz/">Pills home</a>'),
]

