"""Result lists through real loopback shard servers equal the in-process ones: without
snippets only the summaries' heads (url and title) travel; link documents resolve to their
pages on the shard, as in-process."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from indexer.core.ids import DocType
from ranking.core.remote import protocol
from ranking.core.remote.client import RemoteShard
from ranking.core.remote.protocol import SEARCH_PATH, SUMMARIES_PATH
from ranking.core.remote.server import best_representatives, shard_summaries_payload
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.local import LocalShard
from tests.fixtures.shard_server import ShardHTTPServer
from tests.unit.ranking.helpers import Doc, build, text_doc

TOKEN = "heads-token"


def _docs(host: str) -> list[Doc]:
    pages = [text_doc(f"https://{host}/{i}", f"alpha page {i}",
                      "alpha beta gamma " * (i + 1) + "delta " * 40) for i in range(6)]
    links = [Doc(f"https://{host}/0", ("alpha", "anchor"), doc_type=DocType.LINK,
                 summary={"url": f"https://{host}/0", "title": f"https://{host}/0",
                          "description": "alpha anchor", "source": "https://x.test/",
                          "kind": "a"}),
             Doc(f"https://{host}/never-crawled", ("alpha", "orphan"), doc_type=DocType.LINK,
                 summary={"url": f"https://{host}/never-crawled",
                          "title": f"https://{host}/never-crawled",
                          "description": "alpha orphan", "source": "https://x.test/",
                          "kind": "a"})]
    return pages + links


@pytest.fixture
def shards(tmp_path):
    servers, local = [], []
    for name in ("a", "b"):
        shard = LocalShard(build(tmp_path / name, _docs(f"{name}.test"), 4), name)
        srv = ShardHTTPServer(shard, TOKEN)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        local.append(shard)
    yield local, [RemoteShard(s.url, TOKEN, name=n) for s, n in zip(servers, "ab", strict=True)]
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("snippets", [False, True])
def test_network_results_equal_local(shards, snippets):
    local, remote = shards
    for q in ("alpha", "alpha beta", "orphan", "anchor"):
        mine = Searcher(local).search(q, num=10, snippets=snippets)
        theirs = Searcher(remote).search(q, num=10, snippets=snippets)
        assert [(r.url, r.title, r.snippet, r.score) for r in theirs.results] == \
            [(r.url, r.title, r.snippet, r.score) for r in mine.results], q
        assert not theirs.partial
    assert not any("never-crawled" in r.url
                   for r in Searcher(remote).search("orphan", snippets=False).results)


def test_heads_payload_has_no_page_text(shards):
    local, _ = shards
    shard = local[0]
    dm = shard.reader.doc_map(shard.reader.partitions[0].number)
    ids = [dm.doc_id(0).hex(), "zz", dm.doc_id(1).hex()]
    heads = shard_summaries_payload(shard, {"ids": ",".join(ids), "heads": "1"})["summaries"]
    full = shard_summaries_payload(shard, {"ids": ",".join(ids)})["summaries"]
    assert heads[1] is None and full[1] is None
    for head, summary in zip(heads[::2], full[::2], strict=True):
        assert head == {"url": summary["url"], "title": summary["title"]}
        assert "description" in summary


def _first_shard_candidates(shards, query):
    """(searcher over the first local shard, the parsed query, that shard's candidates)."""
    shard = shards[0][0]
    searcher = Searcher([shard])
    parsed = searcher.parser.parse(query)
    return searcher, parsed, shard.candidates(query, parsed, 50, searcher.options)


def test_candidates_travel_exactly(shards):
    _, _, got = _first_shard_candidates(shards, "alpha beta")
    data = json.loads(json.dumps(got.to_json()))
    assert isinstance(data["freq"], str)  # base64, not a list of numbers
    back = Candidates.from_json(data, "a")
    # an older shard's answer: numbers as JSON lists
    lists = {**data, **{k: getattr(got, k).tolist() for k in ("doc_rank", "freq", "index")}}
    older = Candidates.from_json(json.loads(json.dumps(lists)), "a")
    for name in ("doc_ids", "partition", "index", "docs_after", "doc_rank", "relevance",
                 "proximity", "proximity_raw", "doc_length", "freq", "term_relevance",
                 "bonuses"):
        for other in (back, older):
            assert np.array_equal(getattr(other, name), getattr(got, name)), name
            assert getattr(other, name).dtype == getattr(got, name).dtype, name
    assert back.terms == got.terms and back.estimate == got.estimate
    with pytest.raises(ValueError):
        Candidates.from_json({**data, "doc_rank": data["doc_rank"][:-4] + "@@@@"}, "a")
    with pytest.raises(ValueError):
        Candidates.from_json({**data, "freq": data["doc_rank"]}, "a")


def _requests(monkeypatch) -> list[str]:
    paths: list[str] = []
    real = RemoteShard._target  # every request's path and query are made here

    def counting(self, path, params):
        paths.append(path)
        return real(self, path, params)

    monkeypatch.setattr(RemoteShard, "_target", counting)
    return paths


def test_heads_come_with_the_search_answer(shards, monkeypatch):
    """Without snippets the heads of the results came with the shards' search answers: no
    summaries request; the same results as when every head is asked for."""
    local, remote = shards
    paths = _requests(monkeypatch)
    for q in ("alpha", "alpha beta", "anchor"):
        paths.clear()
        got = Searcher(remote).search(q, num=5, snippets=False)
        assert paths == [SEARCH_PATH] * len(remote), q
        want = Searcher(local).search(q, num=5, snippets=False)
        assert [(r.url, r.title) for r in got.results] == \
            [(r.url, r.title) for r in want.results], q


def test_heads_not_sent_are_asked_for(shards, monkeypatch):
    """An answer without heads (an older shard, or heads=0) costs a summaries request."""
    local, remote = shards
    monkeypatch.setattr(protocol, "PREFETCH_HEADS", 0)
    fresh = [RemoteShard(s.base_url, TOKEN, name=s.name) for s in remote]
    paths = _requests(monkeypatch)
    got = Searcher(fresh).search("alpha", num=5, snippets=False)
    assert SUMMARIES_PATH in paths
    want = Searcher(local).search("alpha", num=5, snippets=False)
    assert [(r.url, r.title) for r in got.results] == [(r.url, r.title) for r in want.results]


def test_best_representatives_are_the_best_groups(shards):
    searcher, parsed, found = _first_shard_candidates(shards, "alpha")
    shown = searcher.search("alpha", num=3, snippets=False).results
    ids = best_representatives(found, parsed, searcher.options, 5)
    assert len(ids) == len(set(ids)) == 5
    assert {bytes.fromhex(r.doc_id) for r in shown} <= set(ids)
