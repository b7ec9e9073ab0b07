"""Crawl-delayed hosts paced across every fetcher of every crawl: one slot per request in Redis.

Layer: Django glue (a Redis client from the settings), given to the schedule worker's
:class:`crawler.core.http.paced.PacedFetch`, which asks :meth:`RedisHostPacer.reserve` before
each request to a crawl-delayed host (redirect hops included). A crawl keeps such a host in one
outstanding schedule at a time, so one crawl alone never asks it faster than its Crawl-delay;
several active crawls (issue 37) each schedule the host on their own, and their fetchers would
ask it at once. The slot makes them take turns: ``reserve(host, delay, now)`` returns
``max(now, the host's previous slot + delay)`` and makes that the host's slot, atomically (one
Lua script), so the requests of all fetchers to the host, whatever their crawl, are at least a
delay apart. A key lives a minute past its slot. Without Redis the request goes ahead at once,
paced only by its own crawl (a warning is logged): the fetch is not held up by the store.
"""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger(__name__)

KEY_PREFIX = "yioopy:pace:"
SOCKET_SECONDS = 2.0
KEEP_MS = 60_000  # past a host's slot: no later request needs it then

_RESERVE = """
local previous = tonumber(redis.call('GET', KEYS[1]))
local now, delay = tonumber(ARGV[1]), tonumber(ARGV[2])
local at = now
if previous ~= nil and previous + delay > now then at = previous + delay end
local keep = math.floor((at - now) * 1000) + tonumber(ARGV[3])
redis.call('SET', KEYS[1], string.format('%.6f', at), 'PX', keep)
return string.format('%.6f', at)
"""


class RedisHostPacer:
    """Request slots of crawl-delayed hosts in one Redis (see the module). Thread-safe."""

    def __init__(self, client: redis.Redis) -> None:
        self._redis = client
        self._script = client.register_script(_RESERVE)
        self._warned = False

    @classmethod
    def from_settings(cls) -> RedisHostPacer:
        return cls(redis.Redis.from_url(settings.REDIS_URL, decode_responses=True,
                                        socket_timeout=SOCKET_SECONDS,
                                        socket_connect_timeout=SOCKET_SECONDS,
                                        retry=Retry(NoBackoff(), 0)))

    def reserve(self, host: str, delay: float, now: float) -> float:
        """The moment the next request to ``host`` may be made (``now`` or later), taken
        for it: the next caller's slot is at least ``delay`` after."""
        try:
            at = self._script(keys=[KEY_PREFIX + host], args=[repr(now), repr(delay), KEEP_MS])
        except redis.RedisError as exc:
            if not self._warned:
                self._warned = True
                logger.warning("crawl-delayed hosts are paced by each crawl alone: Redis "
                               "did not answer (%s)", exc)
            return now
        self._warned = False
        return float(at)
