"""Near-duplicate folding (ranking.core.scoring.near_folding): one group per cluster, its
canonical shown when it is among the candidates, the maxima kept, other groups untouched."""

from __future__ import annotations

import numpy as np

from indexer.core.ids import DocType, hash7, make_doc_id
from indexer.core.signals.near_clusters import Cluster, NearDuplicateClusters, write_clusters
from ranking.core.scoring.grouping import group_candidates
from ranking.core.scoring.near_folding import fold_near_duplicates

CANONICAL = "https://docs.example/stable/page.html"
COPY = "https://docs.example/latest/page.html"
MIRROR = "https://mirror.example/page.html"
OTHER = "https://docs.example/other.html"


def doc_ids(urls: list[str]) -> np.ndarray:
    rows = [make_doc_id(u, DocType.PAGE, hash7(u), u.split("/")[2]) for u in urls]
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(urls), 24)


def clusters(tmp_path) -> NearDuplicateClusters:
    return NearDuplicateClusters(write_clusters(tmp_path / "nd.npz",
                                                [Cluster((CANONICAL, COPY, MIRROR))]))


def test_cluster_folds_into_its_canonical(tmp_path) -> None:
    urls = [OTHER, COPY, CANONICAL, MIRROR]
    ids = doc_ids(urls)
    doc_rank = np.array([1.0, 3.0, 0.5, 0.2])
    relevance = np.array([2.0, 1.0, 0.8, 4.0])
    proximity = np.array([0.1, 0.3, 0.0, 0.2])
    groups = group_candidates(ids, doc_rank, relevance, proximity)
    folded = fold_near_duplicates(ids, groups, clusters(tmp_path))
    assert len(folded.groups) == 2
    reps = [urls[r] for r in folded.groups.rep.tolist()]
    assert sorted(reps) == sorted([OTHER, CANONICAL])
    at = reps.index(CANONICAL)
    assert folded.groups.doc_rank[at] == 3.0 and folded.groups.relevance[at] == 4.0
    assert folded.groups.proximity[at] == 0.3
    assert folded.similar[at] == 2 and folded.similar[1 - at] == 0
    assert folded.cluster[1 - at] == -1
    # every candidate row belongs to its folded group
    member_urls = {urls[r] for r in folded.groups.members(at).tolist()}
    assert member_urls == {COPY, CANONICAL, MIRROR}


def test_without_the_canonical_the_best_scoring_member_shows(tmp_path) -> None:
    urls = [COPY, MIRROR, OTHER]
    ids = doc_ids(urls)
    groups = group_candidates(ids, np.array([1.0, 2.0, 0.5]), np.array([1.0, 3.0, 0.5]),
                              np.zeros(3))
    folded = fold_near_duplicates(ids, groups, clusters(tmp_path))
    reps = [urls[r] for r in folded.groups.rep.tolist()]
    assert MIRROR in reps and COPY not in reps
    assert folded.similar[reps.index(MIRROR)] == 2


def test_no_clusters_or_one_member_leaves_groups_as_they_were(tmp_path) -> None:
    urls = [OTHER, COPY]
    ids = doc_ids(urls)
    groups = group_candidates(ids, np.array([1.0, 2.0]), np.ones(2), np.zeros(2))
    for source in (None, clusters(tmp_path)):
        folded = fold_near_duplicates(ids, groups, source)
        assert folded.groups is groups
    assert fold_near_duplicates(ids, groups, clusters(tmp_path)).similar.tolist() == [0, 2]
