"""Near-duplicate folding: one result per near-duplicate cluster, after the exact grouping.

Layer: ``ranking.core.scoring``. The search pipeline (``ranking.core.search.pipeline``) calls
:func:`fold_near_duplicates` on the groups of :func:`.grouping.group_rows` (same url, same
text hash) with the crawl's clusters (:class:`indexer.core.signals.near_clusters.
NearDuplicateClusters`, made by the link analysis). Groups whose representatives' urls are in
one cluster merge into one group:

* its representative is the cluster's canonical when the canonical's group is among the
  candidates (rel=canonical first, then importance: the cluster file's rule), else the group
  with the highest grouping score (``score_weights`` as :func:`.grouping.grouping_weights`);
* its Doc Rank, relevance and proximity are the maxima of the merged groups' (near-duplicates
  carry nearly the same text: nothing adds up);
* :attr:`Folded.similar` is the number of the cluster's other pages (all of them, in the
  index or not among the candidates): what the result's "n similar pages" link shows.

Groups outside every cluster are unchanged, so without a clusters file (or with ``raw:``) the
groups are exactly the grouping's. Cost: one sorted lookup per group (numpy).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from indexer.core.signals.near_clusters import NearDuplicateClusters
from ranking.core.scoring.grouping import Groups

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded groups, and per group its cluster (-1: none) and its cluster's other
    pages (0: none)."""

    groups: Groups
    cluster: IntArray
    similar: IntArray


def url_hashes(doc_ids: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The url hash (the first 8 bytes, big-endian) of each doc id row."""
    return np.ascontiguousarray(doc_ids[:, :8]).view(">u8").ravel().astype(np.uint64)


def unfolded(groups: Groups) -> Folded:
    n = len(groups)
    return Folded(groups, np.full(n, -1, np.int64), np.zeros(n, np.int64))


def fold_near_duplicates(doc_ids: npt.NDArray[np.uint8], groups: Groups,
                         clusters: NearDuplicateClusters | None,
                         score_weights: tuple[float, float, float] = (1.0, 1.0, 0.0)
                         ) -> Folded:
    """Merge the groups whose representatives are in one near-duplicate cluster (see the
    module)."""
    n = len(groups)
    if clusters is None or n == 0 or len(clusters) == 0:
        return unfolded(groups)
    cluster, canonical = clusters.lookup(url_hashes(doc_ids[groups.rep]))
    if int((cluster >= 0).sum()) < 2:
        similar = np.where(cluster >= 0, clusters.size[np.maximum(cluster, 0)] - 1, 0)
        return Folded(groups, cluster, similar.astype(np.int64))
    # a key per group: the first group of its cluster, or itself (groups keep their order)
    index = np.arange(n, dtype=np.int64)
    first_of = np.full(len(clusters), n, dtype=np.int64)
    inside = cluster >= 0
    np.minimum.at(first_of, cluster[inside], index[inside])
    key = np.where(inside, first_of[np.maximum(cluster, 0)], index)
    _, new = np.unique(key, return_inverse=True)
    new = new.ravel()
    m = int(new.max()) + 1
    w_dr, w_rel, w_px = score_weights
    score = w_dr * groups.doc_rank + w_rel * groups.relevance + w_px * groups.proximity
    # the canonical first, then the best score, then the earlier group
    order = np.lexsort((np.arange(n), -score, ~canonical, new))
    first = np.ones(n, dtype=bool)
    first[1:] = new[order][1:] != new[order][:-1]
    head = order[first]                                  # per new group, ascending
    doc_rank = np.full(m, -np.inf)
    np.maximum.at(doc_rank, new, groups.doc_rank)
    relevance = np.full(m, -np.inf)
    np.maximum.at(relevance, new, groups.relevance)
    proximity = np.full(m, -np.inf)
    np.maximum.at(proximity, new, groups.proximity)
    folded = Groups(groups.rep[head].astype(np.int64), new[groups.member_group].astype(np.int64),
                    doc_rank, relevance, proximity)
    cluster_of = cluster[head]
    similar = np.where(cluster_of >= 0, clusters.size[np.maximum(cluster_of, 0)] - 1, 0)
    return Folded(folded, cluster_of.astype(np.int64), similar.astype(np.int64))
