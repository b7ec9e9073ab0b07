"""Loops: mark the edges that lie on short link cycles (Nutch's Loops job, seed 002).

Layer: ``linkgraph.core`` (numpy + scipy.sparse). Optional: LinkRank reads the marks
(``WebGraph.loops``) and discounts marked links.

An edge ``u -> v`` lies on a cycle of length ``k + 1`` exactly when ``u`` can be reached from
``v`` in ``k`` steps. For a block of source nodes ``u`` the search walks *backwards*: row ``u``
of ``R_1 = A^T`` holds the pages linking to ``u``, ``R_{k+1} = R_k A^T`` those reaching ``u`` in
``k + 1`` steps; every edge ``u -> v`` with ``v`` in some ``R_k[u]`` (``k < max_length``) is
marked. The walk is a breadth-first search from every node at once, block by block.

Memory is bounded: blocks hold at most ``block_nodes`` sources, and each row of a frontier keeps
at most ``max_frontier`` nodes (the rest of a huge frontier is cut, as Nutch's job bounds its
work; the cut can only miss loops, never invent one). Peak memory is about
``block_nodes * max_frontier * 16`` bytes plus one sparse product.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .graph import WebGraph


@dataclass(frozen=True, slots=True)
class LoopsConfig:
    max_length: int = 3  # longest cycle looked for (2 = reciprocal links)
    max_frontier: int = 1000  # nodes kept per source per step
    block_nodes: int = 4096  # sources walked together

    def __post_init__(self) -> None:
        if self.max_length < 2:
            raise ValueError("max_length must be at least 2")
        if self.max_frontier < 1 or self.block_nodes < 1:
            raise ValueError("max_frontier and block_nodes must be positive")


def _cap_rows(m: sp.csr_matrix, cap: int) -> sp.csr_matrix:
    """Keep at most ``cap`` entries (the first ones) in every row."""
    counts = np.diff(m.indptr)
    if counts.size == 0 or counts.max() <= cap:
        return m
    rank = np.arange(m.indptr[-1]) - np.repeat(m.indptr[:-1], counts)
    keep = rank < cap
    indptr = np.zeros_like(m.indptr)
    np.cumsum(np.minimum(counts, cap), out=indptr[1:])
    return sp.csr_matrix((m.data[keep], m.indices[keep], indptr), shape=m.shape)


def find_loops(graph: WebGraph, config: LoopsConfig = LoopsConfig(),
               progress: Callable[[int, int], None] | None = None) -> npt.NDArray[np.bool_]:
    """One mark per edge (edge-id order): does the edge lie on a cycle of length <= max_length?

    ``progress(done_nodes, total_nodes)`` is called after each block.
    """
    n, e = graph.n, graph.edges
    marks = np.zeros(e, dtype=bool)
    if n == 0 or e == 0:
        return marks
    ones = np.ones(e, dtype=np.float32)
    # a[u, v] = 1 for u -> v; at[u, w] = 1 for w -> u (rows = targets, cols = sources).
    at = sp.csr_matrix((ones, np.asarray(graph.in_idx), np.asarray(graph.in_ptr)), shape=(n, n))
    out_ptr = np.asarray(graph.out_ptr)
    out_idx = np.asarray(graph.out_idx)
    for start in range(0, n, config.block_nodes):
        stop = min(n, start + config.block_nodes)
        e0, e1 = int(out_ptr[start]), int(out_ptr[stop])
        if e0 == e1:
            if progress is not None:
                progress(stop, n)
            continue
        # the block's edges as (row in block, target) keys, sorted (edge-id order is sorted).
        rows = np.repeat(np.arange(stop - start, dtype=np.int64), np.diff(out_ptr[start:stop + 1]))
        keys = rows * n + out_idx[e0:e1]
        found = np.zeros(e1 - e0, dtype=bool)
        frontier = _cap_rows(at[start:stop], config.max_frontier)
        for step in range(1, config.max_length):
            f = frontier.tocoo()
            hit = f.row.astype(np.int64) * n + f.col
            pos = np.searchsorted(keys, hit)
            pos = np.minimum(pos, keys.shape[0] - 1)
            match = keys[pos] == hit
            found[pos[match]] = True
            if step + 1 < config.max_length:
                frontier = frontier @ at
                frontier.data[:] = 1.0  # reachability, not path counts
                frontier = _cap_rows(frontier, config.max_frontier)
        marks[e0:e1] = found
        if progress is not None:
            progress(stop, n)
    return marks
