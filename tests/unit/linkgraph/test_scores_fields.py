from __future__ import annotations

import numpy as np
import pytest

from indexer.core.errors import CorruptGraphError, GraphNotFound
from indexer.core.ids import DocType, hash7, make_doc_id
from indexer.core.signals.link_scores import (
    LinkScores,
    representative_url,
    representative_urls,
    write_scores,
)
from indexer.core.urls import hashes_of, url_hash
from linkgraph.core import (
    PLAIN_PAGERANK,
    LinkDumper,
    NodeDumper,
    NodeReader,
    anchor_fields,
    linkrank,
)

from .helpers import graph_of

HUB, P1, P2, P3, TARGET = ("https://hub.org/", "https://p1.org/", "https://p2.org/",
                           "https://p3.org/", "https://target.org/")
EDGES = [(P1, HUB), (P2, HUB), (P3, HUB), (HUB, TARGET), (P1, TARGET), (P2, TARGET),
         (HUB, P1), ("https://target.org/self", TARGET)]
ANCHORS = {(HUB, TARGET): "Best Target", (P1, TARGET): "best   target",
           (P2, TARGET): "other words", ("https://target.org/self", TARGET): "home",
           (HUB, P1): "one"}


def _scored():
    graph = graph_of(EDGES, anchors=ANCHORS)
    return graph.with_scores(score=linkrank(graph, PLAIN_PAGERANK).scores,
                             trust=np.linspace(-1, 1, graph.n))


def test_scores_file_round_trip_and_vectorised_lookup(tmp_path):
    graph = _scored()
    path = write_scores(tmp_path / "linkgraph" / "5" / "scores.npz", graph, {"crawl": 5})
    scores = LinkScores(path)
    assert len(scores) == graph.n and scores.meta == {"crawl": 5}
    urls = [TARGET, "https://unknown.org/", HUB]
    want = [graph.score[graph.node_id(u)] * graph.n if graph.node_id(u) >= 0 else 0.0
            for u in urls]
    assert np.allclose(scores.scores_for(hashes_of(urls)), want)
    assert np.allclose(scores.scores_for(hashes_of(urls), "linkrank", default=-1.0),
                       [graph.score[graph.node_id(TARGET)], -1.0,
                        graph.score[graph.node_id(HUB)]])
    # doc ids (24 bytes, url hash first) and 8-byte strings work too
    doc_ids = np.frombuffer(b"".join(make_doc_id(u, DocType.PAGE, hash7(u), "h") for u in urls),
                            dtype=np.uint8).reshape(-1, 24)
    assert np.allclose(scores.scores_for(doc_ids, "trust"),
                       scores.scores_for(hashes_of(urls), "trust"))
    as_bytes = np.array([url_hash(u).to_bytes(8, "big") for u in urls], dtype="S8")
    assert np.allclose(scores.scores_for(as_bytes), want)
    assert scores.scores_for(hashes_of([TARGET]), "inlinks")[0] == 4
    assert scores.score_of(HUB) == pytest.approx(want[2])
    with pytest.raises(ValueError):
        scores.scores_for(hashes_of(urls), "nope")


def test_scores_file_errors(tmp_path):
    with pytest.raises(GraphNotFound):
        LinkScores(tmp_path / "none.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(CorruptGraphError):
        LinkScores(tmp_path / "bad.npz")


def test_representative_url_is_the_better_scored_one():
    graph = _scored()
    lookup = {int(h): float(s) for h, s in zip(graph.url_hash, graph.score, strict=True)}

    def scores_for(hashes):
        return np.array([lookup.get(int(h), 0.0) for h in hashes])

    # p1.org redirects to hub.org: hub has the higher LinkRank and is shown
    rep = representative_url(P1, HUB, scores_for)
    assert (rep.url, rep.orig_url) == (HUB, P1) and rep.url_score > rep.orig_score
    # hub.org "redirects" to p3.org (lower): the original url stays the displayed one
    assert representative_url(HUB, P3, scores_for).url == HUB
    # unknown both: the redirect target is kept
    both = representative_urls([("https://x/", "https://y/")], scores_for)
    assert both[0].url == "https://y/"
    assert representative_urls([], scores_for) == []


def test_anchor_fields_are_the_best_inlinks_boosted_by_their_score():
    graph = _scored()
    fields = anchor_fields(graph, TARGET)
    texts = [f.text for f in fields]
    assert set(texts) == {"Best Target", "other words", "home"}
    assert [f.boost for f in fields] == sorted((f.boost for f in fields), reverse=True)
    best = fields[0]
    assert best.text == "Best Target" and best.source == HUB and best.count == 2
    assert best.boost == pytest.approx(graph.score[graph.node_id(HUB)] * graph.n)
    assert [f.text for f in anchor_fields(graph, TARGET, same_host=False)] == \
        ["Best Target", "other words"]
    assert len(anchor_fields(graph, TARGET, top=1)) == 1
    assert anchor_fields(graph, "https://unknown/") == []


def test_dumpers_and_reader():
    graph = _scored()
    by_in = NodeDumper(graph).top(2, "inlinks")
    assert [n.url for n in by_in] == [TARGET, HUB] and by_in[0].inlinks == 4
    by_out = NodeDumper(graph).top(1, "outlinks")
    assert by_out[0].url in (HUB, P1, P2) and by_out[0].outlinks == 2
    by_score = NodeDumper(graph).top(graph.n, "score")
    assert [n.score for n in by_score] == sorted((n.score for n in by_score), reverse=True)
    assert NodeDumper(graph).top(0) == []
    links = LinkDumper(graph).links(TARGET)
    assert links is not None and len(links.inlinks) == 4 and links.outlinks == []
    assert links.inlinks[0].url == HUB and links.inlinks[0].anchor == "Best Target"
    assert [i.same_host for i in links.inlinks].count(True) == 1
    assert LinkDumper(graph).links("https://unknown/") is None
    info = NodeReader(graph).read(HUB)
    assert info is not None and (info.inlinks, info.outlinks) == (3, 2)
    assert info.fetched_at == 1.0 and NodeReader(graph).read("https://unknown/") is None
