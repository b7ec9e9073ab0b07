"""The network iterator against real local HTTP shard servers: one up, one failing, one slow."""

from __future__ import annotations

import threading

import pytest

from ranking.core.errors import ShardError
from ranking.core.options import SearchOptions
from ranking.core.query.parser import QueryParser
from ranking.core.remote.client import RemoteShard
from ranking.core.search.fanout import per_shard_results
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from tests.fixtures.shard_server import ShardHTTPServer
from tests.unit.ranking.helpers import Doc, build

TOKEN = "s3cret"


@pytest.fixture
def servers(tmp_path):
    started = []

    def start(docs, name, **kw):
        reader = build(tmp_path / name, docs)
        srv = ShardHTTPServer(LocalShard(reader, name), TOKEN, **kw)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.shutdown()
        srv.server_close()


def docs(prefix, n):
    return [Doc(f"https://{prefix}.test/{i}", ("alpha", "beta", str(i))) for i in range(n)]


def test_per_shard_results():
    assert per_shard_results(200, 1.6, 4) == 80
    assert per_shard_results(200, 1.6, 3) == 107
    assert per_shard_results(200, 1.6, 1) == 200


def test_one_up_one_failing_one_slow(servers):
    up = servers(docs("up", 5), "up")
    failing = servers(docs("fail", 5), "fail", fail=True)
    slow = servers(docs("slow", 5), "slow", delay=3.0)
    shards = [RemoteShard(up.url, TOKEN, name="up"), RemoteShard(failing.url, TOKEN, name="fail"),
              RemoteShard(slow.url, TOKEN, name="slow", timeout=10)]
    res = Searcher(shards, shard_timeout=0.8).search("alpha beta")
    assert {r.url.split("/")[2] for r in res.results} == {"up.test"}
    assert len(res.results) == 5
    assert res.partial
    assert any("fail" in m.text and "HTTP 500" in m.text for m in res.messages)
    assert any("slow" in m.text and "no answer" in m.text for m in res.messages)


def test_results_merge_across_shards(servers):
    a = servers(docs("a", 4), "a")
    b = servers(docs("b", 4), "b")
    res = Searcher([RemoteShard(a.url, TOKEN, name="a"), RemoteShard(b.url, TOKEN, name="b")],
                   SearchOptions(min_results_to_group=10)).search("alpha", num=10)
    assert {r.url.split("/")[2] for r in res.results} == {"a.test", "b.test"}
    assert len(res.results) == 8 and not res.partial
    assert all(r.snippet is not None for r in res.results)


def test_token_required(servers):
    a = servers(docs("a", 2), "a")
    parsed = QueryParser().parse("alpha")
    with pytest.raises(ShardError, match="403"):
        RemoteShard(a.url, "wrong").candidates("alpha", parsed, 10, SearchOptions())
