"""Anchor fields at indexing time (issue 8, seed 002's AnchorFields): a link document's anchor
text weighs its source page's link score once the crawl has a scores file; the queue server
applies it to what fetchers ship; the boost raises the target page for its anchor terms."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.processing.indexing import (
    anchor_boosts,
    boost_link_documents,
    crawl_link_scores,
    to_index_documents,
)
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.transport.wire import document_to_wire
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.ids import DocType
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import LinkScores, write_scores
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


def _link_weight(docs, source):
    [doc] = [d for d in docs if d.doc_type == DocType.LINK and d.summary["source"] == source]
    return doc.region_weights[-1][1]


def test_boost_is_one_plus_log_of_the_source_score(tmp_path):
    scores = _scores(tmp_path)
    docs = _documents()
    boosted = boost_link_documents(docs, scores)
    relative = scores.score_of(HUB)
    assert relative == pytest.approx(0.6 * len(scores))
    assert _link_weight(boosted, HUB) == pytest.approx(1 + np.log10(1 + relative))
    assert _link_weight(boosted, LONELY) == pytest.approx(1 + np.log10(1 + 0.001 * len(scores)))
    assert _link_weight(docs, HUB) == 1.0  # the input is not changed
    pages = [d for d in boosted if d.doc_type != DocType.LINK]
    assert pages == [d for d in docs if d.doc_type != DocType.LINK]
    # unknown sources keep weight 1; no scores, no change
    assert anchor_boosts(["https://unknown.example/"], scores).tolist() == [1.0]
    assert boost_link_documents(docs, None) == docs


def _search(path, docs):
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=40)) as writer:
        writer.append(docs)
    return _search_reader(IndexBundleReader(path))


class _NoScores:
    def get(self):
        return None  # only the anchor boost is tested here, not the query-time link score


def test_anchor_boost_raises_the_target_for_its_anchor_terms(tmp_path):
    scores = _scores(tmp_path)
    docs = _documents()
    plain = _search(tmp_path / "plain", docs)
    boosted = _search(tmp_path / "boosted", boost_link_documents(docs, scores))
    # the anchor from the high-LinkRank hub now counts more; the lonely page's barely moves
    assert boosted[T_HUB] - plain[T_HUB] > 0.5
    assert abs(boosted[T_LONELY] - plain[T_LONELY]) < 0.05
    # pages that only contain the words (the linking pages) do not change
    assert boosted[HUB] == pytest.approx(plain[HUB])


def test_queue_server_boosts_what_fetchers_ship_once_the_crawl_is_scored(tmp_path):
    crawl = CrawlConfig(crawl_id=1, timestamp=TS, name="anchors")
    assert crawl_link_scores(tmp_path, TS) is None  # not scored yet: nothing to boost
    _scores(tmp_path)
    assert crawl_link_scores(tmp_path, TS) is not None
    core = QueueServerCore(QueueServerConfig(0, 1, tmp_path / "qs0", crawl))
    try:
        core.spool.put("batch", json.dumps({
            "crawl": TS, "docs": [document_to_wire(d) for d in _documents()]}).encode())
        assert core.ingest() == 1
        core.maybe_refresh(force=True)
    finally:
        core.close()
    shipped = _search_reader(IndexBundleReader(tmp_path / "qs0" / f"IndexData{TS}"))
    wanted = _search(tmp_path / "direct", boost_link_documents(_documents(), _scores(tmp_path)))
    plain = _search(tmp_path / "plain", _documents())
    assert shipped[T_HUB] == pytest.approx(wanted[T_HUB])
    assert shipped[T_HUB] - plain[T_HUB] > 0.5


def _search_reader(reader):
    searcher = Searcher([LocalShard(reader)], link_scores=_NoScores())
    return {r.url: r.explanation["relevance"]["value"]
            for r in searcher.search("striped equine").results}
