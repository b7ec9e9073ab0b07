"""The network iterator: ask several shards (queue servers) in parallel and merge.

Layer: ``ranking.core`` (standard library HTTP, no Django). The name server's pipeline
(:mod:`ranking.core.pipeline`) calls :func:`fan_out`; each shard is asked for
``ceil(n * alpha / number of shards)`` raw candidates (the seed: n = minimum results to group,
alpha = server alpha, 1.6). A shard that fails or does not answer within the timeout is
reported and skipped; the others' candidates are still used.

Protocol (served by ``ranking/api.py``, and by :class:`ShardHTTPServer` for tests and benches;
both call :func:`shard_search_payload` / :func:`shard_summaries_payload`):

* ``GET /api/shard/search?q=&n=&lang=&safe=&its=[&heads=k]`` -> ``{"candidates": {...},
  "heads": {hex doc_id: head}}`` (:meth:`Candidates.to_json`; ``heads``: the summary heads of
  the representatives of the shard's ``k`` best groups, scored without the link score, which
  :class:`HttpShard` then does not ask for again);
* ``GET /api/shard/summaries?ids=<hex doc_id>,...&its=[&heads=1]`` -> ``{"summaries": [...]}``
  (:meth:`LocalShard.summaries`; with ``heads=1`` only each summary's url and title,
  :meth:`LocalShard.summary_heads`: a result list without snippets needs no page text, and a
  stored summary holds the whole text of the page).

Every request carries the shared token in the ``X-Shard-Token`` header; without it the answer is
403.
"""

from __future__ import annotations

import hmac
import http.client
import json
import logging
import math
import os
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from indexer.core.ids import DOC_ID_LEN

from .errors import ShardError
from .grouping import group_candidates
from .options import SearchOptions
from .query import ParsedQuery, QueryParser
from .scoring import combine, fuse
from .shard import Candidates, LocalShard, ShardClient

logger = logging.getLogger(__name__)
TOKEN_HEADER = "X-Shard-Token"
SEARCH_PATH = "/api/shard/search"
SUMMARIES_PATH = "/api/shard/summaries"
MAX_SHARD_RESULTS = 10_000
# summary heads a search answer carries for its best candidates (a result list of ten, and
# some to spare for the groups other shards' candidates outrank or that are dropped)
PREFETCH_HEADS = 16
MAX_PREFETCH_HEADS = 100


def per_shard_results(n: int, alpha: float, shards: int) -> int:
    """n × alpha / number of shards, rounded up (one shard: n)."""
    if shards <= 1:
        return n
    return max(1, math.ceil(n * alpha / shards))


def token_ok(expected: str, given: str | None) -> bool:
    return bool(expected) and given is not None and hmac.compare_digest(
        expected.encode(), given.encode())


class HttpShard:
    """A remote shard reached over HTTP (loopback or the cluster's network).

    Connections are kept open between requests (HTTP/1.1 keep-alive) in a small pool, so that
    a query's requests (candidates, then summaries) do not each pay for a new TCP connection;
    a pooled connection the server has closed in the meantime is replaced and the request
    sent again once (every request is an idempotent GET)."""

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
        self._https = split.scheme == "https"
        self._host = split.hostname
        self._port = split.port
        self._prefix = split.path.rstrip("/")
        self._idle: list[http.client.HTTPConnection] = []
        self._idle_lock = threading.Lock()
        # heads that came with the latest search answers (doc_id -> head), oldest out
        self._heads: dict[bytes, dict[str, Any] | None] = {}
        self._ssl: ssl.SSLContext | None = None

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """(a connection, whether it was used before)."""
        with self._idle_lock:
            if self._idle:
                return self._idle.pop(), True
        if self._https:
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout,
                                               context=self._ssl), False
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout), False

    def _release(self, conn: http.client.HTTPConnection) -> None:
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

    def _get(self, path: str, params: Mapping[str, object]) -> dict[str, Any]:
        query = {k: v for k, v in params.items() if v is not None}
        if self.its is not None:
            query["its"] = self.its
        target = f"{self._prefix}{path}?{urllib.parse.urlencode(query)}"
        headers = {TOKEN_HEADER: self.token, "Accept": "application/json"}
        while True:
            conn, reused = self._connection()
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
                self._release(conn)
            break
        if response.status != 200:
            raise ShardError(self.name, f"HTTP {response.status}")
        try:
            return json.loads(body)
        except ValueError as exc:
            raise ShardError(self.name, f"bad JSON: {exc}") from exc

    def candidates(self, query: str, parsed: ParsedQuery, n: int,
                   options: SearchOptions) -> Candidates:
        data = self._get(SEARCH_PATH, {"q": query, "n": n, "lang": parsed.lang,
                                       "safe": "1" if _safe(parsed) else "0",
                                       "heads": PREFETCH_HEADS})
        try:
            found = Candidates.from_json(data["candidates"], self.name)
        except (KeyError, TypeError, ValueError) as exc:
            raise ShardError(self.name, f"malformed answer: {exc}") from exc
        self._keep_heads(data.get("heads"))
        return found

    PREFETCH_KEEP = 4 * PREFETCH_HEADS  # heads kept from the latest answers

    def _keep_heads(self, heads: Any) -> None:
        """Keep the heads a search answer carried (an older shard sends none)."""
        if not isinstance(heads, dict):
            return
        with self._idle_lock:
            for key, head in heads.items():
                try:
                    doc_id = bytes.fromhex(key)
                except (TypeError, ValueError):
                    continue
                if len(doc_id) == DOC_ID_LEN and (head is None or isinstance(head, dict)):
                    self._heads.pop(doc_id, None)
                    self._heads[doc_id] = head
            while len(self._heads) > self.PREFETCH_KEEP:
                self._heads.pop(next(iter(self._heads)))

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
        data = self._get(SUMMARIES_PATH, {"ids": ",".join(d.hex() for d in doc_ids),
                                          "heads": "1" if heads else None})
        out = data.get("summaries")
        if not isinstance(out, list) or len(out) != len(doc_ids):
            raise ShardError(self.name, "malformed summaries answer")
        return out


def _safe(parsed: ParsedQuery) -> bool:
    return not any("safe:all" in d.auto_meta for d in parsed.disjuncts)


def fan_out(shards: Sequence[ShardClient], call: Callable[[ShardClient], Any],
            timeout: float) -> tuple[list[Any], list[str]]:
    """Run ``call`` on every shard in parallel. Returns the answers of the shards that answered
    in time (in shard order) and one message per shard that failed or was too slow."""
    if len(shards) == 1:
        try:
            return [call(shards[0])], []
        except ShardError as exc:
            return [], [f"shard {exc.shard} skipped: {exc.reason}"]
    pool = _pool()
    futures = [pool.submit(call, s) for s in shards]
    wait(futures, timeout=timeout)
    answers, failures = [], []
    for shard, future in zip(shards, futures, strict=True):
        if not future.done():
            future.cancel()
            failures.append(f"shard {shard.name} skipped: no answer within {timeout:g} s")
            continue
        exc = future.exception()
        if exc is None:
            answers.append(future.result())
        elif isinstance(exc, ShardError):
            failures.append(f"shard {exc.shard} skipped: {exc.reason}")
        else:
            raise exc
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


def shard_search_payload(shard: LocalShard, params: Mapping[str, str], parser: QueryParser,
                         options: SearchOptions) -> dict[str, Any]:
    try:
        n = int(params.get("n", options.min_results_to_group))
    except ValueError:
        n = options.min_results_to_group
    n = min(max(n, 1), MAX_SHARD_RESULTS)
    query = params.get("q", "")
    parsed = parse_for_shard(params, parser)
    found = shard.candidates(query, parsed, n, options)
    payload: dict[str, Any] = {"candidates": found.to_json()}
    try:
        k = min(max(int(params.get("heads", 0)), 0), MAX_PREFETCH_HEADS)
    except ValueError:
        k = 0
    if k and len(found):
        ids = best_representatives(found, parsed, options, k)
        payload["heads"] = {i.hex(): head for i, head in zip(ids, shard.summary_heads(ids),
                                                                strict=True)}
    return payload


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
    serves the same payloads through Django, ``ranking/api.py``). Binds loopback only."""

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


class _ShardHandler(BaseHTTPRequestHandler):
    server: ShardHTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive: every answer has a Content-Length
    # an answer is written in two parts (head, body): without TCP_NODELAY the second waits
    # for the client's delayed ACK of the first (tens of milliseconds) on a kept-alive
    # connection
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug(format, *args)

    def do_GET(self) -> None:
        import time

        srv = self.server
        split = urllib.parse.urlsplit(self.path)
        params = dict(urllib.parse.parse_qsl(split.query))
        if not token_ok(srv.token, self.headers.get(TOKEN_HEADER)):
            return self._send(403, {"error": "missing or wrong shard token"})
        if srv.delay:
            time.sleep(srv.delay)
        if srv.fail:
            return self._send(500, {"error": "shard failure (test)"})
        with srv.lock:
            if split.path == SEARCH_PATH:
                payload = shard_search_payload(srv.shard, params, srv.parser, srv.options)
            elif split.path == SUMMARIES_PATH:
                payload = shard_summaries_payload(srv.shard, params)
            else:
                return self._send(404, {"error": "not found"})
        self._send(200, payload)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.log_request(status)
        head = (f"{self.protocol_version} {status} {self.responses[status][0]}\r\n"
                f"Server: {self.version_string()}\r\nDate: {self.date_time_string()}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
        try:  # one write: head and body in as few packets as the size allows
            self.wfile.write(head.encode("latin-1") + body)
        except OSError:
            pass
