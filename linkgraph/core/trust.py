"""Trust: seed policies (favor, default, distrust) spread through the web graph (seed 004).

Layer: ``linkgraph.core`` (numpy + scipy.sparse). The glue turns the crawl's seed sites
into :class:`TrustSeed` values; the result is one signed trust value per node.

Two fields are propagated along outlinks, level by level (a breadth-first wave, vectorised):
``favor`` from favored seeds and ``distrust`` from distrusted seeds, each starting at the seed's
trust weight. How a page's value reaches its outlinks (TrustRank's two kinds of attenuation):

* ``dampening``: a page gets ``beta`` times the largest value among the pages linking to it, so
  trust falls geometrically with the distance from the seed (``w * beta**k`` at k links).
* ``splitting`` (OPIC-like): a page's value is split evenly among its outlinks, and a page gets
  ``beta`` times the sum of the shares it receives, plus its own seed weight. The links one
  registered domain's pages give a page of another host count ``domain_links_per_page`` links
  at most (:func:`.domain_limits.domain_link_shares`, as in LinkRank), so a farm of many pages
  of one owner cannot add up favor or distrust. Dampening takes the largest arriving value,
  which the number of links cannot raise.

Several policies reaching one page (the rule seed 004 leaves open):

1. A seed keeps its own policy and weight, whatever links to it. A ``default`` seed is neutral
   and a barrier: it has no favor or distrust and passes none on.
2. Elsewhere the stronger arriving value wins and the page takes that policy alone: favored when
   ``favor >= distrust`` (ties favor), distrusted otherwise; the losing field is set to 0. So
   distrust spreads to the pages a distrusted page links to, unless they are favored, and a
   favored page never passes distrust on (nor a distrusted page favor).
3. A page's trust is ``favor - distrust``: positive for favored pages, negative for distrusted
   ones, 0 for pages no seed reaches.

With ``within_domain`` (the crawl's "seed policies stay in their domain", seed 004: "or
perhaps only for pages belonging to the same domain"), a link between two registered domains
carries neither favor nor distrust.

The wave runs ``max_depth`` levels or until nothing changes by more than ``tol``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from indexer.core.policies import CrawlPolicy

from .domain_limits import cross_domain_inlinks, domain_link_shares
from .graph import WebGraph


class TrustMethod(enum.StrEnum):
    DAMPENING = "dampening"
    SPLITTING = "splitting"


@dataclass(frozen=True, slots=True)
class TrustSeed:
    url: str
    policy: CrawlPolicy = CrawlPolicy.DEFAULT
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class TrustConfig:
    method: TrustMethod = TrustMethod.DAMPENING
    beta: float = 0.85  # attenuation per link
    max_depth: int = 30
    tol: float = 1e-9
    domain_links_per_page: float = 1.0  # splitting only; 0 = no limit (see the module)
    within_domain: bool = False  # favor and distrust never cross a registered domain

    def __post_init__(self) -> None:
        if not 0.0 < self.beta < 1.0:
            raise ValueError("beta must be in (0, 1)")
        if self.max_depth < 0:
            raise ValueError("max_depth must be >= 0")
        if not self.domain_links_per_page >= 0:
            raise ValueError("domain_links_per_page must be >= 0")


@dataclass(frozen=True, slots=True)
class TrustResult:
    trust: npt.NDArray[np.float64]  # favor - distrust, per node
    favor: npt.NDArray[np.float64]
    distrust: npt.NDArray[np.float64]
    levels: int
    seeds_found: int


def _max_in(graph: WebGraph, values: npt.NDArray[np.float64],
            carried: npt.NDArray[np.bool_] | None) -> npt.NDArray[np.float64]:
    """For every node, the largest value (values are >= 0) among the nodes linking to it over
    the inlinks ``carried`` marks (all when None); 0 without such inlinks."""
    n = graph.n
    out = np.zeros(n)
    if graph.edges == 0:
        return out
    gathered = values[np.asarray(graph.in_idx)]
    if carried is not None:
        gathered = np.where(carried, gathered, 0.0)
    ptr = np.asarray(graph.in_ptr)
    has = ptr[1:] > ptr[:-1]
    out[has] = np.maximum.reduceat(gathered, ptr[:-1][has])
    return out


def propagate_trust(graph: WebGraph, seeds: Sequence[TrustSeed],
                    config: TrustConfig = TrustConfig()) -> TrustResult:
    """Favor, distrust and signed trust per node (see the module docstring)."""
    n = graph.n
    seed_favor = np.zeros(n)
    seed_distrust = np.zeros(n)
    is_seed = np.zeros(n, dtype=bool)
    found = 0
    for seed in seeds:
        node = graph.node_id(seed.url)
        if node < 0:
            continue
        found += 1
        is_seed[node] = True
        weight = max(0.0, float(seed.weight))
        if seed.policy == CrawlPolicy.FAVOR:
            seed_favor[node] = max(seed_favor[node], weight)
        elif seed.policy == CrawlPolicy.DISTRUST:
            seed_distrust[node] = max(seed_distrust[node], weight)
    # A url listed both as favored and distrusted: the larger weight wins, favor on ties.
    both = (seed_favor > 0) & (seed_distrust > 0)
    seed_favor[both & (seed_distrust > seed_favor)] = 0.0
    seed_distrust[both & (seed_favor >= seed_distrust)] = 0.0
    favor, distrust = seed_favor.copy(), seed_distrust.copy()
    carried = ~cross_domain_inlinks(graph) if config.within_domain and graph.edges else None
    split: sp.csr_matrix | None = None
    if config.method == TrustMethod.SPLITTING and graph.edges:
        out_count = graph.out_count.astype(np.float64)
        inv = np.zeros(n)
        np.divide(1.0, out_count, out=inv, where=out_count > 0)
        in_idx = np.asarray(graph.in_idx)
        shares = inv[in_idx]
        limit = domain_link_shares(graph, config.domain_links_per_page)
        if limit is not None:
            shares *= limit
        if carried is not None:
            shares *= carried
        split = sp.csr_matrix((shares, in_idx, np.asarray(graph.in_ptr)), shape=(n, n))
    levels = 0
    for levels in range(1, config.max_depth + 1):  # noqa: B007 (reported)
        if config.method == TrustMethod.DAMPENING:
            f_new = config.beta * _max_in(graph, favor, carried)
            d_new = config.beta * _max_in(graph, distrust, carried)
        elif split is not None:
            f_new = config.beta * (split @ favor)
            d_new = config.beta * (split @ distrust)
        else:
            f_new, d_new = np.zeros(n), np.zeros(n)
        if config.method == TrustMethod.DAMPENING:
            f_new = np.maximum(f_new, seed_favor)
            d_new = np.maximum(d_new, seed_distrust)
        else:
            f_new += seed_favor
            d_new += seed_distrust
        favored = f_new >= d_new
        d_new[favored] = 0.0
        f_new[~favored] = 0.0
        f_new[is_seed] = seed_favor[is_seed]
        d_new[is_seed] = seed_distrust[is_seed]
        change = max(float(np.abs(f_new - favor).max(initial=0.0)),
                     float(np.abs(d_new - distrust).max(initial=0.0)))
        favor, distrust = f_new, d_new
        if change <= config.tol:
            break
    return TrustResult(favor - distrust, favor, distrust, levels, found)


def seed_personalization(graph: WebGraph, seeds: Sequence[TrustSeed]) -> npt.NDArray[np.float64]:
    """A LinkRank personalisation vector from the favored seeds (uniform when there are none)."""
    p = np.zeros(graph.n)
    for seed in seeds:
        if seed.policy == CrawlPolicy.FAVOR:
            node = graph.node_id(seed.url)
            if node >= 0:
                p[node] += max(0.0, seed.weight)
    if not p.sum() > 0:
        p[:] = 1.0
    return p


