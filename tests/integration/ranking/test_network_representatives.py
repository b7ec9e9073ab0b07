"""A name server that reads remote shards only ranks and shows urls as one machine does (issue
35, item 2): two shards served over real HTTP on loopback give the same top 10, in the same
link-score-dependent order, with the same scores and explanations, as a local search of the
same two bundles; and a redirect whose target is in one shard and whose redirect document is in
the other shows the same representative url on both, from the analysis's redirect table."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DocType
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import write_scores
from ranking.core.options import SearchOptions
from ranking.core.remote.client import RemoteShard
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from tests.fixtures.shard_server import ShardHTTPServer
from tests.unit.linkgraph.helpers import graph_of
from tests.unit.ranking.helpers import Doc, build, text_doc

TOKEN = "s3cret"
TS = 1_700_000_888
ALIAS = "https://old.example/gadgets.html"        # redirects to TARGET; its redirect
TARGET = "https://shop0.example/gadgets/0.html"   # document is in the other shard
WORDS = ("gadget", "sprocket", "flange", "gasket", "widget")
QUERIES = ("gadget", "gadget sprocket", "flange gasket", "widget", "sprocket flange",
           "page catalogue")


def _page(i: int, rng: random.Random) -> Doc:
    words = rng.sample(WORDS, 3) * rng.randint(1, 3)
    return text_doc(f"https://shop{i % 7}.example/gadgets/{i}.html", f"Gadget page {i}",
                    " ".join(words) + f" page number {i} of the catalogue.")


@pytest.fixture
def crawl(tmp_path):
    """Two shards of one crawl (pages by host, qs0 and qs1) and its scores file: LinkRank
    spread over three orders of magnitude, so that link scores change the order, and a
    redirect table in which ALIAS (in qs1) represents TARGET (in qs0)."""
    rng = random.Random(35)
    pages = [_page(i, rng) for i in range(60)]
    alias = Doc(ALIAS, ("moved",), meta=(f"location:{TARGET}",), doc_type=DocType.LOCATION,
                summary={"url": ALIAS, "title": "", "description": "", "location": TARGET,
                         "robot_metas": []})
    shards = [[p for p in pages if p.url.startswith(("https://shop0", "https://shop2",
                                                      "https://shop4"))], [alias]]
    shards[1] += [p for p in pages if p not in shards[0]]
    bundles = [tmp_path / f"qs{n}" / f"IndexData{TS}" for n in (0, 1)]
    for bundle, docs in zip(bundles, shards, strict=True):
        build(bundle, docs)
    urls = [p.url for p in pages] + [ALIAS]
    graph = graph_of([(f"https://fan{i}.example/", TARGET) for i in range(3)], nodes=urls)
    score = np.full(graph.n, 0.001)
    for url in urls:
        score[graph.node_id(url)] = 10 ** rng.uniform(-4, -1)
    score[graph.node_id(ALIAS)] = 0.3
    score[graph.node_id(TARGET)] = 0.01
    write_scores(scores_path(tmp_path, TS), graph.with_scores(score=score,
                                                              trust=np.zeros(graph.n)),
                 {"crawl": TS}, redirects={ALIAS: TARGET})
    return bundles


@pytest.fixture
def servers(crawl):
    started = [ShardHTTPServer(LocalShard(IndexBundleReader(b), f"qs{n}"), TOKEN)
               for n, b in enumerate(crawl)]
    for server in started:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield started
    for server in started:
        server.shutdown()
        server.server_close()


def _ranked(result):
    return [(r.url, round(r.score, 9), r.explanation.get("link_score"),
             r.explanation.get("representative_url")) for r in result.results]


def test_remote_shards_rank_and_represent_as_the_local_search(crawl, servers):
    options = SearchOptions()
    one_machine = Searcher([LocalShard(IndexBundleReader(b), f"qs{n}")
                            for n, b in enumerate(crawl)], options)
    name_server = Searcher([RemoteShard(s.url, TOKEN, name=f"qs{n}")
                            for n, s in enumerate(servers)], options)
    assert name_server.link_scores.get() is None  # no scores file on the name server
    unlinked = Searcher([LocalShard(IndexBundleReader(b), f"qs{n}")
                         for n, b in enumerate(crawl)], SearchOptions(link_score_weight=0.0))
    reordered = 0
    for query in QUERIES:
        for snippets in (True, False):
            local = _ranked(one_machine.search(query, snippets=snippets))
            assert len(local) == 10, query
            assert _ranked(name_server.search(query, snippets=snippets)) == local, query
        without = [r.url for r in unlinked.search(query).results]
        reordered += [url for url, *_ in local] != without
    assert reordered >= len(QUERIES) - 1  # the order depends on the link scores


def test_a_redirect_across_shards_shows_the_same_representative(crawl, servers):
    one_machine = Searcher([LocalShard(IndexBundleReader(b), f"qs{n}")
                            for n, b in enumerate(crawl)])
    name_server = Searcher([RemoteShard(s.url, TOKEN, name=f"qs{n}")
                            for n, s in enumerate(servers)])
    query = "gadget page 0 catalogue"
    for searcher in (one_machine, name_server):
        for snippets in (True, False):
            first = searcher.search(query, snippets=snippets).results[0]
            rep = first.explanation["representative_url"]
            assert (first.url, rep["orig_url"]) == (ALIAS, TARGET), snippets
            assert rep["url_score"] == pytest.approx(0.3 * rep["orig_score"] / 0.01)
    # with the link score weight 0 no representative is shown, on either
    for shards in ([LocalShard(IndexBundleReader(b)) for b in crawl],
                   [RemoteShard(s.url, TOKEN, name=f"qs{n}") for n, s in enumerate(servers)]):
        off = Searcher(shards, SearchOptions(link_score_weight=0.0)).search(query)
        assert TARGET in [r.url for r in off.results]
        assert all("representative_url" not in r.explanation for r in off.results)
