"""Importance order of finished partitions (indexer.core.partition.grouping.importance_order and
indexer.core.bundle.reorder): a late-crawled, well-linked page becomes one of the first n matches."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from indexer.core.bundle.layout import (
    partition_dir,
    read_partition_manifest,
    write_partition_manifest,
)
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.reorder import partitions_to_reorder, reorder_partition
from indexer.core.bundle.verify import verify_bundle
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater
from indexer.core.documents.store import PartitionDocumentBundle
from indexer.core.errors import IndexStateError
from indexer.core.files.storage import atomic_write_many, frame
from indexer.core.ids import hash8
from indexer.core.partition.build import build_partition, load_partition_docs
from indexer.core.partition.grouping import Group, importance_order
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import search
from ranking.core.shard.local import LocalShard
from tests.unit.indexer.helpers import first_doc_ids
from tests.unit.ranking.helpers import Doc, index_document

STAR = "https://late.example/star"


def _hash(url: str) -> int:
    return int.from_bytes(hash8(url), "big")


def _importance(table: dict[str, float]):
    values = {_hash(url): v for url, v in table.items()}

    def importance(hashes: np.ndarray) -> np.ndarray:
        return np.array([values.get(int(h), 0.0) for h in hashes.tolist()])
    return importance


def _doc_ids(urls: list[str]) -> list[bytes]:
    return [hash8(u) + bytes(16) for u in urls]


def test_importance_order_key_is_crawl_doc_rank_plus_importance() -> None:
    urls = ["https://a/1", "https://a/2", "https://a/3", "https://a/4"]
    ids = _doc_ids(urls)
    # crawl order: groups 0 (members 0 and 3), 1, 2
    groups = [Group(0, (0, 3), 7), Group(1, (1,), 3), Group(2, (2,), 2)]
    out = importance_order(groups, ids, _importance({urls[2]: 0.5, urls[3]: 0.1}))
    keys = {g.representative: g.score for g in out}
    # key = log10(G - j) + the largest importance of the group's members
    assert keys[0] == pytest.approx(math.log10(3) + 0.1)
    assert keys[1] == pytest.approx(math.log10(2) + 0.0)
    assert keys[2] == pytest.approx(math.log10(1) + 0.5)
    assert [g.representative for g in out] == [0, 2, 1]
    assert out[0].members == (0, 3)


def test_importance_order_ties_keep_crawl_order() -> None:
    ids = _doc_ids([f"https://t/{i}" for i in range(3)])
    groups = [Group(i, (i,), 3 - i) for i in range(3)]
    # importance exactly cancels the crawl rank: every key is log10(3)
    bonus = {f"https://t/{i}": math.log10(3) - math.log10(3 - i) for i in range(3)}
    out = importance_order(groups, ids, _importance(bonus))
    assert [g.representative for g in out] == [0, 1, 2]


@pytest.mark.parametrize("bad", [np.array([np.nan, 0.0]), np.array([1.0])])
def test_importance_order_refuses_bad_importance(bad: np.ndarray) -> None:
    ids = _doc_ids(["https://b/1", "https://b/2"])
    groups = [Group(0, (0,), 2), Group(1, (1,), 1)]
    with pytest.raises(ValueError):
        importance_order(groups, ids, lambda hashes: bad)


def _crawl(path: Path, pages: int = 30, partition_docs: int = 1000) -> list[str]:
    """``pages`` pages that all hold "common", crawled in order; the last is STAR, the only
    one that also holds "answer" twice."""
    urls = [f"https://early.example/p{i}" for i in range(pages - 1)] + [STAR]
    docs = [Doc(u, ("common", "word", f"w{i}") + (("answer", "answer") if u == STAR else ()))
            for i, u in enumerate(urls)]
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=partition_docs)) as writer:
        writer.append([index_document(d) for d in docs])
        writer.close_partition()
    return urls


def _check_consistent(path: Path, urls: list[str], others: int = 0) -> None:
    report = verify_bundle(path)
    assert report.ok, report.problems
    with IndexBundleReader(path) as reader:
        # every page is still found by its own word, exactly once
        for i, url in enumerate(urls):
            assert first_doc_ids(reader, f"w{i}", 5) == [hash8(url)]
        assert len(first_doc_ids(reader, "common", 1000)) == len(urls) + others


@pytest.mark.parametrize("merged", [False, True])
def test_late_well_linked_page_becomes_a_candidate(tmp_path: Path, merged: bool) -> None:
    path = tmp_path / "bundle"
    urls = _crawl(path)
    if merged:
        assert DictionaryUpdater(path).update() == [0]
    with IndexBundleReader(path) as reader:
        assert hash8(STAR) not in first_doc_ids(reader, "common", 5)
        dm = reader.doc_map(0)
        before = reader.doc_rank(0, np.arange(dm.n))
        star_row = next(i for i in range(dm.n) if dm.doc_id(i)[:8] == hash8(STAR))
        assert before[star_row] == before.min()
    options = SearchOptions(min_results_to_group=5)
    with IndexBundleReader(path) as reader:
        found = search([LocalShard(reader)], "common", options).results
        assert STAR not in [r.url for r in found]

    result = reorder_partition(path, 0, _importance({STAR: 3.0}), "scores-1")
    assert result.remerged is merged and result.generation >= 1 and result.moved > 0
    assert partitions_to_reorder(path, "scores-1") == []
    assert partitions_to_reorder(path, "scores-2") == [0]
    manifest = read_partition_manifest(path, 0)
    assert manifest is not None and "merged" not in manifest
    assert sorted(p.name for p in partition_dir(path, 0).iterdir() if p.name != "MANIFEST") \
        == sorted(v for k, v in manifest["files"].items() if k != "last_entries" or not merged)
    with IndexBundleReader(path) as reader:
        assert first_doc_ids(reader, "common", 5)[0] == hash8(STAR)
        dm = reader.doc_map(0)
        assert dm.doc_id(0)[:8] == hash8(STAR)
        assert reader.doc_rank(0, 0) == reader.doc_rank(0, np.arange(dm.n)).max()
        found = search([LocalShard(reader)], "common", options).results
        assert STAR in [r.url for r in found]
    _check_consistent(path, urls)
    if not merged:  # the updater merges the re-ordered partition's own records
        assert DictionaryUpdater(path).update() == [0]
        _check_consistent(path, urls)


def test_reorder_refuses_the_active_partition(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    with IndexBundleWriter(path) as writer:
        writer.append([index_document(Doc("https://a.example/", ("x",)))])
    with pytest.raises(IndexStateError):
        reorder_partition(path, 0, _importance({}), "t")


def test_writer_reorders_while_it_appends(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    urls = _crawl(path, pages=12, partition_docs=12)
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=12)) as writer:
        writer.append([index_document(Doc("https://later.example/", ("common", "fresh")))])
        writer.reorder_partition(0, _importance({STAR: 2.0}), "s")
        writer.append([index_document(Doc("https://later.example/2", ("common", "fresh")))])
    with IndexBundleReader(path) as reader:
        assert first_doc_ids(reader, "common", 1) == [hash8(STAR)]
        assert len(first_doc_ids(reader, "fresh", 10)) == 2
    _check_consistent(path, urls, others=2)


def test_reorder_again_with_new_scores_and_a_killed_remerge(tmp_path: Path) -> None:
    """A second score generation re-orders again; a re-order that died between its MANIFEST
    and the dictionary (``"merged": false`` left behind) is served from the partition's own
    term records and finished by the dictionary updater."""
    path = tmp_path / "bundle"
    urls = _crawl(path)
    DictionaryUpdater(path).update()
    reorder_partition(path, 0, _importance({STAR: 3.0}), "one")
    reorder_partition(path, 0, _importance({urls[3]: 5.0}), "two")
    with IndexBundleReader(path) as reader:
        assert first_doc_ids(reader, "common", 2) == [hash8(urls[3]), hash8(urls[0])]
    # the state a kill between the MANIFEST and the dictionary commit leaves: the dictionary
    # as it was before the re-order, the new last_entries, and the MANIFEST's mark
    saved = tmp_path / "dictionary-before"
    shutil.copytree(path / "dictionary", saved)
    reorder_partition(path, 0, _importance({STAR: 3.0}), "three")
    shutil.rmtree(path / "dictionary")
    shutil.copytree(saved, path / "dictionary")
    manifest = read_partition_manifest(path, 0)
    assert manifest is not None
    docs = PartitionDocumentBundle(path / "documents")
    built = build_partition(*load_partition_docs(docs, 0), order=lambda g, ids: importance_order(
        g, ids, _importance({STAR: 3.0})))
    docs.close_files()
    atomic_write_many(partition_dir(path, 0), {manifest["files"]["last_entries"]:
                                               frame("last_entries", built.last_entries)})
    write_partition_manifest(path, 0, {**manifest, "merged": False})
    with IndexBundleReader(path) as reader:  # the dictionary is stale: not used for part 0
        assert first_doc_ids(reader, "common", 1) == [hash8(STAR)]
    assert verify_bundle(path).ok
    assert DictionaryUpdater(path).stale() == [0]
    DictionaryUpdater(path).update()
    assert DictionaryUpdater(path).stale() == []
    assert "merged" not in (read_partition_manifest(path, 0) or {})
    _check_consistent(path, urls)
    with IndexBundleReader(path) as reader:
        assert first_doc_ids(reader, "common", 1) == [hash8(STAR)]
