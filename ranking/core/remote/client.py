"""The remote shard client: a queue server's shard asked over HTTP (the network iterator's
client side).

Layer: ``ranking.core`` (standard library HTTP, no Django). :class:`RemoteShard` has the
:class:`~ranking.core.shard.candidates.ShardClient` contract of a local shard; the requests and
answers are :mod:`ranking.core.remote.protocol`'s messages. Plain http goes through
:mod:`ranking.core.remote.http_exchange` (one thread, kept-alive sockets), https through
:mod:`http.client`. The searcher's fan-out (:mod:`ranking.core.search.fanout`) asks several remote
shards at once.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

from indexer.core.shard_token import TOKEN_HEADER
from ranking.core.errors import ShardError
from ranking.core.options import SearchOptions
from ranking.core.query.parser import ParsedQuery
from ranking.core.remote.http_exchange import Exchange, run_exchanges
from ranking.core.remote.protocol import (
    BINARY_TYPE,
    JSON_TYPE,
    PREFETCH_HEADS,
    SEARCH_PATH,
    SUMMARIES_PATH,
    Head,
    SearchAnswer,
    SearchRequest,
    SummariesRequest,
    decode_search_answer,
)
from ranking.core.shard.candidates import Candidates


class RemoteShard:
    """A remote shard reached over HTTP (loopback or the cluster's network).

    Connections are kept open between requests (HTTP/1.1 keep-alive) in a small pool, so that
    a query's requests (candidates, then summaries) do not each pay for a new TCP connection;
    a pooled connection the server has closed in the meantime is replaced and the request
    sent again once (every request is an idempotent GET). Plain http goes through
    :class:`~ranking.core.remote.http_exchange.Exchange` (several shards at once from one thread,
    :meth:`FanOut.candidates <ranking.core.search.fanout.FanOut.candidates>`),
    https through :mod:`http.client`. Search answers are asked for in the binary encoding
    (``fmt=bin``); a server that answers JSON instead is understood too."""

    MAX_IDLE = 8  # idle connections kept per shard
    weight = 1.0  # a shard searched on its own (ShardClient)
    bundle_path = None  # its bundle is on another machine: no link scores or embeddings here

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
        self.host = split.hostname
        self.port = split.port
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
        """Whether requests go through :class:`~ranking.core.remote.http_exchange.Exchange` (http,
        not https)."""
        return not self._https

    def take_connection(self) -> Any:
        with self._idle_lock:
            return self._idle.pop() if self._idle else None

    def give_connection(self, conn: Any) -> None:
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

    def exchange_for(self, path: str, query_string: str, limit: float) -> Exchange:
        request = f"GET {self._target(path, query_string)} HTTP/1.1\r\n".encode() + \
            self._request_head
        return Exchange(self, request, min(limit, self.timeout))

    def _get(self, path: str, query_string: str) -> tuple[int, str, bytes]:
        """(status, content type, body) of one request (``query_string`` url-encoded)."""
        if self.plain:
            ex = self.exchange_for(path, query_string, self.timeout)
            run_exchanges([ex])
            return ex.answer()
        return self._get_https(self._target(path, query_string))

    def _get_https(self, target: str) -> tuple[int, str, bytes]:
        headers = {TOKEN_HEADER: self.token, "Accept": f"{BINARY_TYPE}, {JSON_TYPE}"}
        while True:
            conn, reused = self.take_connection(), True
            if conn is None:
                if self._ssl is None:
                    self._ssl = ssl.create_default_context()
                conn, reused = http.client.HTTPSConnection(
                    self.host, self.port, timeout=self.timeout, context=self._ssl), False
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
                self.give_connection(conn)
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
        request = SearchRequest.for_query(query, parsed, n)
        return self.read_candidates(self._get(SEARCH_PATH, request.query_string()))

    def read_candidates(self, answer: tuple[int, str, bytes]) -> Candidates:
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
            sent = SearchAnswer.from_json(data, self.name)
        except (KeyError, TypeError, ValueError) as exc:
            raise ShardError(self.name, f"malformed answer: {exc}") from exc
        if sent.heads:
            self._keep_heads(sent.heads)
        return sent.candidates

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

    def snippet_summaries(self, doc_ids: Sequence[bytes], words: Sequence[str],
                          options: SearchOptions | None) -> list[dict[str, Any] | None]:
        """The plain summaries: the shard protocol has no body excerpts."""
        return self.summaries(doc_ids)

    def redirect_sources(self, url: str) -> tuple[str, ...]:
        """None known: a remote shard's index is not read here."""
        return ()

    def document_frequency(self, term: str) -> None:
        """Unknown: the shard protocol does not carry term statistics."""
        return None

    def _summaries(self, doc_ids: Sequence[bytes], heads: bool) -> list[dict[str, Any] | None]:
        request = SummariesRequest(tuple(doc_ids), heads)
        data = self._json(self._get(SUMMARIES_PATH, request.query_string()))
        out = data.get("summaries") if isinstance(data, dict) else None
        if not isinstance(out, list) or len(out) != len(doc_ids):
            raise ShardError(self.name, "malformed summaries answer")
        return out
