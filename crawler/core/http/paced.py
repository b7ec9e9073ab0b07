"""Crawl-delayed downloads: every request to a delayed host, redirect hops included, spaced by
the host's delay.

Layer: ``crawler.core.http`` (the HTTP layer). The schedule worker's crawl-delay lanes
(:mod:`crawler.core.fetcher.lanes`) call a :class:`PacedFetch` for each delayed url once the
host's delay has passed; it follows redirects itself, one hop at a time, with a Fetcher that
follows none (:func:`hop_fetcher_for`), so that a redirect to the same host waits for the delay
too (the seed, *Yioop Search Engine Ranking Mechanisms*: crawl-delayed hosts).

``last_request`` (host name -> when it was last requested) is the one record of a worker's
delayed hosts: the lanes read it to know when a host is due, :class:`PacedFetch` writes it
after every request to the host. A :class:`HostPacer`, when given, is asked for a slot before
every request to a delayed host, so that the fetchers of several crawls that ask the same
host take turns (the engine's is in Redis: ``crawler.machines.host_pacing``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from crawler.core.http.client import Fetcher, normalize_url
from crawler.core.http.config import FetchConfig
from crawler.core.http.egress import Resolver
from crawler.core.http.errors import RedirectLoop, TooManyRedirects
from crawler.core.http.result import FetchRequest, FetchResult
from indexer.core.urls import host_of

MAX_DELAY_WAIT = 120.0  # a redirect hop never waits longer than this for its host's delay


def hop_fetcher_for(config: FetchConfig, resolver: Resolver | None = None) -> Fetcher:
    """The Fetcher for crawl-delayed urls: it follows no redirect by itself, so that the
    worker can space every hop to a delayed host by the delay."""
    return Fetcher(replace(config, max_redirects=0, concurrency=4), resolver=resolver)


def merge_last_requests(last_request: dict[str, float], origins: Mapping[str, float]) -> None:
    """Fold in when earlier schedules last requested delayed hosts (origin -> time), keeping
    the later time of each host name."""
    for origin, at in origins.items():
        key = host_of(origin)
        last_request[key] = max(last_request.get(key, at), at)


class HostPacer(Protocol):
    """Request slots of crawl-delayed hosts shared by every fetcher (of every crawl)."""

    def reserve(self, host: str, delay: float, now: float) -> float:
        """The moment (``now`` or later) the next request to ``host`` may be made, taken for
        it: the next caller's is at least ``delay`` later."""
        ...


class PacedFetch:
    """Fetches one crawl-delayed url, its host's delay having passed: a redirect to the same
    host name waits for the delay again before the next hop (up to ``max_redirects`` hops).
    The result's ``elapsed`` is the time spent downloading (the hops' times), not the waits
    between hops. Without a hop fetcher (an injected Fetcher that follows redirects itself)
    the url is fetched in one call."""

    def __init__(self, fetcher: Fetcher, hop_fetcher: Fetcher | None, max_redirects: int,
                 last_request: dict[str, float], clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep,
                 pacer: HostPacer | None = None) -> None:
        self._fetcher = fetcher
        self._pacer = pacer
        self._hop_fetcher = hop_fetcher
        self._max_redirects = max_redirects
        self._last = last_request
        self._clock = clock
        self._sleep = sleep

    def __call__(self, url: str, etag: str | None, delay: float,
                 last_modified: str | None = None) -> FetchResult:
        """Fetch ``url`` (conditionally, with ``etag`` / ``last_modified``), following its
        redirects one hop at a time, each after the host's ``delay``."""
        host = host_of(url)
        self._take_slot(host, delay)
        if self._hop_fetcher is None:
            try:
                return self._fetcher.fetch(FetchRequest(url, etag=etag,
                                                        last_modified=last_modified))
            finally:
                self._last[host] = self._clock()
        return self._follow(url, (etag, last_modified), delay, host, self._hop_fetcher)

    def _follow(self, first_url: str, validators: tuple[str | None, str | None], delay: float,
                host: str, hop_fetcher: Fetcher) -> FetchResult:
        spent = 0.0
        hops: list[Any] = []
        visited = {normalize_url(first_url)}
        url = first_url
        while True:
            try:
                result = hop_fetcher.fetch(FetchRequest(url, etag=validators[0],
                                                        last_modified=validators[1]))
            finally:
                if host_of(url) == host:
                    self._last[host] = self._clock()
            spent += max(0.0, result.elapsed)
            if not (isinstance(result.error, TooManyRedirects) and result.redirects):
                return replace(result, url=first_url, redirects=(*hops, *result.redirects),
                               elapsed=spent)
            hop = result.redirects[-1]
            hops.append(hop)
            error: Exception | None = None
            if len(hops) > self._max_redirects:
                error = TooManyRedirects(f"more than {self._max_redirects} redirects",
                                         url=hop.target)
            elif normalize_url(hop.target) in visited:
                error = RedirectLoop(f"redirect loop: {url} -> {hop.target}", url=hop.target)
            if error is not None:
                return replace(result, url=first_url, redirects=tuple(hops), error=error,
                               elapsed=spent)
            visited.add(normalize_url(hop.target))
            url, validators = hop.target, (None, None)
            if host_of(url) == host:
                self._wait_for_host(host, delay)
                self._take_slot(host, delay)

    def _wait_for_host(self, host: str, delay: float) -> None:
        last = self._last.get(host)
        if last is not None:
            pause = last + delay - self._clock()
            if pause > 0:
                self._sleep(min(pause, MAX_DELAY_WAIT))

    def _take_slot(self, host: str, delay: float) -> None:
        """Wait for the host's shared slot (other crawls' fetchers), if there is a pacer."""
        if self._pacer is None or delay <= 0:
            return
        now = self._clock()
        pause = self._pacer.reserve(host, delay, now) - now
        if pause > 0:
            self._sleep(min(pause, MAX_DELAY_WAIT))
