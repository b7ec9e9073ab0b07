"""Building and updating a :class:`.graph.WebGraph` from fetch records.

Layer: ``linkgraph.core``. :mod:`.bundles` turns a crawl's IndexDocumentBundles into
:class:`PageLinks` records; :class:`WebGraphBuilder` merges them into a graph.

Update rule (Nutch's WebGraph, seed 002): a source page's outlinks come from exactly one fetch
record, the newest one. A record replaces all the links the graph (or an earlier record in the
same build) holds for that page when its ``fetched_at`` is at least as new; an older record is
ignored. So links a page no longer has disappear once the page is fetched again. Nodes are
never removed by an update: a node that lost its inlinks keeps its place and gets a low score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from indexer.core.urls import hashes_of, host_of

from .graph import WebGraph


@dataclass(frozen=True, slots=True)
class PageLinks:
    """One fetch of one page: its url, when it was fetched, and its outlinks (target, anchor)."""

    url: str
    fetched_at: float
    links: tuple[tuple[str, str], ...]


class WebGraphBuilder:
    """Collects fetch records, then :meth:`build` returns a new graph (``base`` updated).

    ``add`` may be called in any order; for each url the newest record wins. With
    ``url_filter`` (Nutch WebGraph's ``-filter``: the crawl's own url rules), a record of a url
    the filter refuses is left out (counted in ``filtered``), and so is every link to one;
    the base graph's nodes and links stay as they are (``--rebuild`` filters everything).
    """

    def __init__(self, base: WebGraph | None = None,
                 url_filter: Callable[[str], bool] | None = None) -> None:
        self.base = base
        self.url_filter = url_filter
        self._pages: dict[str, PageLinks] = {}
        self.records = 0
        self.ignored = 0
        self.filtered = 0

    def add(self, record: PageLinks) -> None:
        self.records += 1
        keep = self.url_filter
        if keep is not None:
            if not keep(record.url):
                self.filtered += 1
                return
            record = PageLinks(record.url, record.fetched_at,
                               tuple(link for link in record.links if keep(link[0])))
        current = self._pages.get(record.url)
        if current is not None and current.fetched_at > record.fetched_at:
            self.ignored += 1
            return
        self._pages[record.url] = record

    def add_all(self, records: Iterable[PageLinks]) -> None:
        for record in records:
            self.add(record)

    def build(self) -> WebGraph:
        base = self.base if self.base is not None else WebGraph.empty()
        pages = list(self._pages.values())
        new_urls: list[str] = []
        index: dict[str, int] = {}

        def node(url: str) -> int:
            i = index.get(url)
            if i is None:
                i = index[url] = len(new_urls)
                new_urls.append(url)
            return i

        page_nodes = [node(p.url) for p in pages]
        src: list[int] = []
        dst: list[int] = []
        anchors: list[str] = []
        for i, page in zip(page_nodes, pages, strict=True):
            for target, anchor in page.links:
                src.append(i)
                dst.append(node(target))
                anchors.append(anchor)
        new_hash = hashes_of(new_urls)
        new_fetched = np.full(len(new_urls), np.nan)
        new_fetched[page_nodes] = [p.fetched_at for p in pages]

        # Which new records lose against the base graph's newer fetch of the same page?
        base_pos = base.node_ids(new_hash)
        known = base_pos >= 0
        base_time = np.full(len(new_urls), np.nan)
        base_time[known] = base.fetched_at[base_pos[known]]
        is_page = ~np.isnan(new_fetched)
        stale = is_page & ~np.isnan(base_time) & (base_time > new_fetched)
        replaced_base = base_pos[is_page & ~stale & known]
        self.ignored += int(stale.sum())

        # Nodes: base nodes then new urls, unified by hash.
        all_hash = np.concatenate([base.url_hash, new_hash])
        uniq, first, inverse = np.unique(all_hash, return_index=True, return_inverse=True)
        nb = base.n
        base_urls = base.urls(np.arange(nb)) if nb else []
        urls_all = base_urls + new_urls
        urls = [urls_all[i] for i in first.tolist()]
        host_all = np.concatenate([base.host_hash, hashes_of([host_of(u) for u in new_urls])])
        fetched = np.concatenate([base.fetched_at, np.full(len(new_urls), np.nan)])[first]
        fresh_nodes = inverse[nb:][is_page & ~stale]
        fetched[fresh_nodes] = new_fetched[is_page & ~stale]

        # Edges: base edges of sources not replaced, then new edges of fresh records.
        drop = np.zeros(nb, dtype=bool)
        drop[replaced_base] = True
        b_src = base.edge_sources()
        keep = ~drop[b_src]
        b_anchor_ids = np.flatnonzero(keep)
        e_src = [inverse[:nb][b_src[keep]]]
        e_dst = [inverse[:nb][np.asarray(base.out_idx)[keep]]]
        all_anchors: list[str] = [base.anchor(int(e)) for e in b_anchor_ids.tolist()]
        if src:
            n_src = np.asarray(src, dtype=np.int64)
            n_keep = ~stale[n_src]
            e_src.append(inverse[nb:][n_src[n_keep]])
            e_dst.append(inverse[nb:][np.asarray(dst, dtype=np.int64)[n_keep]])
            all_anchors.extend(a for a, k in zip(anchors, n_keep.tolist(), strict=True) if k)
        graph = WebGraph.from_edges(
            uniq, np.concatenate(e_src), np.concatenate(e_dst), host_hash=host_all[first],
            urls=urls, fetched_at=fetched, anchors=all_anchors)
        return graph


def page_links(url: str, fetched_at: float | None,
               links: Sequence[Sequence[str]]) -> PageLinks:
    """A :class:`PageLinks` from a summary's ``links`` list (``[[target, anchor], ...]``)."""
    time = float(fetched_at) if fetched_at is not None and not math.isnan(float(fetched_at)) \
        else 0.0
    pairs = tuple((str(pair[0]), str(pair[1]) if len(pair) > 1 and pair[1] else "")
                  for pair in links if pair and pair[0])
    return PageLinks(url, time, pairs)
