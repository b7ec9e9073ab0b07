"""One round of concurrent downloads that does not wait for blocked hosts; long bodies wait
deflated.

Layer: ``crawler.core.http`` (the HTTP layer). The schedule worker's rounds
(:mod:`crawler.core.fetcher.rounds`) call :func:`download_round` for each round of plain (not
crawl-delayed) urls. A download is *blocked* when it has been in flight ``slow_seconds``
(see :mod:`.hostwatch`): the round stops waiting once only blocked downloads, and downloads
waiting for a slot of a blocked host, are left; the blocked ones come back as futures (they
finish in the background, by the page deadline).

A round holds all its bodies until each is processed, so a body of :data:`PACK_BODY_BYTES` or
more waits deflated (:class:`PackedResult`, zlib level 1, done in the download thread; HTML
shrinks 5-10 times): 100 pages of an API reference at 1-4 MB each made a fetcher's peak memory
depend on the pages crawled. A body is inflated just before it is processed, one at a time.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, replace

from crawler.core.http.client import Fetcher
from crawler.core.http.hostwatch import HostWatch
from crawler.core.http.result import FetchRequest, FetchResult
from crawler.core.urls import origin_of

PACK_BODY_BYTES = 256 << 10
POLL_SECONDS = 0.25  # how often a round looks at the ages of its downloads


@dataclass(frozen=True, slots=True)
class PackedResult:
    """A download whose body waits deflated; ``result`` has no body."""

    result: FetchResult
    deflated: bytes

    @property
    def held_bytes(self) -> int:
        return len(self.deflated)

    def unpack(self) -> FetchResult:
        return replace(self.result, body=zlib.decompress(self.deflated))


Download = FetchResult | PackedResult
"""What a finished download of a round holds until it is processed."""


def pack(result: FetchResult) -> Download:
    """``result`` with its body deflated if it is long (run in the download thread)."""
    if len(result.body) < PACK_BODY_BYTES:
        return result
    return PackedResult(replace(result, body=b""), zlib.compress(result.body, 1))


def unpacked(result: Download) -> FetchResult:
    return result.unpack() if isinstance(result, PackedResult) else result


def held_bytes(result: Download) -> int:
    """The bytes a waiting download holds (its body, or its body deflated)."""
    return result.held_bytes if isinstance(result, PackedResult) else len(result.body)


def download_round(fetcher: Fetcher, requests: Sequence[FetchRequest], slow_seconds: float,
                   watch: HostWatch) -> list[Download | Future[Download]]:
    """Start every download at once and wait while any is *active*: in flight for less
    than ``slow_seconds``, or waiting for a slot of a host none of whose downloads is
    blocked. Then downloads still waiting for a slot (of a blocked host) give up at once
    (a :class:`~.errors.Cancelled` result: their urls are deferred), the blocked hosts are
    recorded in ``watch``, and the blocked downloads are handed back as futures, in the
    order of ``requests``."""
    if not requests:
        return []
    cancel = threading.Event()
    starts: list[float | None] = [None] * len(requests)

    def started(i: int) -> Callable[[], None]:
        def mark() -> None:
            starts[i] = time.monotonic()
        return mark

    futures = [fetcher.submit(request, cancel, started(i), then=pack)
               for i, request in enumerate(requests)]
    index = {future: i for i, future in enumerate(futures)}
    origins = [origin_of(request.url) for request in requests]
    left = set(futures)
    blocked_hosts: set[str] = set()
    while left:
        _, left = wait(left, timeout=min(slow_seconds, POLL_SECONDS))
        now = time.monotonic()
        ages = {f: None if starts[index[f]] is None else now - starts[index[f]] for f in left}
        blocked_hosts = {origins[index[f]] for f, age in ages.items()
                         if age is not None and age >= slow_seconds}
        if not any((age is None and origins[index[f]] not in blocked_hosts)
                   or (age is not None and age < slow_seconds) for f, age in ages.items()):
            break
    cancel.set()
    out: list[Download | Future[Download]] = [
        future if future in left and not future.done() else future.result()
        for future in futures]
    for origin in blocked_hosts:
        watch.record_blocked(origin)
    return out
