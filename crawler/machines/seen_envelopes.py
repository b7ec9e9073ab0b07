"""Ids of handled envelopes in Redis: the store behind
``crawler.core.transport.shipping.ReplayGuard``.

Layer: glue (redis-py and settings), used by ``crawler.tasks``. Every receiver of the engine,
on every machine (fetchers, queue servers' inbox workers), uses the Redis of
``settings.REDIS_URL`` (the broker's), so an envelope handled by one is refused by all.

Keys: ``yioopy:envelope:<id>`` = ``1``, set only if absent (SET NX) and expiring when the
envelope would be refused as too old anyway (``settings.ENVELOPE_MAX_AGE`` after its issue
time): at most one key per message of the last window.
"""

from __future__ import annotations

import functools

import redis
from django.conf import settings

from crawler.core.transport.shipping import ReplayGuard, SeenIdsUnavailable

KEY_PREFIX = "yioopy:envelope:"


class RedisSeenIds:
    """:class:`crawler.core.transport.shipping.SeenIds` over one Redis client."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def seen(self, envelope_id: str) -> bool:
        try:
            return bool(self.client.exists(KEY_PREFIX + envelope_id))
        except redis.RedisError as exc:
            raise SeenIdsUnavailable(f"handled envelope ids cannot be read: {exc}") from exc

    def record(self, envelope_id: str, ttl: float) -> bool:
        try:
            return bool(self.client.set(KEY_PREFIX + envelope_id, b"1", nx=True,
                                        px=max(1, int(ttl * 1000))))
        except redis.RedisError as exc:
            raise SeenIdsUnavailable(f"handled envelope id not recorded: {exc}") from exc


@functools.lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    """One client (one connection pool) per url in this process: a worker handles thousands
    of messages. redis-py opens new connections in a forked child, so a pool made before a
    worker pool forks is safe."""
    return redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=5)


def replay_guard() -> ReplayGuard:
    """The guard over ``settings.REDIS_URL``, with ``settings.ENVELOPE_MAX_AGE`` as window."""
    return ReplayGuard(RedisSeenIds(_client(settings.REDIS_URL)), settings.ENVELOPE_MAX_AGE)
