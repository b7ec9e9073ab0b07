"""A DNS cache in front of the system resolver, for a fetcher process's Fetchers.

Layer: ``crawler.core.http`` (the HTTP layer). :class:`CachingResolver` is a
:data:`~crawler.core.http.egress.Resolver`: the glue makes one per fetcher process and hands it
to every :class:`~crawler.core.http.client.Fetcher` it builds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from crawler.core.http.egress import Resolver, system_resolver
from crawler.core.http.errors import DnsError


class CachingResolver:
    """A DNS cache in front of the system resolver, shared by a fetcher process's Fetchers.

    Each host name is looked up once per ``ttl`` seconds (answers and "no such host" alike)
    instead of once per page, and at most ``parallel`` lookups run at once: some resolvers
    (stub resolvers, small caching servers; this machine's among them) answer one query at a
    time and stall parallel ones until their 5-second timeout, and a round of robots.txt
    requests to a hundred new hosts is such a burst (measured here: 100 new hosts, 5.0 s in
    parallel, under 0.1 s one at a time). The Fetcher still vets every address it connects
    to, so the cache cannot widen the egress policy. Thread-safe."""

    def __init__(self, resolver: Resolver = system_resolver, ttl: float = 300.0,
                 parallel: int = 1, max_entries: int = 50_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._resolver = resolver
        self._ttl = ttl
        self._max = max_entries
        self._clock = clock
        self._gate = threading.BoundedSemaphore(parallel)
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[float, Sequence[str] | DnsError]] = {}

    def __call__(self, host: str, port: int) -> Sequence[str]:
        key = host.lower()
        hit = self._cache.get(key)
        if hit is None or hit[0] <= self._clock():
            with self._gate:
                hit = self._cache.get(key)
                if hit is None or hit[0] <= self._clock():
                    hit = self._look_up(key, host, port)
        answer = hit[1]
        if isinstance(answer, DnsError):
            raise DnsError(answer.message, url=answer.url)
        return list(answer)

    def _look_up(self, key: str, host: str, port: int
                 ) -> tuple[float, Sequence[str] | DnsError]:
        """Ask the resolver (under the gate) and cache the answer or the failure."""
        try:
            answer: Sequence[str] | DnsError = tuple(self._resolver(host, port))
        except DnsError as exc:
            answer = exc
        hit = (self._clock() + self._ttl, answer)
        with self._lock:
            if len(self._cache) >= self._max:
                self._cache.clear()  # bounded: start again rather than grow
            self._cache[key] = hit
        return hit
