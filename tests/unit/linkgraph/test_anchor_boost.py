"""Anchor fields (issue 8, seed 002's AnchorFields; issue 35, item 3): a link document's anchor
text weighs its source page's link score. The boost is applied when a partition's files are
built (refresh, close, re-order) from the crawl's newest scores, never stored: documents indexed
before the crawl's first link analysis get it from the next build, and a newer analysis
replaces it instead of compounding it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.processing.indexing import to_index_documents
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.index_order import current_anchor_boost, link_anchor_boost
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.transport.wire import document_to_wire
from indexer.core.bundle.layout import DOCUMENTS
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.reorder import finished_partitions
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.documents.doc_index import decode_doc_index
from indexer.core.documents.store import PartitionDocumentBundle
from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import LinkScores, anchor_boost, write_scores
from indexer.core.urls import hashes_of
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from .helpers import graph_of, page

TS = 1_700_000_321
HUB = "https://hub.example/"          # a page many others link to: a high LinkRank
LONELY = "https://lonely.example/"    # nobody links to it
T_HUB = "https://a.example/zebra.html"     # linked from HUB with the anchor "striped equine"
T_LONELY = "https://b.example/zebra.html"  # linked from LONELY with the same anchor


def _scores(work) -> LinkScores:
    fans = [f"https://fan{i}.example/" for i in range(20)]
    graph = graph_of([*((f, HUB) for f in fans), (HUB, T_HUB), (LONELY, T_LONELY)])
    score = np.full(graph.n, 0.001)
    score[graph.node_id(HUB)] = 0.6
    return LinkScores(write_scores(scores_path(work, TS), graph.with_scores(score=score)))


def _documents():
    pages = [
        # the targets: as many words
        (T_LONELY, "<title>Zebra</title><p>Notes about a zebra and its stripes.</p>"),
        (T_HUB, "<title>Zebra</title><p>Notes about a zebra and her stripes.</p>"),
        (HUB, f'<title>Hub</title><p>Index.</p><a href="{T_HUB}">striped equine</a>'),
        (LONELY, f'<title>Lonely</title><p>Alone.</p><a href="{T_LONELY}">striped equine</a>'),
    ]
    # filler pages, so that the query terms are rare as on a real web (DFR's l_t << N)
    pages += [(f"https://filler{i}.example/", f"<title>Page {i}</title><p>Other topic {i}.</p>")
              for i in range(60)]
    docs = []
    for url, body in pages:
        docs.extend(to_index_documents(page(url, body)))
    return docs


def _search(path, docs, anchor=None, partition_docs=40):
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=partition_docs),
                           anchor=lambda: anchor) as writer:
        writer.append(docs)
    return _search_reader(IndexBundleReader(path))


class _NoScores:
    def get(self):
        return None  # only the anchor boost is tested here, not the query-time link score


def _search_reader(reader):
    searcher = Searcher([LocalShard(reader)], link_scores=_NoScores())
    return {r.url: r.explanation["relevance"]["value"]
            for r in searcher.search("striped equine").results}


def test_boost_is_one_plus_log_of_the_source_score(tmp_path):
    scores = _scores(tmp_path)
    boost = link_anchor_boost(scores)
    relative = scores.score_of(HUB)
    assert relative == pytest.approx(0.6 * len(scores))
    hashes = hashes_of([HUB, LONELY, "https://unknown.example/"])
    assert boost(hashes).tolist() == pytest.approx(
        [1 + np.log10(1 + relative), 1 + np.log10(1 + 0.001 * len(scores)), 1.0])
    assert anchor_boost([relative, 0.0, -1.0]).tolist() == pytest.approx(
        [1 + np.log10(1 + relative), 1.0, 1.0])


def test_anchor_boost_raises_the_target_for_its_anchor_terms(tmp_path):
    scores = _scores(tmp_path)
    docs = _documents()
    plain = _search(tmp_path / "plain", docs)
    boosted = _search(tmp_path / "boosted", docs, link_anchor_boost(scores))
    # the anchor from the high-LinkRank hub now counts more; the lonely page's barely moves
    assert boosted[T_HUB] - plain[T_HUB] > 0.5
    assert abs(boosted[T_LONELY] - plain[T_LONELY]) < 0.05
    # pages that only contain the words (the linking pages) do not change
    assert boosted[HUB] == pytest.approx(plain[HUB])


def test_stored_link_documents_are_not_boosted(tmp_path):
    """The boost lives in the built files only: the stored blobs keep weight 1, so a re-build
    with other scores starts from the fetched weights."""
    scores = _scores(tmp_path)
    path = tmp_path / "bundle"
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=40),
                           anchor=lambda: link_anchor_boost(scores)) as writer:
        writer.append(_documents())
    documents = PartitionDocumentBundle(path / DOCUMENTS)
    try:
        weights = set()
        for number in range(documents.active + 1):
            data = documents.blob_path(number).read_bytes()
            for rec in documents.read_records(number):
                if rec.doc_id[DOC_TYPE] != DocType.LINK:
                    continue
                blob = decode_doc_index(data[rec.index_offset:rec.index_offset
                                             + rec.index_length])
                weights.update(w for _, w in blob.regions)
    finally:
        documents.close_files()
    assert weights == {1.0}


@pytest.mark.parametrize("partition_docs", [40, 1000], ids=["finished", "active"])
def test_documents_indexed_before_the_first_analysis_get_its_boost(tmp_path, partition_docs):
    """A queue server ingests the fetchers' documents before the crawl has any scores (every
    document of a crawl smaller than the analysis interval); once the analysis writes them,
    the re-order of a finished partition, and the next refresh of the active one, boost those
    documents as if they had been indexed afterwards."""
    crawl = CrawlConfig(crawl_id=1, timestamp=TS, name="anchors")
    assert current_anchor_boost(scores_path(tmp_path, TS)) is None  # not scored yet
    config = BundleConfig(max_partition_docs=partition_docs, refresh_every_docs=0)
    core = QueueServerCore(QueueServerConfig(0, 1, tmp_path / "qs0", crawl, bundle=config))
    bundle = tmp_path / "qs0" / f"IndexData{TS}"
    try:
        core.spool.put("batch", json.dumps({
            "crawl": TS, "docs": [document_to_wire(d) for d in _documents()]}).encode())
        assert core.ingest() == 1
        core.maybe_refresh(force=True)
        before = _search_reader(IndexBundleReader(bundle))
        _scores(tmp_path)  # the crawl's first link analysis
        assert bool(finished_partitions(bundle)) == (partition_docs == 40)
        list(iter(core.maybe_reorder, None))  # every finished partition re-ordered
        assert core.maybe_refresh(force=True)  # new scores: the active partition is rebuilt
        after = _search_reader(IndexBundleReader(bundle))
    finally:
        core.close()
    wanted = _search(tmp_path / "direct", _documents(), link_anchor_boost(_scores(tmp_path)),
                     partition_docs)
    plain = _search(tmp_path / "plain", _documents(), None, partition_docs)
    assert before[T_HUB] == pytest.approx(plain[T_HUB])
    assert after == pytest.approx(wanted)
    assert after[T_HUB] - plain[T_HUB] > 0.5
