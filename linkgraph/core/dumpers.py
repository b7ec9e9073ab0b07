"""NodeDumper, LinkDumper, NodeReader and LoopReader: looking into a web graph (seed 002).

Layer: ``linkgraph.core``. Plain values out; the commands format them. As Nutch's NodeDumper
does, the top nodes can also be summed up by host or by registered domain
(:meth:`NodeDumper.top_groups`: the sum or the maximum of the members' values).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np

from indexer.core.urls import host_of, registered_domain

from .graph import WebGraph


class NodeOrder(enum.StrEnum):
    INLINKS = "inlinks"
    OUTLINKS = "outlinks"
    SCORE = "score"


class NodeGroup(enum.StrEnum):
    HOST = "host"
    DOMAIN = "domain"


class Aggregate(enum.StrEnum):
    SUM = "sum"
    MAX = "max"


@dataclass(frozen=True, slots=True)
class GroupInfo:
    """One host or registered domain: its name, the sum or maximum of its nodes' values, and
    how many nodes it has."""

    name: str
    value: float
    nodes: int


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


def _top(key: np.ndarray, n: int) -> np.ndarray:
    """The indexes of the ``n`` largest values of ``key``, largest first (ties: lower index
    first)."""
    n = max(0, min(n, int(key.size)))
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-key, n - 1)[:n]
    return part[np.lexsort((part, -key[part]))]


class NodeDumper:
    """The top nodes by number of inlinks, of outlinks, or by LinkRank score; or the top hosts
    or domains by the sum or maximum of those values."""

    def __init__(self, graph: WebGraph) -> None:
        self.graph = graph

    def values(self, by: NodeOrder | str) -> np.ndarray:
        """Every node's value: its inlinks, outlinks or score."""
        g = self.graph
        by = NodeOrder(by)
        if by == NodeOrder.INLINKS:
            return g.in_count.astype(np.float64)
        if by == NodeOrder.OUTLINKS:
            return g.out_count.astype(np.float64)
        return np.asarray(g.score, dtype=np.float64)

    def top(self, n: int, by: NodeOrder | str = NodeOrder.SCORE) -> list[NodeInfo]:
        reader = NodeReader(self.graph)
        return [reader.info(int(i)) for i in _top(self.values(by), n)]

    def top_groups(self, n: int, by: NodeOrder | str = NodeOrder.SCORE,
                   group: NodeGroup | str = NodeGroup.HOST,
                   aggregate: Aggregate | str = Aggregate.SUM) -> list[GroupInfo]:
        """The ``n`` hosts (or registered domains) whose nodes' values sum (or peak) highest,
        highest first. A graph without urls names its groups by hash."""
        g = self.graph
        if g.n == 0:
            return []
        keys = g.host_hash if NodeGroup(group) == NodeGroup.HOST else g.domain_hash()
        _, first, member = np.unique(np.asarray(keys), return_index=True, return_inverse=True)
        member = member.reshape(-1)
        values = self.values(by)
        if Aggregate(aggregate) == Aggregate.SUM:
            totals = np.bincount(member, weights=values, minlength=first.size)
        else:
            totals = np.full(first.size, -np.inf)
            np.maximum.at(totals, member, values)
        sizes = np.bincount(member, minlength=first.size)
        named = int(g.url_offsets[-1]) > 0
        out = []
        for i in _top(totals, n).tolist():
            host = host_of(g.url(int(first[i]))) if named else ""
            name = (host if NodeGroup(group) == NodeGroup.HOST else registered_domain(host)) \
                if named else f"{int(keys[first[i]]):016x}"
            out.append(GroupInfo(name, float(totals[i]), int(sizes[i])))
        return out


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


@dataclass(frozen=True, slots=True)
class LoopSet:
    """The urls a url shares a short link cycle with (Nutch's LoopReader): the targets of its
    outlinks and the sources of its inlinks that the Loops job marked."""

    url: str
    urls: list[str]
    marked: bool  # whether the graph has loop marks at all


class LoopReader:
    """A url's loop set, from the Loops job's per-edge marks (:mod:`.loops`)."""

    def __init__(self, graph: WebGraph) -> None:
        self.graph = graph

    def read(self, url: str) -> LoopSet | None:
        """None when the url is not in the graph; an empty, unmarked set before Loops ran."""
        g = self.graph
        node = g.node_id(url)
        if node < 0:
            return None
        if g.loops is None:
            return LoopSet(url, [], False)
        marks = np.asarray(g.loops, dtype=bool)
        targets, out_edges = g.outlinks(node)
        sources, in_edges = g.inlinks(node)
        others = np.union1d(targets[marks[out_edges]], sources[marks[in_edges]])
        return LoopSet(url, sorted(g.urls(others)), True)
