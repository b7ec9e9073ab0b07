"""Near-duplicate clusters (indexer.core.signals.near_clusters): the canonical rule (rel=canonical
first, then importance), no chains, the file's round trip and its checks."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.core.errors import CorruptGraphError, GraphNotFound
from indexer.core.signals.near_clusters import (
    NearDuplicateClusters,
    PageSignature,
    form_clusters,
    write_clusters,
)
from indexer.core.urls import hashes_of

BASE = 0x0123_4567_89AB_CDEF


def flip(value: int, *bits: int) -> int:
    for bit in bits:
        value ^= 1 << bit
    return value


def test_most_important_page_is_the_canonical() -> None:
    pages = [PageSignature("https://a.example/v1/page.html", flip(BASE, 1), importance=1.0),
             PageSignature("https://a.example/v2/page.html", BASE, importance=5.0),
             PageSignature("https://a.example/other.html", flip(BASE, *range(20)),
                           importance=9.0)]
    (cluster,) = form_clusters(pages)
    assert cluster.urls == ("https://a.example/v2/page.html", "https://a.example/v1/page.html")
    assert not cluster.cross_host


def test_rel_canonical_wins_over_importance_and_crosses_hosts() -> None:
    target = "https://docs.example/stable/page.html"
    pages = [PageSignature("https://mirror.example/page.html", BASE, target, importance=50.0),
             PageSignature("https://docs.example/latest/page.html", flip(BASE, 3), target,
                           importance=20.0),
             PageSignature(target, flip(BASE, 60), target, importance=0.1)]
    (cluster,) = form_clusters(pages, k=3)
    assert cluster.canonical == target
    assert set(cluster.urls) == {p.url for p in pages}
    assert cluster.cross_host


def test_members_are_within_k_of_the_canonical_not_chained() -> None:
    # a chain a - b - c, 3 bits a step: c is 6 bits from a, so it starts its own cluster
    a, b, c = BASE, flip(BASE, 1, 2, 3), flip(BASE, 1, 2, 3, 10, 11, 12)
    pages = [PageSignature("https://x.example/a", a, importance=3.0),
             PageSignature("https://x.example/b", b, importance=2.0),
             PageSignature("https://x.example/c", c, importance=1.0)]
    clusters = form_clusters(pages, k=3)
    assert [cl.urls for cl in clusters] == [("https://x.example/a", "https://x.example/b")]
    assert form_clusters(pages, k=2) == []


def test_pages_with_other_title_keys_do_not_cluster() -> None:
    pages = [PageSignature("https://x.example/takewhile", BASE, title_key="takewhile"),
             PageSignature("https://x.example/skipwhile", flip(BASE, 1), title_key="skipwhile"),
             PageSignature("https://y.example/takewhile", flip(BASE, 2), title_key="takewhile")]
    (cluster,) = form_clusters(pages, k=3)
    assert set(cluster.urls) == {"https://x.example/takewhile", "https://y.example/takewhile"}


def test_pages_without_fingerprint_or_repeated_are_left_out() -> None:
    pages = [PageSignature("https://x.example/a", 0), PageSignature("https://x.example/b", 0),
             PageSignature("https://x.example/c", BASE), PageSignature("https://x.example/c", BASE)]
    assert form_clusters(pages) == []


def test_file_round_trip_and_lookup(tmp_path) -> None:
    pages = [PageSignature(f"https://h{i % 3}.example/p{i}", flip(BASE * (i // 4 + 1), i % 4),
                           importance=float(i)) for i in range(40)]
    clusters = form_clusters(pages, k=3)
    assert clusters and all(len(c.urls) >= 2 for c in clusters)
    path = write_clusters(tmp_path / "near_duplicates.npz", clusters, {"k": 3})
    read = NearDuplicateClusters(path)
    assert len(read) == len(clusters)
    assert read.meta["folded"] == sum(len(c.urls) - 1 for c in clusters)
    for number, cluster in enumerate(clusters):
        assert read.members(number) == [cluster.canonical, *sorted(cluster.urls[1:])]
        ids, canonical = read.lookup(hashes_of(list(cluster.urls)))
        assert ids.tolist() == [number] * len(cluster.urls)
        assert canonical.tolist() == [True] + [False] * (len(cluster.urls) - 1)
    ids, canonical = read.lookup(hashes_of(["https://nowhere.example/"]))
    assert ids.tolist() == [-1] and not canonical.any()
    assert read.cluster_of("https://nowhere.example/") == -1
    assert read.members(-1) == [] and read.members(len(clusters)) == []


def test_empty_missing_and_corrupt_files(tmp_path) -> None:
    empty = NearDuplicateClusters(write_clusters(tmp_path / "empty.npz", []))
    assert len(empty) == 0 and empty.lookup(np.array([1], np.uint64))[0].tolist() == [-1]
    with pytest.raises(GraphNotFound):
        NearDuplicateClusters(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(CorruptGraphError):
        NearDuplicateClusters(bad)
