"""Same-domain limits: what one owner's links may give a page (Nutch's WebGraph, seed 002).

Layer: ``linkgraph.core`` (numpy). :mod:`.linkrank` weighs each inlink by these values and
:mod:`.trust` splits by them, so that neither can be bought by the number of pages one owner
puts up.

Nutch's WebGraph ignores links inside a host or a domain (``link.ignore.internal.host``,
``link.ignore.internal.domain``) and keeps a page's outlinks to one domain once
(``link.ignore.limit.domain``). Ignoring internal links outright would leave a site search
(one host, the common case here) without any link analysis, so internal links are weighed
down instead (``same_host_weight``, ``same_domain_weight``). And the limit that matters against
a link farm is on the receiving side: fifty pages on fifty subdomains of one domain, each
linking a page once, would each pass Nutch's per-page limit. Here the links a page receives
from the pages of one registered domain (:func:`indexer.core.urls.registered_domain`, hosts
other than the page's own) share at most ``per_page`` links' worth: with ``k`` such links each
counts ``min(1, per_page / k)`` (the host-to-host weighting of Bharat and Henzinger's topic
distillation, by owner rather than by host name). A farm then gives its target what one of its
pages gives, and three independent sites give three times that.

Every function returns one value per *inlink*, in the inlink CSR order of
:class:`.graph.WebGraph` (``in_idx``), or None when every value would be 1.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .graph import WebGraph

F64 = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


def inlink_targets(graph: WebGraph) -> npt.NDArray[np.int64]:
    """The target node of every inlink (inlink CSR order)."""
    return np.repeat(np.arange(graph.n, dtype=np.int64), graph.in_count)


def same_host_inlinks(graph: WebGraph, targets: npt.NDArray[np.int64] | None = None) -> Bools:
    """Per inlink: are its source and target on one host? (``targets``: the inlinks'
    :func:`inlink_targets`, when the caller has them.)"""
    hosts = np.asarray(graph.host_hash)
    if targets is None:
        targets = inlink_targets(graph)
    return hosts[np.asarray(graph.in_idx)] == hosts[targets]


def cross_domain_inlinks(graph: WebGraph) -> Bools:
    """Per inlink: do its source and target lie in two registered domains?"""
    domains = graph.domain_hash()
    return domains[np.asarray(graph.in_idx)] != domains[inlink_targets(graph)]


def node_domains(graph: WebGraph) -> tuple[npt.NDArray[np.int64], int]:
    """Per node, a dense id of its registered domain (``0..domains-1``), and ``domains``."""
    _, ids = np.unique(graph.domain_hash(), return_inverse=True)
    ids = ids.reshape(-1).astype(np.int64)
    return ids, int(ids.max(initial=-1)) + 1


def _group_sizes(keys: npt.NDArray[np.int64], key_bits: int) -> npt.NDArray[np.int64]:
    """For each key, how many keys equal it. The positions ride in the low bits of the keys
    when they fit, so that one plain sort (several times faster than an argsort) groups them."""
    count = int(keys.shape[0])
    pos_bits = max(count - 1, 0).bit_length()
    if key_bits + pos_bits <= 63:
        packed = np.sort((keys << pos_bits) | np.arange(count, dtype=np.int64))
        sorted_keys, order = packed >> pos_bits, packed & ((1 << pos_bits) - 1)
    else:
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
    run = np.zeros(count, dtype=np.int64)  # which run of equal keys each sorted key is in
    np.cumsum(sorted_keys[1:] != sorted_keys[:-1], out=run[1:])
    sizes = np.empty(count, dtype=np.int64)
    sizes[order] = np.bincount(run)[run]
    return sizes


def inlink_discounts(graph: WebGraph, same_host_weight: float, same_domain_weight: float,
                     per_page: float) -> F64 | None:
    """Per inlink, the product of the internal-link weight (``same_host_weight`` inside one
    host, ``same_domain_weight`` between two hosts of one registered domain, else 1) and the
    domain limit's share (``min(1, per_page / k)``, see the module; ``per_page`` 0: none);
    None when every value is 1."""
    if not graph.edges or (same_host_weight == 1.0 and same_domain_weight == 1.0
                           and per_page <= 0):
        return None
    targets = inlink_targets(graph)
    same_host = same_host_inlinks(graph, targets)
    weights = np.where(same_host, same_host_weight, 1.0)
    if same_domain_weight == 1.0 and per_page <= 0:
        return weights
    domain, domains = node_domains(graph)
    cross = np.flatnonzero(~same_host)
    sources = np.asarray(graph.in_idx)[cross]
    if same_domain_weight != 1.0:
        weights[cross[domain[sources] == domain[targets[cross]]]] = same_domain_weight
    if per_page > 0 and cross.size:
        key_bits = (max(graph.n - 1, 0) * domains + domains).bit_length()
        sizes = _group_sizes(targets[cross] * domains + domain[sources], key_bits)
        weights[cross] *= np.minimum(1.0, per_page / sizes)
    return weights


def domain_link_shares(graph: WebGraph, per_page: float) -> F64 | None:
    """Per inlink, the domain limit's share alone: ``min(1, per_page / k)``, ``k`` the number
    of links the target receives from pages of the source's registered domain on hosts other
    than the target's; 1 for a link inside the target's host. None when ``per_page`` is 0
    (no limit) or nothing is limited."""
    shares = inlink_discounts(graph, 1.0, 1.0, per_page)
    if shares is None or bool((shares == 1.0).all()):
        return None
    return shares
