"""Schedule claims kept in Redis (the broker's server): the store behind
:mod:`crawler.core.queue_server.claims`.

Layer: glue. Fetchers (``crawler.machines.fetching``) claim a schedule, keep the claim fresh while
they work, then mark it done or returned; a fetcher that receives a copy of a schedule held
or done elsewhere drops it. The queue-server process (``crawler.machines.queue_server``) reads the
claims of its outstanding schedules and hands out again those nobody holds.

One key per schedule, ``yioopy:claim:<schedule id>`` (schedule ids are unique across crawls
and queue servers), holds:

* the holder's name (``host:pid``) while a fetcher works on it; the key lapses
  ``claim_seconds`` after its last refresh, so a killed fetcher's claim is gone in seconds;
* ``done`` or ``returned`` once the fetcher ends, kept until the schedule's deadline: a late
  copy of a done schedule is dropped until then, and a copy handed out after the deadline
  (its acknowledgement was lost) runs.

Redis trouble never stops a crawl: a fetcher that cannot claim runs the schedule anyway, and a
queue server that cannot read the claims releases nothing (the schedule timeout still holds).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import redis
from django.conf import settings
from redis.backoff import NoBackoff
from redis.retry import Retry

from crawler.core.queue_server.claims import DONE, HELD, RETURNED

logger = logging.getLogger(__name__)

KEY_PREFIX = "yioopy:claim:"
SOCKET_SECONDS = 2.0


@dataclass(slots=True)
class Holding:
    """What a fetcher says about the schedule it holds when it lets go: ``done`` (its last
    batch was shipped) or not (it is given back)."""

    done: bool = False


class ClaimStore:
    """Claims of schedules in one Redis (see the module docstring). Thread-safe (redis-py's
    client is)."""

    def __init__(self, client: redis.Redis, claim_seconds: float) -> None:
        if claim_seconds <= 0:
            raise ValueError("claim_seconds must be positive")
        self._redis = client
        self.claim_seconds = float(claim_seconds)

    @classmethod
    def from_url(cls, url: str, claim_seconds: float) -> ClaimStore:
        """A store on the Redis at ``url``, tried once per call (a Redis that does not answer
        must not hold up the queue server's loop or a fetcher: see the module docstring)."""
        client = redis.Redis.from_url(url, decode_responses=True,
                                      socket_timeout=SOCKET_SECONDS,
                                      socket_connect_timeout=SOCKET_SECONDS,
                                      retry=Retry(NoBackoff(), 0))
        return cls(client, claim_seconds)

    @classmethod
    def from_settings(cls) -> ClaimStore:
        return cls.from_url(settings.REDIS_URL, settings.SCHEDULE_CLAIM_SECONDS)

    def _ms(self, seconds: float) -> int:
        return max(1, int(seconds * 1000))

    def claim(self, schedule_id: str, holder: str) -> str | None:
        """Take ``schedule_id`` for ``holder``: None when taken (nobody held it, or it was
        returned), else the state that refuses it (:data:`HELD` or :data:`DONE`). Without
        Redis the claim is taken (the schedule is run rather than lost)."""
        key = KEY_PREFIX + schedule_id

        def take(pipe: redis.client.Pipeline) -> str | None:
            value = pipe.get(key)
            if value is not None and value != RETURNED:
                return DONE if value == DONE else HELD
            pipe.multi()
            pipe.set(key, holder, px=self._ms(self.claim_seconds))
            return None

        try:
            return self._redis.transaction(take, key, value_from_callable=True)
        except redis.RedisError as exc:
            logger.warning("schedule %s: claims unavailable (%s); running it unclaimed",
                           schedule_id, exc)
            return None

    def keep(self, schedule_id: str, holder: str) -> None:
        """``holder`` is still working on ``schedule_id``."""
        self._set(schedule_id, holder, self.claim_seconds)

    def end(self, schedule_id: str, done: bool, deadline: float) -> None:
        """The holder let go: done, or returned unfinished; kept until ``deadline`` (a Unix
        time; at least ``claim_seconds``)."""
        self._set(schedule_id, DONE if done else RETURNED,
                  max(self.claim_seconds, deadline - time.time()))

    def give_back(self, schedule_id: str, deadline: float) -> None:
        """A copy of ``schedule_id`` that this fetcher will not run (the crawl is not
        running): marked returned, unless someone holds it or finished it."""
        key = KEY_PREFIX + schedule_id
        try:
            if self._redis.get(key) in (None, RETURNED):
                self._redis.set(key, RETURNED, px=self._ms(max(self.claim_seconds,
                                                               deadline - time.time())))
        except redis.RedisError as exc:
            logger.warning("schedule %s: claims unavailable (%s)", schedule_id, exc)

    def states(self, schedule_ids: Iterable[str]) -> dict[str, str] | None:
        """Schedule id -> :data:`HELD`, :data:`DONE` or :data:`RETURNED` for the claimed ones
        among ``schedule_ids``; None when Redis cannot be read."""
        ids = list(schedule_ids)
        if not ids:
            return {}
        try:
            values = self._redis.mget([KEY_PREFIX + sid for sid in ids])
        except redis.RedisError as exc:
            logger.warning("schedule claims unavailable: %s", exc)
            return None
        return {sid: value if value in (DONE, RETURNED) else HELD
                for sid, value in zip(ids, values, strict=True) if value is not None}

    @contextmanager
    def holding(self, schedule_id: str, holder: str, deadline: float) -> Iterator[Holding]:
        """Keep ``holder``'s claim fresh (every third of ``claim_seconds``, in a thread) for
        the ``with`` block; then end it: done when the block set ``Holding.done``, returned
        otherwise (an exception included)."""
        holding = Holding()
        stop = threading.Event()

        def refresh() -> None:
            while not stop.wait(self.claim_seconds / 3):
                self.keep(schedule_id, holder)

        thread = threading.Thread(target=refresh, name=f"claim-{schedule_id}", daemon=True)
        thread.start()
        try:
            yield holding
        finally:
            stop.set()
            thread.join()
            self.end(schedule_id, holding.done, deadline)

    def _set(self, schedule_id: str, value: str, seconds: float) -> None:
        try:
            self._redis.set(KEY_PREFIX + schedule_id, value, px=self._ms(seconds))
        except redis.RedisError as exc:
            logger.warning("schedule %s: claims unavailable (%s)", schedule_id, exc)
