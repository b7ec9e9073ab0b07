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
    assert len(scores) == graph.n and scores.meta == {"crawl": 5, "version": scores.version}
    # every file written gets a version of its own (what a fetcher compares)
    assert len(scores.version) == 16 and not scores.has_redirect_table
    again = LinkScores(write_scores(tmp_path / "again.npz", graph, {"crawl": 5}))
    assert again.version != scores.version
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


def test_redirect_table_names_the_better_scored_source_of_each_target(tmp_path):
    """The analysis decides each redirect target's representative once, over every shard's
    redirects (#35 item 2): what any machine holding the file then shows."""
    graph = _ranked({HUB: 0.4, P1: 0.1, P2: 0.3, P3: 0.05})
    new, moved = "https://new.org/", "https://p1.org/straße"
    redirects = {HUB: P3, P1: HUB, P2: new, HUB + "old": new, moved: P3, P3: P3}
    scores = LinkScores(write_scores(tmp_path / "s.npz", graph, {"crawl": 5}, redirects))
    assert scores.has_redirect_table
    relative = {u: scores.score_of(u) for u in (HUB, P1, P2, P3)}
    assert relative[HUB] > relative[P2] > relative[P3] and relative[HUB] > relative[P1]
    got = scores.representatives([P3, HUB, new, "https://unknown.org/", ""])
    # p3 <- hub (higher) and <- p1.org/straße (unknown: 0): hub is shown, with both scores
    assert got[0] is not None and (got[0].url, got[0].orig_url) == (HUB, P3)
    assert (got[0].url_score, got[0].orig_score) == (relative[HUB], relative[P3])
    assert got[1] is None  # hub <- p1: p1 scores lower, hub itself is shown
    # new.org (unknown) <- p2 and <- hub/old (unknown, 0 = its score: kept out): p2
    assert got[2] is not None and got[2].url == P2 and got[2].orig_score == 0.0
    assert got[3] is None and got[4] is None
    assert got[0].as_dict() == {"url": HUB, "orig_url": P3, "url_score": relative[HUB],
                                "orig_score": relative[P3]}
    # the same decision as representative_urls over the same pairs, source by source
    pairs = [(u, t) for u, t in redirects.items() if u != t]
    chosen = {}
    for (url, target), rep in zip(pairs, representative_urls(pairs, scores.scores_for),
                                  strict=True):
        if rep.url == url and rep.url_score > chosen.get(target, ("", -1.0))[1]:
            chosen[target] = (url, rep.url_score)
    assert {t: u for t, (u, _) in chosen.items()} == {P3: HUB, new: P2}
    # a source whose non-ASCII url survives the table; no redirects: an empty table
    alone = LinkScores(write_scores(tmp_path / "t.npz", graph, None, {moved: "https://x.org/"}))
    assert alone.representatives(["https://x.org/"])[0] is None  # both unknown: target kept
    empty = LinkScores(write_scores(tmp_path / "e.npz", graph, None, {}))
    assert empty.has_redirect_table and empty.representatives([P3]) == [None]


def _ranked(given):
    graph = graph_of(EDGES)
    score = np.full(graph.n, 0.01)
    for url, value in given.items():
        score[graph.node_id(url)] = value
    return graph.with_scores(score=score, trust=np.zeros(graph.n))


def test_a_malformed_redirect_table_is_refused(tmp_path):
    graph = _scored()
    path = write_scores(tmp_path / "s.npz", graph, None, {HUB: P3})
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["redirect_offsets"] = np.array([0, 999], np.int64)  # past the end of the urls
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(CorruptGraphError, match="redirect table"):
        LinkScores(tmp_path / "bad.npz")


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
