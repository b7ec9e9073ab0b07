"""Write -> read round trips of whole bundles (tmp_path): postings, positions, documents."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import make_doc

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater
from indexer.core.errors import IndexLockedError
from indexer.core.ids import DocType


def read_term(reader: IndexBundleReader, term: str) -> list[tuple[int, int, list[int]]]:
    cursor = reader.postings(term)
    out = []
    for block in cursor:
        pos, counts = cursor.positions(block)
        for doc, p in zip(block.doc_index.tolist(), np.split(pos, np.cumsum(counts)[:-1]),
                          strict=True):
            out.append((block.partition, doc, p.tolist()))
    return out


def expected_postings(docs, per_partition: int) -> dict[str, list[tuple[int, int, list[int]]]]:
    """All distinct pages: every doc is its own group and doc_map order is append order."""
    model: dict[str, list] = {}
    for i, doc in enumerate(docs):
        part, index = divmod(i, per_partition)
        for term, positions in doc.terms.items():
            model.setdefault(term, []).append((part, index, list(positions)))
        for meta in doc.meta_words:
            model.setdefault(meta, []).append((part, index, []))
    return model


def test_postings_round_trip_across_partitions_and_merge(tmp_path: Path) -> None:
    docs = [make_doc(i) for i in range(250)]
    with IndexBundleWriter(tmp_path, BundleConfig(max_partition_docs=100)) as writer:
        for start in range(0, 250, 50):
            writer.append(docs[start:start + 50])
        assert writer.active_partition == 2
    model = expected_postings(docs, 100)
    reader = IndexBundleReader(tmp_path)  # partitions 0, 1 closed, not merged yet
    before = {t: read_term(reader, t) for t in model}
    assert before == model
    assert DictionaryUpdater(tmp_path).update() == [0, 1]
    assert DictionaryUpdater(tmp_path).update() == []
    reader.refresh()
    assert reader.dictionary.next_partition == 2
    after = {t: read_term(reader, t) for t in model}
    assert after == model
    stats = reader.collection_stats()
    assert stats.documents == 250 and stats.partition_sizes == (100, 100, 50)
    assert stats.average_length == pytest.approx(sum(d.length for d in docs) / 250)
    for term in ("w1", "w2", "site:h1.example"):
        ts = reader.term_stats(term)
        assert ts.docs == len(model[term])
        assert ts.occurrences == sum(len(p) for _, _, p in model[term])
    # documents
    for i, doc in enumerate(docs[:40]):
        assert reader.summary(doc.doc_id) == dict(doc.summary)
        assert reader.cached_page(doc.doc_id) == doc.cached_page
        part, index = divmod(i, 100)
        assert reader.doc_id(part, index) == doc.doc_id
        assert reader.document_length(part, index) == doc.length
        assert reader.region_weights(part, index) == [tuple(r) for r in doc.region_weights]
        assert reader.classifier_scores(part, index) == [0.25]
    assert reader.summary(b"\0" * 24) is None
    ranks = reader.doc_rank(0, np.arange(100))
    assert np.all(np.diff(ranks) < 0) and ranks[0] == pytest.approx(np.log10(249))
    reader.close()


def test_skip_to_across_partitions(tmp_path: Path) -> None:
    docs = [make_doc(i) for i in range(300)]
    with IndexBundleWriter(tmp_path, BundleConfig(max_partition_docs=100)) as writer:
        writer.append(docs)
    DictionaryUpdater(tmp_path).update()
    reader = IndexBundleReader(tmp_path)
    full = read_term(reader, "w1")
    for target in [(0, 0), (0, 57), (1, 3), (1, 99), (2, 50), (3, 0)]:
        cursor = reader.postings("w1")
        block = cursor.skip_to(*target)
        rest = [(p, d) for p, d, _ in full if (p, d) >= target]
        if not rest:
            assert block is None
            continue
        assert (block.partition, int(block.doc_index[0])) == rest[0]
        pos, counts = cursor.positions(block)
        assert pos[:counts[0]].tolist() == {(p, d): ps for p, d, ps in full}[rest[0]]


def test_active_partition_is_searchable_after_refresh(tmp_path: Path) -> None:
    writer = IndexBundleWriter(tmp_path, BundleConfig(refresh_every_docs=0))
    writer.append([make_doc(i) for i in range(10)])
    reader = IndexBundleReader(tmp_path)
    assert reader.collection_stats().documents == 0  # not refreshed yet
    writer.refresh()
    reader.refresh()
    assert reader.collection_stats().documents == 10
    assert reader.term_stats("site:h0.example").docs == 2
    writer.append([make_doc(i) for i in range(10, 20)])
    writer.refresh()
    assert reader.collection_stats().documents == 10  # a snapshot until refreshed
    reader.refresh()
    assert reader.collection_stats().documents == 20
    writer.close()


def test_an_unmerged_partitions_terms_are_read_on_the_first_lookup(tmp_path: Path) -> None:
    """A reader that looks no term up (link analysis, phrase counting) never reads the active
    partition's term table; one that does reads the table of its own snapshot, even after two
    writer refreshes have deleted that generation's files."""
    writer = IndexBundleWriter(tmp_path, BundleConfig(refresh_every_docs=0))
    writer.append([make_doc(i) for i in range(10)])
    writer.refresh()
    reader = IndexBundleReader(tmp_path)
    (part,) = reader.partitions
    assert part.unmerged and part._terms is None  # not read at the snapshot
    assert reader.doc_map(0).m == 10
    assert part._terms is None
    table = sorted(tmp_path.glob("positions_doc_map/0/last_entries*"))
    for more in (range(10, 20), range(20, 30)):
        writer.append([make_doc(i) for i in more])
        writer.refresh()
    assert not any(path.exists() for path in table)  # the snapshot's generation is gone
    assert reader.term_stats("site:h0.example").docs == 2  # read from the open file
    assert part._terms is not None
    reader.close()
    writer.close()


def test_a_close_right_after_a_refresh_keeps_the_refreshed_files(tmp_path: Path) -> None:
    """A crawl's end refreshes (link analysis must read every document) and then closes: the
    close gives the refreshed files the final names instead of building them again, and they
    are the bytes a close without the refresh writes."""
    docs = [make_doc(i) for i in range(40)]
    built = {}
    for name, refresh in (("plain", False), ("refreshed", True)):
        writer = IndexBundleWriter(tmp_path / name, BundleConfig(refresh_every_docs=0))
        writer.append(docs)
        if refresh:
            writer.refresh()
            inode = (tmp_path / name / "positions_doc_map" / "0" / "postings.g1").stat().st_ino
        assert writer.close_partition() == 0
        writer.close()
        pdir = tmp_path / name / "positions_doc_map" / "0"
        built[name] = {p.name: p.read_bytes() for p in pdir.iterdir() if p.name != "MANIFEST"}
        manifest = json.loads((pdir / "MANIFEST").read_text().split("\n", 1)[1])
        assert manifest["state"] == "closed" and manifest["files"]["postings"] == "postings"
        if refresh:  # the refreshed file under its final name: linked, not written again
            assert (pdir / "postings").stat().st_ino == inode
    assert built["refreshed"] == built["plain"]
    assert not any(".g" in name for name in built["refreshed"])
    reader = IndexBundleReader(tmp_path / "refreshed")
    assert reader.collection_stats().documents == 40
    assert reader.term_stats("site:h0.example").docs == 8
    reader.close()
    # appended after the refresh: built again, not linked
    writer = IndexBundleWriter(tmp_path / "later", BundleConfig(refresh_every_docs=0))
    writer.append(docs[:20])
    writer.refresh()
    writer.append(docs[20:])
    writer.close_partition()
    writer.close()
    reader = IndexBundleReader(tmp_path / "later")
    assert reader.collection_stats().documents == 40
    reader.close()


def test_links_fold_into_their_target(tmp_path: Path) -> None:
    page = make_doc(1, url="https://t.example/", words=5)
    link = make_doc(2, url="https://t.example/", doc_type=DocType.LINK, words=3, cached=False)
    other = make_doc(3, url="https://o.example/", words=4)
    with IndexBundleWriter(tmp_path) as writer:
        writer.append([other, link, page])
    reader = IndexBundleReader(tmp_path)
    # scores: other 3, link 2, page 1 -> t group 3 (rep: the page), other 3; tie -> earlier rep
    assert reader.doc_map(0).n == 2
    assert reader.doc_id(0, 0) == other.doc_id and reader.doc_id(0, 1) == page.doc_id
    assert reader.document_length(0, 1) == page.length + link.length
    got = {}
    for term, positions in link.terms.items():
        for _part, doc, pos in read_term(reader, term):
            if doc == 1:
                got[term] = pos
        shifted = [p + page.length for p in positions]
        assert set(shifted) <= set(got[term])
    assert reader.summary(link.doc_id)["url"] == "https://t.example/"


def test_rollover_by_bytes_and_reopen(tmp_path: Path) -> None:
    cfg = BundleConfig(max_partition_bytes=6000)
    with IndexBundleWriter(tmp_path, cfg) as writer:
        writer.append([make_doc(i, words=200) for i in range(30)])
        assert writer.active_partition > 1
    with IndexBundleWriter(tmp_path, cfg) as writer:
        assert writer.active_documents > 0
        writer.append([make_doc(100)])
    reader = IndexBundleReader(tmp_path)
    assert reader.collection_stats().stored_documents == 31
    assert reader.summary(make_doc(100).doc_id) is not None


def test_single_writer(tmp_path: Path) -> None:
    with IndexBundleWriter(tmp_path), pytest.raises(IndexLockedError):
        IndexBundleWriter(tmp_path)


def test_bad_positions_rejected_before_storing(tmp_path: Path) -> None:
    doc = make_doc(1)
    bad = type(doc)(**{**{f: getattr(doc, f) for f in doc.__dataclass_fields__},
                       "terms": {"a": [3, 3]}})
    with IndexBundleWriter(tmp_path) as writer:
        with pytest.raises(ValueError):
            writer.append([bad])
        writer.append([doc])
    assert IndexBundleReader(tmp_path).collection_stats().stored_documents == 1


def test_a_close_without_hard_links_builds_the_files_again(tmp_path: Path, monkeypatch,
                                                          caplog) -> None:
    """On a file system that refuses hard links (a fault this machine's cannot cause, so
    ``os.link`` is made to refuse) the close after a refresh writes the files instead."""
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise OSError(1, "Operation not permitted")

    writer = IndexBundleWriter(tmp_path, BundleConfig(refresh_every_docs=0))
    writer.append([make_doc(i) for i in range(12)])
    writer.refresh()
    monkeypatch.setattr(os, "link", refuse)
    with caplog.at_level("INFO", logger="indexer.core.bundle.writer"):
        assert writer.close_partition() == 0
    assert "refreshed files not linked" in caplog.text
    writer.close()
    reader = IndexBundleReader(tmp_path)
    assert reader.collection_stats().documents == 12
    assert reader.term_stats("site:h0.example").docs == 3
    reader.close()
