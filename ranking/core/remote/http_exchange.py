"""A minimal HTTP/1.1 client for the shard protocol: several GETs at once from one thread.

Layer: ``ranking.core`` (standard library sockets). :func:`run_exchanges` writes every request
on kept-alive sockets, then reads the answers as they come. A thread per shard would cost more
than a loopback answer (each answer waits for the interpreter lock held by the others). The
sockets come from and go back to the peer (:class:`Peer`, the remote shard client
:class:`ranking.core.remote.client.RemoteShard`), which keeps them open between requests.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ranking.core.errors import ShardError
from ranking.core.query.numerals import is_ascii_digits


class Peer(Protocol):
    """The server an exchange talks to and the pool its kept-alive sockets live in."""

    name: str
    host: str
    port: int | None

    def take_connection(self) -> Any: ...

    def give_connection(self, conn: Any) -> None: ...


class Exchange:
    """One GET to a shard over a plain-http socket, driven by :func:`run_exchanges` (connect if
    needed, write the request, read the answer: status line, headers, then a body of
    Content-Length bytes, chunked, or up to the close). A kept-alive socket that the server
    closed while idle is replaced once. The socket goes back to the peer's pool when the
    answer is complete and the server keeps the connection open."""

    __slots__ = ("peer", "request", "deadline", "limit", "sock", "reused", "retried",
                 "connecting", "sent", "buf", "head_end", "status", "headers", "keep",
                 "body_end", "chunked", "body", "error")

    MAX_HEAD = 64 * 1024

    def __init__(self, peer: Peer, request: bytes, limit: float) -> None:
        self.peer = peer
        self.request = request
        self.limit = limit
        self.deadline = time.monotonic() + limit
        self.sock: socket.socket | None = None
        self.reused = self.retried = self.connecting = self.chunked = False
        self.keep = True
        self.sent = 0
        self.buf = bytearray()
        self.head_end = self.body_end = -1
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body: bytes | None = None
        self.error: ShardError | None = None

    @property
    def done(self) -> bool:
        return self.body is not None or self.error is not None

    def start(self, sel: selectors.BaseSelector) -> None:
        sock = self.peer.take_connection()
        if sock is None:
            self._connect(sel)
        else:
            self.sock, self.reused = sock, True
            # a request fits in an idle socket's buffer: write it now, then wait to read
            sel.register(sock, selectors.EVENT_READ, self)
            self._write(sel)

    def _connect(self, sel: selectors.BaseSelector) -> None:
        """Open a new connection without waiting for it (the name is resolved here, which
        does wait: shard urls name addresses or hosts the resolver knows at once)."""
        try:
            family, kind, proto, _, address = socket.getaddrinfo(
                self.peer.host, self.peer.port or 80, type=socket.SOCK_STREAM)[0]
            sock = socket.socket(family, kind, proto)
        except OSError as exc:
            return self._fail(sel, f"unreachable: {exc}")
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock, self.reused, self.connecting = sock, False, True
        sel.register(sock, selectors.EVENT_WRITE, self)
        err = sock.connect_ex(address)
        if err not in (0, errno.EINPROGRESS):
            self._fail(sel, f"unreachable: {os.strerror(err)}")

    def on_event(self, sel: selectors.BaseSelector, mask: int) -> None:
        assert self.sock is not None
        if self.connecting:
            err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                return self._fail(sel, f"unreachable: {os.strerror(err)}")
            self.connecting = False
        if mask & selectors.EVENT_WRITE:
            self._write(sel)
        elif mask & selectors.EVENT_READ:
            self._read(sel)

    def _write(self, sel: selectors.BaseSelector) -> None:
        assert self.sock is not None
        try:
            self.sent += self.sock.send(self.request[self.sent:])
        except BlockingIOError:
            return
        except OSError as exc:
            return self._lost(sel, exc)
        sel.modify(self.sock, selectors.EVENT_READ if self.sent == len(self.request) else
                   selectors.EVENT_WRITE, self)

    def _read(self, sel: selectors.BaseSelector) -> None:
        assert self.sock is not None
        try:
            data = self.sock.recv(1 << 18)
        except BlockingIOError:
            return
        except OSError as exc:
            return self._lost(sel, exc)
        if not data:
            if self.head_end >= 0 and not self.chunked and self.body_end < 0:
                self.keep = False  # the body ran to the close
                return self._finish(sel, len(self.buf))
            return self._lost(sel, None)
        self.buf += data
        try:
            self._parse(sel)
        except ValueError as exc:
            self._fail(sel, f"bad HTTP answer: {exc}")

    def _lost(self, sel: selectors.BaseSelector, exc: OSError | None) -> None:
        """The connection closed (or broke) before the answer was complete: on a kept-alive
        socket that has not answered anything yet the server closed it while idle, so ask
        again once on a new one."""
        if self.reused and not self.retried and not self.buf:
            self._close(sel)
            self.retried, self.sent = True, 0
            return self._connect(sel)
        self._fail(sel, f"unreachable: {exc}" if exc is not None else
                   "unreachable: the connection closed before the answer was complete")

    def _parse(self, sel: selectors.BaseSelector) -> None:
        buf = self.buf
        if self.head_end < 0:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > self.MAX_HEAD:
                    raise ValueError("head too long")
                return
            self.head_end = end + 4
            lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
            version, _, rest = lines[0].partition(" ")
            if not version.startswith("HTTP/1.") or not is_ascii_digits(rest[:3]):
                raise ValueError(f"status line {lines[0][:80]!r}")
            self.status = int(rest[:3])
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if not sep:
                    raise ValueError(f"header line {line[:80]!r}")
                self.headers[name.strip().lower()] = value.strip()
            connection = self.headers.get("connection", "").lower()
            self.keep = "close" not in connection if version == "HTTP/1.1" else \
                "keep-alive" in connection
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                self.chunked = True
            elif "content-length" in self.headers:
                length = self.headers["content-length"]
                if not is_ascii_digits(length):
                    raise ValueError(f"Content-Length {length[:40]!r}")
                self.body_end = self.head_end + int(length)
            elif self.status in (204, 304) or 100 <= self.status < 200:
                self.body_end = self.head_end
        if self.chunked:
            self._parse_chunks(sel)
        elif 0 <= self.body_end <= len(buf):
            self._finish(sel, self.body_end)

    def _parse_chunks(self, sel: selectors.BaseSelector) -> None:
        """Read a chunked body once the whole of it has arrived."""
        buf, at, parts = self.buf, self.head_end, []
        while True:
            eol = buf.find(b"\r\n", at)
            if eol < 0:
                return
            size_field = bytes(buf[at:eol]).split(b";")[0].strip()
            try:
                size = int(size_field, 16)
            except ValueError:
                raise ValueError(f"chunk size {size_field[:20]!r}") from None
            at = eol + 2
            if size == 0:
                if buf[at:at + 2] == b"\r\n":
                    end = at + 2
                else:  # trailers, up to a blank line
                    end = buf.find(b"\r\n\r\n", at)
                    if end < 0:
                        return
                    end += 4
                self.body = b"".join(parts)
                return self._settle(sel, end)
            if len(buf) < at + size + 2:
                return
            parts.append(bytes(buf[at:at + size]))
            at += size + 2

    def _finish(self, sel: selectors.BaseSelector, end: int) -> None:
        self.body = bytes(self.buf[self.head_end:end])
        self._settle(sel, end)

    def _settle(self, sel: selectors.BaseSelector, end: int) -> None:
        """The answer is complete: the socket goes back to the pool if it can carry the next
        request (kept alive, nothing after the answer)."""
        assert self.sock is not None
        sel.unregister(self.sock)
        if self.keep and end == len(self.buf):
            self.peer.give_connection(self.sock)
        else:
            self.sock.close()
        self.sock = None

    def _fail(self, sel: selectors.BaseSelector, reason: str) -> None:
        self._close(sel)
        self.error = ShardError(self.peer.name, reason)

    def expire(self, sel: selectors.BaseSelector) -> None:
        self._fail(sel, f"no answer within {self.limit:g} s")

    def _close(self, sel: selectors.BaseSelector) -> None:
        if self.sock is not None:
            sel.unregister(self.sock)
            self.sock.close()
            self.sock = None
        self.buf.clear()
        self.head_end = self.body_end = -1
        self.headers.clear()
        self.connecting = self.chunked = False

    def answer(self) -> tuple[int, str, bytes]:
        """(status, content type without parameters, body); raises the exchange's
        ShardError."""
        if self.error is not None:
            raise self.error
        assert self.body is not None
        kind = self.headers.get("content-type", "").partition(";")[0].strip().lower()
        return self.status, kind, self.body

def run_exchanges(exchanges: Sequence[Exchange],
                  finished: Callable[[Exchange], None] | None = None) -> None:
    """Run the exchanges at once in this thread: every request is written, then the answers
    are read as they arrive, until each is complete, failed or past its deadline.
    ``finished`` is called with each exchange as soon as it is over, so that the caller
    reads an answer while the slower shards are still working."""
    with selectors.DefaultSelector() as sel:
        for ex in exchanges:
            ex.start(sel)
        pending = list(exchanges)
        while True:
            over = [ex for ex in pending if ex.done]
            if over:
                pending = [ex for ex in pending if not ex.done]
                if finished is not None:
                    for ex in over:
                        finished(ex)
            if not pending:
                return
            wait_for = min(ex.deadline for ex in pending) - time.monotonic()
            for key, mask in sel.select(max(wait_for, 0.0)):
                key.data.on_event(sel, mask)
            now = time.monotonic()
            for ex in pending:
                if not ex.done and now >= ex.deadline:
                    ex.expire(sel)
