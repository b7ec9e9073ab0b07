"""The network iterator keeps its HTTP connections to a shard open between requests, and
recovers when the shard server closed an idle one."""

from __future__ import annotations

import socket
import threading

import pytest

from ranking.core.errors import ShardError
from ranking.core.remote.client import RemoteShard
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from tests.fixtures.shard_server import ShardHTTPServer
from tests.unit.ranking.helpers import Doc, build

TOKEN = "keepalive-token"


class CountingServer(ShardHTTPServer):
    """Counts the TCP connections it accepted."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.connections = 0
        self.sockets = []

    def process_request(self, request, client_address) -> None:
        self.connections += 1
        self.sockets.append(request)
        super().process_request(request, client_address)


@pytest.fixture
def server(tmp_path):
    docs = [Doc(f"https://k.test/{i}", ("alpha", "beta", str(i))) for i in range(8)]
    srv = CountingServer(LocalShard(build(tmp_path / "k", docs), "k"), TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_queries_reuse_one_connection(server):
    shard = RemoteShard(server.url, TOKEN, name="k")
    searcher = Searcher([shard])
    first = searcher.search("alpha beta", num=5)
    for _ in range(4):  # candidates, then summaries: one connection for all of them
        again = searcher.search("alpha beta", num=5)
        assert [r.url for r in again.results] == [r.url for r in first.results]
    assert len(first.results) == 5 and not first.partial
    assert server.connections == 1
    shard.close()


def test_a_connection_the_server_closed_is_replaced(server):
    shard = RemoteShard(server.url, TOKEN, name="k")
    searcher = Searcher([shard])
    want = [r.url for r in searcher.search("alpha", num=3).results]
    for sock in server.sockets:  # the server drops its idle keep-alive connections
        sock.shutdown(socket.SHUT_RDWR)
    got = searcher.search("alpha", num=3)
    assert [r.url for r in got.results] == want and not got.partial
    assert server.connections == 2


def test_errors_still_reported(server, tmp_path):
    with pytest.raises(ShardError, match="403"):
        RemoteShard(server.url, "wrong", name="k").summaries([b"\0" * 24])
    server.shutdown()
    server.server_close()
    res = Searcher([RemoteShard(server.url, TOKEN, name="k", timeout=2)]).search("alpha")
    assert not res.results and any("unreachable" in m.text for m in res.messages)
