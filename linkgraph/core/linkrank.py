"""LinkRank: PageRank power iteration on the web graph, with Nutch LinkRank's discounts.

Layer: ``linkgraph.core`` (numpy + scipy.sparse). Reads a :class:`.graph.WebGraph`,
returns a :class:`LinkRankResult`; the caller stores the scores (:func:`.graph.save_graph`).

The iteration (seed 003's PageRank with d = 0.85, as a probability vector)::

    x' = d * M x  +  (d * lost(x) + (1 - d)) * p

* ``M[v, u] = w(u->v) / outdeg(u)``; ``w`` is 1, times ``same_host_weight`` for a link inside
  one host or ``same_domain_weight`` for a link between two hosts of one registered domain,
  times ``min(1, domain_links_per_page / k)`` when ``v`` receives ``k`` links from other hosts
  of ``u``'s registered domain (:mod:`.domain_limits`: a link farm of many pages of one owner
  gives what one of them gives), times ``loop_weight`` for a link the Loops job marked. The
  share a discount takes away is not given to the page's other links (that would undo the
  discount): like a dangling page's whole score, it is "lost" and handed out again along
  ``p``.
* ``lost(x) = sum_u x[u] * (1 - sum_v M[v, u])``: dangling pages plus discounted shares.
* ``p`` is the personalisation vector (uniform by default), normalised to sum 1; dangling mass
  goes along ``p`` too (as ``networkx.pagerank`` does when ``dangling`` is not given).

With every weight 1 and no domain limit (:data:`PLAIN_PAGERANK`) this is plain PageRank and agrees with ``networkx.pagerank``. The loop stops
when the L1 change is below ``tol`` or after ``max_iter`` iterations; the result says which.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .domain_limits import inlink_discounts
from .graph import WebGraph

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LinkRankConfig:
    """LinkRank's knobs. Weights in [0, 1]; 1 turns a discount off. ``domain_links_per_page``
    (>= 0, 0 turns the limit off): the links' worth one registered domain's pages may give a
    page of another host (:mod:`.domain_limits`)."""

    damping: float = 0.85
    tol: float = 1e-10
    max_iter: int = 200
    same_host_weight: float = 0.5
    same_domain_weight: float = 0.5
    domain_links_per_page: float = 1.0
    loop_weight: float = 0.5

    def __post_init__(self) -> None:
        if not 0.0 < self.damping < 1.0:
            raise ValueError("damping must be in (0, 1)")
        if self.tol <= 0 or self.max_iter < 1:
            raise ValueError("tol must be > 0 and max_iter >= 1")
        if not self.domain_links_per_page >= 0:
            raise ValueError("domain_links_per_page must be >= 0")
        for name in ("same_host_weight", "same_domain_weight", "loop_weight"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1]")


PLAIN_PAGERANK = LinkRankConfig(same_host_weight=1.0, same_domain_weight=1.0,
                                domain_links_per_page=0.0, loop_weight=1.0)


@dataclass(frozen=True, slots=True)
class LinkRankResult:
    scores: npt.NDArray[np.float64]  # one per node, sums to 1
    iterations: int
    converged: bool
    delta: float  # last L1 change


def inlink_weights(graph: WebGraph,
                   config: LinkRankConfig) -> npt.NDArray[np.float64] | None:
    """Per inlink (inlink CSR order) weight after the discounts and the domain limit, or None
    when all are 1."""
    weights = inlink_discounts(graph, config.same_host_weight, config.same_domain_weight,
                               config.domain_links_per_page)
    if config.loop_weight != 1.0 and graph.loops is not None and graph.edges:
        in_loop = np.asarray(graph.loops, dtype=bool)[np.asarray(graph.in_edge)]
        loop = np.where(in_loop, config.loop_weight, 1.0)
        weights = loop if weights is None else weights * loop
    return weights


def transition_matrix(graph: WebGraph,
                      config: LinkRankConfig) -> tuple[sp.csr_matrix, npt.NDArray[np.float64]]:
    """``M`` (targets x sources), built from the inlink CSR without sorting, and per page the
    share of its score its links pass on (``M``'s column sums)."""
    n = graph.n
    out_count = graph.out_count.astype(np.float64)
    inv = np.zeros(n)
    np.divide(1.0, out_count, out=inv, where=out_count > 0)
    in_idx = np.asarray(graph.in_idx)
    data = inv[in_idx]
    weights = inlink_weights(graph, config)
    if weights is None:
        kept = (out_count > 0).astype(np.float64)
    else:
        data *= weights
        kept = np.bincount(in_idx, weights=weights, minlength=n) * inv
    index_type = np.int32 if graph.edges < 2**31 else np.int64
    m = sp.csr_matrix((data, in_idx.astype(index_type, copy=False),
                       np.asarray(graph.in_ptr).astype(index_type)), shape=(n, n))
    return m, kept


def linkrank(
    graph: WebGraph,
    config: LinkRankConfig = LinkRankConfig(),
    personalization: npt.ArrayLike | None = None,
    start: npt.ArrayLike | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> LinkRankResult:
    """Run the power iteration (see the module docstring).

    ``personalization``: one non-negative value per node (not all zero), or None for uniform.
    ``start``: an initial vector (e.g. last run's scores), or None for uniform.
    ``progress(iteration, delta)`` is called after each iteration.
    """
    n = graph.n
    if n == 0:
        return LinkRankResult(np.zeros(0), 0, True, 0.0)
    m, kept = transition_matrix(graph, config)
    p: npt.NDArray[np.float64] | float
    if personalization is None:
        p = 1.0 / n  # uniform: a scalar saves a vector operation per iteration
    else:
        p = np.asarray(personalization, dtype=np.float64).reshape(-1)
        if p.shape != (n,) or np.any(p < 0) or not p.sum() > 0:
            raise ValueError("personalization needs one non-negative value per node, not all 0")
        p = p / p.sum()
    lost = 1.0 - kept
    lost[lost < 1e-15] = 0.0
    x = np.full(n, 1.0 / n) if start is None else np.asarray(start, dtype=np.float64).copy()
    if x.shape != (n,) or not x.sum() > 0:
        x = np.full(n, 1.0 / n)
    x /= x.sum()
    d = config.damping
    delta = float("inf")
    iterations = 0
    for iterations in range(1, config.max_iter + 1):
        nxt = m @ x
        nxt *= d
        nxt += (d * float(lost @ x) + (1.0 - d)) * p
        x -= nxt
        delta = float(np.abs(x).sum())
        x = nxt
        if progress is not None:
            progress(iterations, delta)
        if delta < config.tol:
            break
    converged = delta < config.tol
    if not converged:
        logger.warning("LinkRank did not converge in %d iterations (delta %.3g)",
                       config.max_iter, delta)
    return LinkRankResult(x / x.sum(), iterations, converged, delta)
