"""The shard protocol's own HTTP/1.1 on both sides: the test/bench server's request reader
(token, keep-alive, bad requests) and the network iterator's plain-http client (answer framing,
failures reported as ShardError, slow shards skipped)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from ranking.core.errors import ShardError
from ranking.core.options import SearchOptions
from ranking.core.query.parser import QueryParser
from ranking.core.remote.client import RemoteShard
from ranking.core.remote.protocol import SEARCH_PATH
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from tests.fixtures.shard_server import ShardHTTPServer
from tests.unit.ranking.helpers import Doc, build

TOKEN = "http-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    docs = [Doc(f"https://h.test/{i}", ("alpha", "beta", str(i))) for i in range(5)]
    srv = ShardHTTPServer(LocalShard(build(tmp_path_factory.mktemp("h") / "h", docs), "h"),
                          TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def talk(srv: ShardHTTPServer, data: bytes, answers: int = 1) -> tuple[list[bytes], bool]:
    """Send raw bytes; (the answers' status lines, whether the server then closed)."""
    with socket.create_connection(srv.server_address, timeout=5) as sock:
        sock.sendall(data)
        buf, lines = b"", []
        while len(lines) < answers:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
            while b"\r\n\r\n" in buf:
                head, buf = buf.split(b"\r\n\r\n", 1)
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(buf) < length:
                    buf += sock.recv(65536)
                buf = buf[length:]
                lines.append(head.split(b"\r\n")[0])
        sock.settimeout(0.2)
        try:
            closed = sock.recv(1) == b""
        except TimeoutError:
            closed = False
        return lines, closed


def get(target: str, token: str | None = TOKEN, extra: str = "") -> bytes:
    auth = f"X-Shard-Token: {token}\r\n" if token is not None else ""
    return f"GET {target} HTTP/1.1\r\nHost: x\r\n{auth}{extra}\r\n".encode()


def test_keep_alive_and_token(server):
    lines, closed = talk(server, get(f"{SEARCH_PATH}?q=alpha&fmt=bin") +
                         get(f"{SEARCH_PATH}?q=alpha", token=None) +
                         get("/nowhere", extra="x-shard-token: wrong\r\n"), answers=3)
    assert lines == [b"HTTP/1.1 200 OK", b"HTTP/1.1 403 Forbidden", b"HTTP/1.1 403 Forbidden"]
    assert not closed
    lines, closed = talk(server, get("/nowhere"))
    assert lines == [b"HTTP/1.1 404 Not Found"] and not closed


def test_connection_close_is_honoured(server):
    lines, closed = talk(server, get(f"{SEARCH_PATH}?q=alpha", extra="Connection: close\r\n"))
    assert lines == [b"HTTP/1.1 200 OK"] and closed
    lines, closed = talk(server, f"GET {SEARCH_PATH}?q=alpha HTTP/1.0\r\n"
                                 f"X-Shard-Token: {TOKEN}\r\n\r\n".encode())
    assert lines == [b"HTTP/1.1 200 OK"] and closed


@pytest.mark.parametrize("data, status", [
    (b"\x16\x03\x01\x02\x00garbage\r\n\r\n", b"400"),
    (b"GET /api/shard/search\r\n\r\n", b"400"),
    (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
    (get(SEARCH_PATH, extra="Content-Length: 5\r\n") + b"hello", b"400"),
    (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", b"400"),
    (get(SEARCH_PATH).replace(b"GET", b"POST"), b"405"),
])
def test_bad_requests_are_refused_and_closed(server, data, status):
    lines, closed = talk(server, data)
    assert len(lines) == 1 and lines[0].split()[1] == status and closed
    lines, _ = talk(server, get(f"{SEARCH_PATH}?q=alpha"))  # still serving
    assert lines == [b"HTTP/1.1 200 OK"]


def test_a_failing_search_is_a_500_and_the_server_goes_on(server, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the search")

    monkeypatch.setattr(server.shard, "candidates", broken)
    lines, closed = talk(server, get(f"{SEARCH_PATH}?q=alpha&fmt=bin"))
    assert lines == [b"HTTP/1.1 500 Internal Server Error"] and closed
    monkeypatch.undo()
    lines, _ = talk(server, get(f"{SEARCH_PATH}?q=alpha&fmt=bin"))
    assert lines == [b"HTTP/1.1 200 OK"]


class CannedServer:
    """A loopback server that answers every request on a connection with the next of
    ``answers`` (raw bytes; None: close without answering), counting connections."""

    def __init__(self, answers: list[bytes | None], delay: float = 0.0) -> None:
        self.answers = list(answers)
        self.delay = delay
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            buf = b""
            while self.answers:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                buf = buf.split(b"\r\n\r\n", 1)[1]
                answer = self.answers.pop(0)
                time.sleep(self.delay)
                if answer is None:
                    return
                conn.sendall(answer)

    def close(self) -> None:
        self.sock.close()


def summaries_of(url: str, timeout: float = 2.0) -> list:
    return RemoteShard(url, TOKEN, name="c", timeout=timeout).summaries([b"\0" * 24])


BODY = b'{"summaries": [{"url": "u"}]}'


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n" + BODY[:5] + b"\r\n" +
    b"%x;ext=1\r\n" % (len(BODY) - 5) + BODY[5:] + b"\r\n0\r\nX-Trailer: 1\r\n\r\n",
    b"HTTP/1.0 200 OK\r\n\r\n" + BODY,  # up to the close
])
def test_answer_framings(answer):
    srv = CannedServer([answer])
    try:
        assert summaries_of(srv.url) == [{"url": "u"}]
    finally:
        srv.close()


@pytest.mark.parametrize("answer, reason", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + BODY, "closed before the answer"),
    (b"SSH-2.0-OpenSSH\r\n\r\n", "bad HTTP answer"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "bad HTTP answer"),
    (b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n", "HTTP 500"),
    (None, "closed before the answer"),
])
def test_broken_answers_are_shard_errors(answer, reason):
    srv = CannedServer([answer])
    try:
        with pytest.raises(ShardError, match=reason):
            summaries_of(srv.url)
    finally:
        srv.close()


def test_a_kept_connection_closed_while_idle_is_replaced_once():
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)
    srv = CannedServer([ok, None, ok])  # the first connection closes at its second request
    shard = RemoteShard(srv.url, TOKEN, name="c")
    try:
        assert shard.summaries([b"\0" * 24]) == shard.summaries([b"\0" * 24]) == [{"url": "u"}]
        assert srv.connections == 2
    finally:
        srv.close()


def test_slow_and_unreachable_shards_are_skipped(server):
    slow = CannedServer([None], delay=3.0)
    with socket.create_server(("127.0.0.1", 0)) as closed:
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    shards = [RemoteShard(server.url, TOKEN, name="up"), RemoteShard(slow.url, TOKEN, name="slow"),
              RemoteShard(dead, TOKEN, name="dead")]
    try:
        start = time.monotonic()
        res = Searcher(shards, SearchOptions(), shard_timeout=0.5).search("alpha")
        assert time.monotonic() - start < 2.5
    finally:
        slow.close()
    assert len(res.results) == 5 and res.partial
    assert any("slow" in m.text and "no answer within 0.5 s" in m.text for m in res.messages)
    assert any("dead" in m.text and "unreachable" in m.text for m in res.messages)
    parsed = QueryParser().parse("alpha")
    with pytest.raises(ShardError, match="unreachable"):
        RemoteShard(dead, TOKEN, name="dead").candidates("alpha", parsed, 5, SearchOptions())
