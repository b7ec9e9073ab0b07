"""A name server without the crawl's scores file ranks with link analysis as one machine does
(issue 35, item 2): each shard looks its candidates up in its own copy of the scores and sends
them with its answer, over a real HTTP shard server; an older shard's answer without them still
decodes."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import hash8
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import write_scores
from ranking.core.options import SearchOptions
from ranking.core.query.parser import QueryParser
from ranking.core.remote.client import RemoteShard
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.local import LocalShard
from tests.fixtures.shard_server import ShardHTTPServer
from tests.unit.linkgraph.helpers import graph_of
from tests.unit.ranking.helpers import build, text_doc

TOKEN = "s3cret"
TS = 1_700_000_777
PLAIN = "https://plain.example/widgets.html"
POPULAR = "https://popular.example/widgets.html"
BODY = "The widget frobnicator assembles widgets from parts and ships them daily."
OPTIONS = SearchOptions(proximity_weight=0.0)  # the link score's effect alone


@pytest.fixture
def crawl(tmp_path):
    """A crawl's bundle where PLAIN holds the words more often, and scores in which ten pages
    link POPULAR."""
    bundle = tmp_path / "qs0" / f"IndexData{TS}"
    build(bundle, [text_doc(PLAIN, "Widget frobnicator",
                            BODY + " Frobnicator widgets: widget frobnicator."),
                   text_doc(POPULAR, "Widget frobnicator", BODY)])
    graph = graph_of([(f"https://fan{i}.example/", POPULAR) for i in range(10)], nodes=[PLAIN])
    score = np.full(graph.n, 0.01)
    score[graph.node_id(POPULAR)] = 0.5
    trust = np.zeros(graph.n)
    trust[graph.node_id(POPULAR)] = 0.25
    write_scores(scores_path(tmp_path, TS), graph.with_scores(score=score, trust=trust))
    return bundle


@pytest.fixture
def remote(crawl):
    server = ShardHTTPServer(LocalShard(IndexBundleReader(crawl), "qs0"), TOKEN)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield RemoteShard(server.url, TOKEN, name="qs0")
    server.shutdown()
    server.server_close()


def _ranked(result):
    return [(r.url, round(r.score, 9), r.explanation.get("link_score")) for r in result.results]


def test_a_name_server_ranks_with_the_shards_link_scores(crawl, remote):
    one_machine = Searcher([LocalShard(IndexBundleReader(crawl))], OPTIONS)
    name_server = Searcher([remote], OPTIONS)  # no bundle here: no scores file of its own
    assert name_server.link_scores.get() is None
    for query in ("widget frobnicator", "widgets parts", "frobnicator"):
        local = _ranked(one_machine.search(query))
        assert [url for url, _, _ in local][:2] == [POPULAR, PLAIN], query
        assert _ranked(name_server.search(query)) == local, query
    without = Searcher([remote], SearchOptions(proximity_weight=0.0, link_score_weight=0.0))
    assert [r.url for r in without.search("widget frobnicator").results][:2] == [PLAIN, POPULAR]


def test_candidates_carry_link_scores_both_encodings(crawl):
    shard = LocalShard(IndexBundleReader(crawl))
    found = shard.candidates("widget", QueryParser().parse("widget"), 10, OPTIONS)
    assert found.linked and len(found) == 2
    for decoded in (Candidates.from_bytes(found.to_bytes(), "x"),
                    Candidates.from_json(found.to_json(), "x")):
        assert decoded.linked
        assert np.array_equal(decoded.link_relative, found.link_relative)
        assert np.array_equal(decoded.link_trust, found.link_trust)
        assert np.array_equal(decoded.bonuses, found.bonuses)
    popular = [bytes(i[:8]) for i in found.doc_ids].index(hash8(POPULAR))
    assert found.link_trust[popular] == 0.25
    # an older shard's answer (no link scores): decoded as unlinked
    older = Candidates(**{**{f: getattr(found, f) for f in Candidates.__slots__},
                          "linked": False, "link_relative": np.zeros(0),
                          "link_trust": np.zeros(0)})
    for decoded in (Candidates.from_bytes(older.to_bytes(), "x"),
                    Candidates.from_json(older.to_json(), "x")):
        assert not decoded.linked and decoded.link_relative.size == 0
    with pytest.raises(ValueError, match="expected 2 values"):
        found.with_links(np.zeros(3), np.zeros(2))

