"""The network iterator: ask several shards (queue servers) in parallel and merge.

Layer: ``ranking.core`` (standard library HTTP, no Django). The name server's pipeline
(:mod:`ranking.core.pipeline`) calls :func:`fan_out_candidates`; each shard is asked for
``ceil(n * alpha / number of shards)`` raw candidates (the seed: n = minimum results to group,
alpha = server alpha, 1.6). A shard that fails or does not answer within the timeout is
reported and skipped; the others' candidates are still used.

Protocol (served by ``ranking/api.py``, and by :class:`ShardHTTPServer` for tests and benches;
both call :func:`shard_search_answer` / :func:`shard_summaries_payload`):

* ``GET /api/shard/search?q=&n=&lang=&safe=&its=[&heads=k][&fmt=bin]`` -> the shard's raw
  candidates and the summary heads of the representatives of its ``k`` best groups, scored
  without the link score (:func:`best_representatives`; :class:`HttpShard` then does not ask
  for them again). With ``fmt=bin`` the answer is :func:`encode_search_answer`'s binary
  encoding (content type :data:`BINARY_TYPE`), else ``{"candidates": {...}, "heads": {hex
  doc_id: head}}`` (:meth:`Candidates.to_json`);
* ``GET /api/shard/summaries?ids=<hex doc_id>,...&its=[&heads=1]`` -> ``{"summaries": [...]}``
  (:meth:`LocalShard.summaries`; with ``heads=1`` only each summary's url and title,
  :meth:`LocalShard.summary_heads`: a result list without snippets needs no page text, and a
  stored summary holds the whole text of the page).

Every request carries the shared token in the ``X-Shard-Token`` header; without it the answer is
403.

Over plain http the client asks every shard from the calling thread: it writes all the
requests on kept-alive sockets, then reads the answers as they come (:func:`_exchange`, a
minimal HTTP/1.1 client). A thread per shard would cost more than a loopback answer (each
answer waits for the interpreter lock held by the others). Https shards go through
:mod:`http.client` in a pool of threads.
"""

from __future__ import annotations

import errno
import http.client
import json
import logging
import math
import os
import selectors
import socket
import socketserver
import ssl
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from http.server import ThreadingHTTPServer
from typing import Any

import numpy as np

from indexer.core.ids import DOC_ID_LEN
from indexer.core.shard_token import TOKEN_HEADER, token_ok

from .errors import ShardError
from .grouping import group_candidates
from .options import SearchOptions
from .query import ParsedQuery, QueryParser
from .scoring import combine, fuse
from .shard import Candidates, LocalShard, ShardClient

logger = logging.getLogger(__name__)
SEARCH_PATH = "/api/shard/search"
SUMMARIES_PATH = "/api/shard/summaries"
MAX_SHARD_RESULTS = 10_000
# summary heads a search answer carries for its best candidates (a result list of ten, and
# some to spare for the groups other shards' candidates outrank or that are dropped)
PREFETCH_HEADS = 16
MAX_PREFETCH_HEADS = 100
BINARY_TYPE = "application/x-yioopy-shard"  # encode_search_answer
JSON_TYPE = "application/json"
_ANSWER_MAGIC = b"YSR1"
_HEADS = struct.Struct("<I")

Head = dict[str, Any] | None
_HEAD_TYPES = {dict, type(None)}  # what JSON gives for a head or a missing document


def per_shard_results(n: int, alpha: float, shards: int) -> int:
    """n × alpha / number of shards, rounded up (one shard: n)."""
    if shards <= 1:
        return n
    return max(1, math.ceil(n * alpha / shards))


# -- the binary search answer --------------------------------------------------------------


def encode_search_answer(found: Candidates, heads: Mapping[bytes, Head]) -> bytes:
    """The search answer for ``fmt=bin``: ``YSR1``, the length of the candidates' encoding
    (u32, a multiple of 8, so that their arrays stay 8-byte aligned in the answer), that
    encoding (:meth:`Candidates.to_bytes`), then the heads: their number k (u32), their k
    doc_ids (24 bytes each) and a JSON array of the k heads (null: no such document). One
    JSON array of short objects decodes several times faster in Python than strings picked
    out one at a time."""
    block = found.to_bytes()
    return b"".join((_ANSWER_MAGIC, _HEADS.pack(len(block)), block, _HEADS.pack(len(heads)),
                     *heads, json.dumps(list(heads.values())).encode()))


def decode_search_answer(body: bytes, shard: str) -> tuple[Candidates, dict[bytes, Head]]:
    """Read :func:`encode_search_answer`'s encoding (the candidates' arrays are views of
    ``body``). Raises ValueError saying what is wrong with a malformed answer."""
    view = memoryview(body)
    if len(view) < 8:
        raise ValueError(f"an answer of {len(view)} bytes is too short")
    if view[:4] != _ANSWER_MAGIC:
        raise ValueError("not a binary shard search answer (bad magic)")
    (size,) = _HEADS.unpack_from(view, 4)
    at = 8 + size
    if at + 4 > len(view):
        raise ValueError(f"the candidates take {size} bytes, the answer has {len(view) - 8} "
                         "after its header (truncated?)")
    found = Candidates.from_bytes(view[8:at], shard)
    (k,) = _HEADS.unpack_from(view, at)
    at += 4
    ids = bytes(view[at:at + k * DOC_ID_LEN])
    if len(ids) != k * DOC_ID_LEN:
        raise ValueError(f"{k} heads announced, their doc_ids are truncated")
    try:
        heads = json.loads(bytes(view[at + len(ids):]))
    except ValueError as exc:
        raise ValueError(f"heads: {exc}") from exc
    if not isinstance(heads, list) or len(heads) != k or not set(map(type, heads)) <= _HEAD_TYPES:
        raise ValueError(f"heads: expected a list of {k} objects or nulls")
    return found, {ids[i * DOC_ID_LEN:(i + 1) * DOC_ID_LEN]: h for i, h in enumerate(heads)}


# -- the client ------------------------------------------------------------------------------


class _Exchange:
    """One GET to a shard over a plain-http socket, driven by :func:`_exchange` (connect if
    needed, write the request, read the answer: status line, headers, then a body of
    Content-Length bytes, chunked, or up to the close). A kept-alive socket that the server
    closed while idle is replaced once. The socket goes back to the shard's pool when the
    answer is complete and the server keeps the connection open."""

    __slots__ = ("shard", "request", "deadline", "limit", "sock", "reused", "retried",
                 "connecting", "sent", "buf", "head_end", "status", "headers", "keep",
                 "body_end", "chunked", "body", "error")

    MAX_HEAD = 64 * 1024

    def __init__(self, shard: HttpShard, request: bytes, limit: float) -> None:
        self.shard = shard
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
        sock = self.shard._take_socket()
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
                self.shard._host, self.shard._port or 80, type=socket.SOCK_STREAM)[0]
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
            if not version.startswith("HTTP/1.") or not rest[:3].isdigit():
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
                if not length.isdigit():
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
            self.shard._give_socket(self.sock)
        else:
            self.sock.close()
        self.sock = None

    def _fail(self, sel: selectors.BaseSelector, reason: str) -> None:
        self._close(sel)
        self.error = ShardError(self.shard.name, reason)

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


def _exchange(exchanges: Sequence[_Exchange],
              finished: Callable[[_Exchange], None] | None = None) -> None:
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


class HttpShard:
    """A remote shard reached over HTTP (loopback or the cluster's network).

    Connections are kept open between requests (HTTP/1.1 keep-alive) in a small pool, so that
    a query's requests (candidates, then summaries) do not each pay for a new TCP connection;
    a pooled connection the server has closed in the meantime is replaced and the request
    sent again once (every request is an idempotent GET). Plain http goes through
    :class:`_Exchange` (several shards at once from one thread, :func:`fan_out_candidates`),
    https through :mod:`http.client`. Search answers are asked for in the binary encoding
    (``fmt=bin``); a server that answers JSON instead is understood too."""

    MAX_IDLE = 8  # idle connections kept per shard

    def __init__(self, base_url: str, token: str, *, timeout: float = 5.0,
                 name: str | None = None, its: int | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.name = name or self.base_url
        self.its = its
        split = urllib.parse.urlsplit(self.base_url)
        if split.scheme not in ("http", "https") or not split.hostname:
            raise ValueError(f"not an http(s) url: {base_url!r}")
        if any(c in token for c in "\r\n\0"):
            raise ValueError("a shard token cannot hold line breaks")
        self._https = split.scheme == "https"
        self._host = split.hostname
        self._port = split.port
        self._prefix = split.path.rstrip("/")
        self._idle: list[Any] = []  # sockets (http) or HTTPSConnections (https)
        self._idle_lock = threading.Lock()
        # heads that came with the latest search answers (doc_id -> head), oldest out
        self._heads: dict[bytes, Head] = {}
        self._ssl: ssl.SSLContext | None = None
        host = split.netloc.rpartition("@")[2]
        self._request_head = (f"Host: {host}\r\n{TOKEN_HEADER}: {token}\r\n"
                              f"Accept: {BINARY_TYPE}, {JSON_TYPE}\r\n\r\n").encode("latin-1")

    @property
    def plain(self) -> bool:
        """Whether requests go through :class:`_Exchange` (http, not https)."""
        return not self._https

    def _take_socket(self) -> Any:
        with self._idle_lock:
            return self._idle.pop() if self._idle else None

    def _give_socket(self, conn: Any) -> None:
        with self._idle_lock:
            if len(self._idle) < self.MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close the idle connections (the shard stays usable)."""
        with self._idle_lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _target(self, path: str, query_string: str) -> str:
        its = "" if self.its is None else f"&its={self.its}"
        return f"{self._prefix}{path}?{query_string}{its}"

    def _exchange_for(self, path: str, query_string: str, limit: float) -> _Exchange:
        request = f"GET {self._target(path, query_string)} HTTP/1.1\r\n".encode() + \
            self._request_head
        return _Exchange(self, request, min(limit, self.timeout))

    def _get(self, path: str, query_string: str) -> tuple[int, str, bytes]:
        """(status, content type, body) of one request (``query_string`` url-encoded)."""
        if self.plain:
            ex = self._exchange_for(path, query_string, self.timeout)
            _exchange([ex])
            return ex.answer()
        return self._get_https(self._target(path, query_string))

    def _get_https(self, target: str) -> tuple[int, str, bytes]:
        headers = {TOKEN_HEADER: self.token, "Accept": f"{BINARY_TYPE}, {JSON_TYPE}"}
        while True:
            conn, reused = self._take_socket(), True
            if conn is None:
                if self._ssl is None:
                    self._ssl = ssl.create_default_context()
                conn, reused = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self.timeout, context=self._ssl), False
            try:
                conn.request("GET", target, headers=headers)
                response = conn.getresponse()
                body = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError,
                    BrokenPipeError) as exc:
                conn.close()
                if reused:
                    continue  # the server closed an idle connection: send it on a new one
                raise ShardError(self.name, f"unreachable: {exc}") from exc
            except (http.client.HTTPException, TimeoutError, OSError) as exc:
                conn.close()
                raise ShardError(self.name, f"unreachable: {exc}") from exc
            if response.will_close:
                conn.close()
            else:
                self._give_socket(conn)
            kind = (response.getheader("Content-Type") or "").partition(";")[0]
            return response.status, kind.strip().lower(), body

    def _json(self, answer: tuple[int, str, bytes]) -> Any:
        status, _, body = answer
        if status != 200:
            raise ShardError(self.name, f"HTTP {status}")
        try:
            return json.loads(body)
        except ValueError as exc:
            raise ShardError(self.name, f"bad JSON: {exc}") from exc

    def candidates(self, query: str, parsed: ParsedQuery, n: int,
                   options: SearchOptions) -> Candidates:
        return self._read_candidates(self._get(SEARCH_PATH, _search_query(query, parsed, n)))

    def _read_candidates(self, answer: tuple[int, str, bytes]) -> Candidates:
        """The candidates of a search answer, binary or JSON (an older shard); keeps the
        heads that came with them."""
        status, kind, body = answer
        if status == 200 and kind == BINARY_TYPE:
            try:
                found, heads = decode_search_answer(body, self.name)
            except ValueError as exc:
                raise ShardError(self.name, f"malformed answer: {exc}") from exc
            self._keep_heads(heads)
            return found
        data = self._json(answer)
        try:
            found = Candidates.from_json(data["candidates"], self.name)
        except (KeyError, TypeError, ValueError) as exc:
            raise ShardError(self.name, f"malformed answer: {exc}") from exc
        sent = data.get("heads")
        if isinstance(sent, dict):  # an older shard sends none
            heads: dict[bytes, Head] = {}
            for key, head in sent.items():
                try:
                    doc_id = bytes.fromhex(key)
                except (TypeError, ValueError):
                    continue
                if len(doc_id) == DOC_ID_LEN and type(head) in _HEAD_TYPES:
                    heads[doc_id] = head
            self._keep_heads(heads)
        return found

    PREFETCH_KEEP = 4 * PREFETCH_HEADS  # heads kept from the latest answers

    def _keep_heads(self, heads: Mapping[bytes, Head]) -> None:
        """Keep the heads a search answer carried (doc_ids of DOC_ID_LEN bytes, each head a
        dict or None): the newest last, the oldest dropped once twice PREFETCH_KEEP are
        kept (one copy of the newest instead of a pop per head)."""
        with self._idle_lock:
            for doc_id in heads.keys() & self._heads.keys():
                del self._heads[doc_id]  # seen again: moves to the newest end
            self._heads.update(heads)
            if len(self._heads) > 2 * self.PREFETCH_KEEP:
                newest = list(self._heads.items())[-self.PREFETCH_KEEP:]
                self._heads = dict(newest)

    def summaries(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        return self._summaries(doc_ids, heads=False)

    def summary_heads(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Only each summary's url and title (see :meth:`LocalShard.summary_heads`). Heads
        that came with the latest search answers are not asked for again: a result list
        without snippets then usually needs no second request."""
        out: list[dict[str, Any] | None] = []
        missing: list[int] = []
        with self._idle_lock:
            for i, doc_id in enumerate(doc_ids):
                if doc_id in self._heads:
                    head = self._heads[doc_id]
                    out.append(dict(head) if head is not None else None)
                else:
                    out.append(None)
                    missing.append(i)
        if missing:
            fetched = self._summaries([doc_ids[i] for i in missing], heads=True)
            for i, head in zip(missing, fetched, strict=True):
                out[i] = head
        return out

    def _summaries(self, doc_ids: Sequence[bytes], heads: bool) -> list[dict[str, Any] | None]:
        ids = ",".join(d.hex() for d in doc_ids)
        data = self._json(self._get(SUMMARIES_PATH, f"ids={ids}&heads=1" if heads else
                                    f"ids={ids}"))
        out = data.get("summaries") if isinstance(data, dict) else None
        if not isinstance(out, list) or len(out) != len(doc_ids):
            raise ShardError(self.name, "malformed summaries answer")
        return out


def _safe(parsed: ParsedQuery) -> bool:
    return not any("safe:all" in d.auto_meta for d in parsed.disjuncts)


def _search_query(query: str, parsed: ParsedQuery, n: int) -> str:
    """The url-encoded parameters of a search request (the same for every shard)."""
    return (f"q={urllib.parse.quote_plus(query)}&n={int(n)}"
            f"&lang={urllib.parse.quote_plus(parsed.lang)}&safe={'1' if _safe(parsed) else '0'}"
            f"&heads={int(PREFETCH_HEADS)}&fmt=bin")


def fan_out_candidates(shards: Sequence[ShardClient], query: str, parsed: ParsedQuery, n: int,
                       options: SearchOptions, timeout: float
                       ) -> tuple[list[Candidates], list[str]]:
    """Every shard's first ``n`` candidates, asked for in parallel: plain-http shards from
    this thread at once (:func:`_exchange`), the others (https, in-process) through
    :func:`fan_out`'s threads meanwhile. Returns the answers of the shards that answered in
    time (in shard order) and one message per shard that failed or was too slow."""
    plain = [isinstance(s, HttpShard) and s.plain for s in shards]
    if not any(plain):
        return fan_out(shards, lambda s: s.candidates(query, parsed, n, options), timeout)
    others = [s for s, p in zip(shards, plain, strict=True) if not p]
    started = time.monotonic()
    futures = [_pool().submit(s.candidates, query, parsed, n, options) for s in others]
    query_string = _search_query(query, parsed, n)
    exchanges = [s._exchange_for(SEARCH_PATH, query_string, timeout)
                 for s, p in zip(shards, plain, strict=True) if p]
    read: dict[int, Candidates | ShardError] = {}

    def finished(ex: _Exchange) -> None:
        try:
            read[id(ex)] = ex.shard._read_candidates(ex.answer())
        except ShardError as exc:
            read[id(ex)] = exc

    _exchange(exchanges, finished)
    if futures:
        wait(futures, timeout=max(timeout - (time.monotonic() - started), 0.0))
    outcomes: list[Candidates | ShardError] = []
    plain_at, other_at = iter(exchanges), iter(futures)
    for shard, p in zip(shards, plain, strict=True):
        if p:
            outcomes.append(read[id(next(plain_at))])
            continue
        try:
            outcomes.append(_outcome(shard, next(other_at), timeout))
        except ShardError as exc:
            outcomes.append(exc)
    return _report(outcomes)


def fan_out(shards: Sequence[ShardClient], call: Callable[[ShardClient], Any],
            timeout: float) -> tuple[list[Any], list[str]]:
    """Run ``call`` on every shard in parallel threads. Returns the answers of the shards
    that answered in time (in shard order) and one message per shard that failed or was too
    slow."""
    if len(shards) == 1:
        try:
            return [call(shards[0])], []
        except ShardError as exc:
            return _report([exc])
    futures = [_pool().submit(call, s) for s in shards]
    wait(futures, timeout=timeout)
    outcomes: list[Any] = []
    for shard, future in zip(shards, futures, strict=True):
        try:
            outcomes.append(_outcome(shard, future, timeout))
        except ShardError as exc:
            outcomes.append(exc)
    return _report(outcomes)


def _outcome(shard: ShardClient, future: Future, timeout: float) -> Any:
    """A finished future's answer; a ShardError for one that failed or is still running
    (abandoned: it ends by the shard's own timeout). Other errors are bugs and propagate."""
    if not future.done():
        future.cancel()
        raise ShardError(shard.name, f"no answer within {timeout:g} s")
    exc = future.exception()
    if exc is not None:
        raise exc
    return future.result()


def _report(outcomes: Sequence[Any]) -> tuple[list[Any], list[str]]:
    answers = [x for x in outcomes if not isinstance(x, ShardError)]
    failures = [f"shard {x.shard} skipped: {x.reason}" for x in outcomes
                if isinstance(x, ShardError)]
    for message in failures:
        logger.warning("%s", message)
    return answers, failures


FAN_OUT_THREADS = 64  # a shard that does not answer keeps its thread until its own timeout
_POOL: list[tuple[int, ThreadPoolExecutor]] = []  # (pid, the threads asking the shards)
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The process's threads for :func:`fan_out`, started on first use and kept: starting a
    thread per shard per query costs more than a loopback request (the new thread waits for
    the interpreter lock). A forked child makes its own."""
    with _POOL_LOCK:
        if not _POOL or _POOL[0][0] != os.getpid():
            _POOL[:] = [(os.getpid(), ThreadPoolExecutor(max_workers=FAN_OUT_THREADS,
                                                         thread_name_prefix="shard"))]
        return _POOL[0][1]


# -- serving side (used by ranking/api.py and the local test/bench server) -------------------


def parse_for_shard(params: Mapping[str, str], parser: QueryParser) -> ParsedQuery:
    return parser.parse(params.get("q", ""), ui_lang=params.get("lang", "en") or "en",
                        safe_search=params.get("safe", "1") != "0")


def shard_search(shard: LocalShard, params: Mapping[str, str], parser: QueryParser,
                 options: SearchOptions) -> tuple[Candidates, dict[bytes, Head]]:
    """The shard's candidates for a search request and the heads of its best groups'
    representatives (as many as the ``heads`` parameter asks for)."""
    try:
        n = int(params.get("n", options.min_results_to_group))
    except ValueError:
        n = options.min_results_to_group
    n = min(max(n, 1), MAX_SHARD_RESULTS)
    query = params.get("q", "")
    parsed = parse_for_shard(params, parser)
    found = shard.candidates(query, parsed, n, options)
    try:
        k = min(max(int(params.get("heads", 0)), 0), MAX_PREFETCH_HEADS)
    except ValueError:
        k = 0
    heads: dict[bytes, Head] = {}
    if k and len(found):
        ids = best_representatives(found, parsed, options, k)
        heads = dict(zip(ids, shard.summary_heads(ids), strict=True))
    return found, heads


def shard_search_payload(shard: LocalShard, params: Mapping[str, str], parser: QueryParser,
                         options: SearchOptions) -> dict[str, Any]:
    """The JSON search answer (see the module docstring)."""
    found, heads = shard_search(shard, params, parser, options)
    payload: dict[str, Any] = {"candidates": found.to_json()}
    if heads:
        payload["heads"] = {i.hex(): head for i, head in heads.items()}
    return payload


def shard_search_answer(shard: LocalShard, params: Mapping[str, str], parser: QueryParser,
                        options: SearchOptions) -> tuple[bytes, str]:
    """(body, content type) of the search answer: binary when the request says ``fmt=bin``,
    else JSON."""
    if params.get("fmt") == "bin":
        return encode_search_answer(*shard_search(shard, params, parser, options)), \
            BINARY_TYPE
    return json.dumps(shard_search_payload(shard, params, parser, options)).encode(), JSON_TYPE


def best_representatives(found: Candidates, parsed: ParsedQuery, options: SearchOptions,
                         k: int) -> list[bytes]:
    """doc_ids of the representatives of the ``k`` best groups of one shard's candidates,
    scored as the name server scores groups (:meth:`Searcher._rank
    <ranking.core.pipeline.Searcher._rank>`) but without the link score, which the shard does
    not have: the ones whose heads the name server will most likely ask for. A guess: a head
    it asks for and did not get is fetched then."""
    groups = group_candidates(found.doc_ids, found.doc_rank, found.relevance, found.proximity,
                              (options.doc_rank_weight, options.relevance_weight,
                               options.proximity_weight))
    n = len(groups)
    if not n:
        return []
    bonus = np.full(n, -np.inf)
    np.maximum.at(bonus, groups.member_group, found.bonuses.sum(axis=0))
    bonus[~np.isfinite(bonus)] = 0.0
    weight = parsed.controls.weight
    if parsed.word_count >= 2 and options.proximity_weight > 0 and \
            options.proximity_bonus > 0 and bool((groups.proximity > 0).any()):
        score = combine(groups.doc_rank, groups.relevance, np.zeros(n), options, bonus)
        score = fuse(score, groups.proximity, options.proximity_bonus, weight)[0]
    else:
        score = combine(groups.doc_rank, groups.relevance, np.zeros(n), options, bonus, weight)
    top = np.argsort(-score, kind="stable")[:k]
    return [found.doc_ids[int(r)].tobytes() for r in groups.rep[top]]


def shard_summaries_payload(shard: LocalShard, params: Mapping[str, str]) -> dict[str, Any]:
    ids = []
    for part in params.get("ids", "").split(","):
        if part:
            try:
                raw = bytes.fromhex(part)
            except ValueError:
                raw = b""
            ids.append(raw)
    valid = [i for i in ids if len(i) == DOC_ID_LEN]
    got = iter(shard.summary_heads(valid) if params.get("heads") == "1" else
               shard.summaries(valid))
    return {"summaries": [next(got) if len(i) == DOC_ID_LEN else None for i in ids]}


class ShardHTTPServer(ThreadingHTTPServer):
    """A minimal shard server over one :class:`LocalShard` (tests and benchmarks; production
    serves the same answers through Django, ``ranking/api.py``). Binds loopback only."""

    daemon_threads = True

    def __init__(self, shard: LocalShard, token: str, options: SearchOptions | None = None,
                 port: int = 0, delay: float = 0.0, fail: bool = False) -> None:
        self.shard = shard
        self.token = token
        self.options = options or SearchOptions()
        self.parser = QueryParser()
        self.delay = delay
        self.fail = fail
        self.lock = threading.Lock()  # a LocalShard's reader is read by one thread at a time
        super().__init__(("127.0.0.1", port), _ShardHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _BadRequest(Exception):
    """A request the server answers with 400 and then closes the connection after."""


class _ShardHandler(socketserver.StreamRequestHandler):
    """HTTP/1.1 for the shard protocol alone: GET requests without a body, answered with a
    Content-Length, kept alive unless the client says otherwise. Reads only the request line
    and the two headers it needs (token, Connection): :class:`http.server.
    BaseHTTPRequestHandler` parses every header with the email package, which cost about as
    much as the shard's search."""

    server: ShardHTTPServer
    # an answer must not wait for the client's delayed ACK of the previous one on a
    # kept-alive connection
    disable_nagle_algorithm = True
    MAX_LINE = 64 * 1024
    MAX_HEADERS = 100
    REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
               405: "Method Not Allowed", 500: "Internal Server Error"}

    def handle(self) -> None:
        try:
            while self._one():
                pass
        except OSError:  # the client went away
            pass

    def _one(self) -> bool:
        """Answer one request; whether the connection stays open for the next."""
        try:
            request = self._read_request()
        except _BadRequest as exc:
            self._send(400, {"error": str(exc)}, keep=False)
            return False
        if request is None:
            return False
        method, target, token, keep = request
        if method != "GET":
            self._send(405, {"error": "only GET"}, keep=False)
            return False
        srv = self.server
        split = urllib.parse.urlsplit(target)
        params = dict(urllib.parse.parse_qsl(split.query))
        if not token_ok(srv.token, token):
            return self._send(403, {"error": "missing or wrong shard token"}, keep)
        if srv.delay:
            time.sleep(srv.delay)
        if srv.fail:
            return self._send(500, {"error": "shard failure (test)"}, keep)
        try:
            with srv.lock:
                if split.path == SEARCH_PATH:
                    body, kind = shard_search_answer(srv.shard, params, srv.parser,
                                                     srv.options)
                elif split.path == SUMMARIES_PATH:
                    body, kind = json.dumps(shard_summaries_payload(srv.shard, params)
                                            ).encode(), JSON_TYPE
                else:
                    return self._send(404, {"error": "not found"}, keep)
        except Exception:  # a bug in the search: answer 500 (and log it), keep serving
            logger.exception("shard request failed: %s", target[:200])
            return self._send(500, {"error": "internal error"}, False)
        return self._write(200, body, kind, keep)

    def _read_request(self) -> tuple[str, str, str | None, bool] | None:
        """(method, target, token, keep alive) of the next request; None when the client
        closed the connection between requests."""
        line = self.rfile.readline(self.MAX_LINE + 1)
        while line in (b"\r\n", b"\n"):  # blank lines before a request are allowed
            line = self.rfile.readline(self.MAX_LINE + 1)
        if not line:
            return None
        if len(line) > self.MAX_LINE or not line.endswith(b"\n"):
            raise _BadRequest("request line too long")
        parts = line.decode("latin-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest("not an HTTP/1.x request line")
        method, target, version = parts
        token: str | None = None
        connection = ""
        for _ in range(self.MAX_HEADERS + 1):
            header = self.rfile.readline(self.MAX_LINE + 1)
            if header in (b"\r\n", b"\n", b""):
                break
            if len(header) > self.MAX_LINE:
                raise _BadRequest("header line too long")
            name, sep, value = header.decode("latin-1").partition(":")
            if not sep:
                raise _BadRequest("header line without a colon")
            name = name.strip().lower()
            if name == "x-shard-token":
                token = value.strip()
            elif name == "connection":
                connection = value.strip().lower()
            elif name in ("content-length", "transfer-encoding") and value.strip() != "0":
                raise _BadRequest("a request body is not expected")
        else:
            raise _BadRequest("too many headers")
        keep = "close" not in connection if version == "HTTP/1.1" else \
            "keep-alive" in connection
        return method, target, token, keep

    def _send(self, status: int, payload: dict[str, Any], keep: bool) -> bool:
        return self._write(status, json.dumps(payload).encode(), JSON_TYPE, keep)

    def _write(self, status: int, body: bytes, kind: str, keep: bool) -> bool:
        """Write one answer (head and body in one write); whether the connection stays
        open."""
        close = "" if keep else "Connection: close\r\n"
        head = (f"HTTP/1.1 {status} {self.REASONS[status]}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body)}\r\n{close}\r\n")
        logger.debug("shard %s %d %d", self.client_address[0], status, len(body))
        self.wfile.write(head.encode("latin-1") + body)
        return keep
