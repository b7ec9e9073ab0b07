"""NodeDumper, LinkDumper and NodeReader: looking into a web graph (seed 002).

Layer: ``linkgraph.core``. Plain values out; the commands format them.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np

from .graph import WebGraph


class NodeOrder(enum.StrEnum):
    INLINKS = "inlinks"
    OUTLINKS = "outlinks"
    SCORE = "score"


@dataclass(frozen=True, slots=True)
class NodeInfo:
    node: int
    url: str
    url_hash: int
    host_hash: int
    inlinks: int
    outlinks: int
    score: float
    trust: float
    fetched_at: float | None  # None: never fetched, only linked to


@dataclass(frozen=True, slots=True)
class LinkInfo:
    url: str
    anchor: str
    score: float  # LinkRank of the page at the other end
    same_host: bool
    in_loop: bool


@dataclass(frozen=True, slots=True)
class NodeLinks:
    node: NodeInfo
    inlinks: list[LinkInfo]
    outlinks: list[LinkInfo]


class NodeReader:
    """One node's facts, by url or node id."""

    def __init__(self, graph: WebGraph) -> None:
        self.graph = graph

    def info(self, node: int) -> NodeInfo:
        g = self.graph
        fetched = float(g.fetched_at[node])
        return NodeInfo(node, g.url(node), int(g.url_hash[node]), int(g.host_hash[node]),
                        int(g.in_ptr[node + 1] - g.in_ptr[node]),
                        int(g.out_ptr[node + 1] - g.out_ptr[node]), float(g.score[node]),
                        float(g.trust[node]), None if math.isnan(fetched) else fetched)

    def read(self, url: str) -> NodeInfo | None:
        node = self.graph.node_id(url)
        return None if node < 0 else self.info(node)


class NodeDumper:
    """The top nodes by number of inlinks, of outlinks, or by LinkRank score."""

    def __init__(self, graph: WebGraph) -> None:
        self.graph = graph

    def top(self, n: int, by: NodeOrder | str = NodeOrder.SCORE) -> list[NodeInfo]:
        g = self.graph
        by = NodeOrder(by)
        if by == NodeOrder.INLINKS:
            key = g.in_count.astype(np.float64)
        elif by == NodeOrder.OUTLINKS:
            key = g.out_count.astype(np.float64)
        else:
            key = np.asarray(g.score, dtype=np.float64)
        n = max(0, min(n, g.n))
        if n == 0:
            return []
        part = np.argpartition(-key, n - 1)[:n]
        order = part[np.lexsort((part, -key[part]))]  # by key desc, then node id
        reader = NodeReader(g)
        return [reader.info(int(i)) for i in order]


class LinkDumper:
    """A url's inlinks and outlinks with their anchor texts, best-scored first."""

    def __init__(self, graph: WebGraph) -> None:
        self.graph = graph

    def links(self, url: str, limit: int | None = None) -> NodeLinks | None:
        g = self.graph
        node = g.node_id(url)
        if node < 0:
            return None
        loops = None if g.loops is None else np.asarray(g.loops, dtype=bool)

        def describe(others: np.ndarray, edges: np.ndarray) -> list[LinkInfo]:
            scores = np.asarray(g.score)[others]
            order = np.lexsort((others, -scores))
            if limit is not None:
                order = order[:limit]
            return [LinkInfo(g.url(int(others[i])), g.anchor(int(edges[i])), float(scores[i]),
                             bool(g.host_hash[others[i]] == g.host_hash[node]),
                             bool(loops is not None and loops[edges[i]]))
                    for i in order.tolist()]

        sources, in_edges = g.inlinks(node)
        targets, out_edges = g.outlinks(node)
        return NodeLinks(NodeReader(g).info(node), describe(sources, in_edges),
                         describe(targets, out_edges))
