"""The fan-out: ask every shard of a search at once and keep the answers that came in time.

Layer: ``ranking.core``. A :class:`~ranking.core.search.pipeline.Searcher` owns one :class:`FanOut`
and closes it with itself (no thread pool is global to the process). Each shard is asked for
``ceil(n * alpha / number of shards)`` raw candidates (:func:`per_shard_results`; the seed: n =
minimum results to group, alpha = server alpha, 1.6). A shard that fails or does not answer
within the timeout is reported and skipped; the others' candidates are still used.

Plain-http remote shards are asked from the calling thread at once
(:func:`ranking.core.remote.http_exchange.run_exchanges`); the others (https, in-process) through the
fan-out's threads meanwhile, started on first use and kept: starting a thread per shard per
query costs more than a loopback request (the new thread waits for the interpreter lock).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from ranking.core.errors import ShardError
from ranking.core.options import SearchOptions
from ranking.core.query.parser import ParsedQuery
from ranking.core.remote.client import RemoteShard
from ranking.core.remote.http_exchange import Exchange, run_exchanges
from ranking.core.remote.protocol import SEARCH_PATH, SearchRequest
from ranking.core.shard.candidates import Candidates, ShardClient

logger = logging.getLogger(__name__)
FAN_OUT_THREADS = 64  # a shard that does not answer keeps its thread until its own timeout


def per_shard_results(n: int, alpha: float, shards: int) -> int:
    """n × alpha / number of shards, rounded up (one shard: n)."""
    if shards <= 1:
        return n
    return max(1, math.ceil(n * alpha / shards))


class FanOut:
    """The threads that ask shards in parallel, started on first use (a forked child starts
    its own). :meth:`close` releases them; a later call starts them again."""

    def __init__(self, threads: int = FAN_OUT_THREADS) -> None:
        self.threads = threads
        self._pool: tuple[int, ThreadPoolExecutor] | None = None  # (pid, threads)
        self._lock = threading.Lock()

    def submit(self, call: Callable[..., Any], *args: Any) -> Future:
        with self._lock:  # not submitted to a pool that close() is shutting down
            if self._pool is None or self._pool[0] != os.getpid():
                self._pool = (os.getpid(), ThreadPoolExecutor(
                    max_workers=self.threads, thread_name_prefix="shard"))
            return self._pool[1].submit(call, *args)

    def close(self) -> None:
        """Let the threads end (a call still running ends by its shard's own timeout)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and pool[0] == os.getpid():
            pool[1].shutdown(wait=False, cancel_futures=True)

    def candidates(self, shards: Sequence[ShardClient], query: str, parsed: ParsedQuery,
                   n: int, options: SearchOptions, timeout: float
                   ) -> tuple[list[Candidates], list[str]]:
        """Every shard's first ``n`` candidates, asked for in parallel: plain-http shards from
        this thread at once (:func:`~ranking.core.remote.http_exchange.run_exchanges`), the others
        (https, in-process) through :meth:`map`'s threads meanwhile. Returns the answers of
        the shards that answered in time (in shard order) and one message per shard that
        failed or was too slow."""
        plain = [isinstance(s, RemoteShard) and s.plain for s in shards]
        if not any(plain):
            return self.map(shards, lambda s: s.candidates(query, parsed, n, options), timeout)
        others = [s for s, p in zip(shards, plain, strict=True) if not p]
        started = time.monotonic()
        futures = [self.submit(s.candidates, query, parsed, n, options) for s in others]
        query_string = SearchRequest.for_query(query, parsed, n).query_string()
        exchanges = [s.exchange_for(SEARCH_PATH, query_string, timeout)
                     for s, p in zip(shards, plain, strict=True) if p]
        read: dict[int, Candidates | ShardError] = {}

        def finished(ex: Exchange) -> None:
            try:
                read[id(ex)] = ex.peer.read_candidates(ex.answer())
            except ShardError as exc:
                read[id(ex)] = exc

        run_exchanges(exchanges, finished)
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

    def map(self, shards: Sequence[ShardClient], call: Callable[[ShardClient], Any],
            timeout: float) -> tuple[list[Any], list[str]]:
        """Run ``call`` on every shard in parallel threads. Returns the answers of the shards
        that answered in time (in shard order) and one message per shard that failed or was
        too slow."""
        if len(shards) == 1:
            try:
                return [call(shards[0])], []
            except ShardError as exc:
                return _report([exc])
        futures = [self.submit(call, s) for s in shards]
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
