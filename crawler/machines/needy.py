"""Needy queries from the query log, for the queue servers and the admin (seed 001).

Layer: Django glue. The web machine's search view writes ``querylog.models.QueryLog`` rows; every
queue server, on whatever machine, reads them from the shared database here, through
:mod:`querylog.selectors` (no file to copy, nothing but the database and Redis shared), and
hands the result to its crawl queue
(:meth:`crawler.core.scheduler.CrawlQueue.set_needy_queries`) every ``NEEDY_REFRESH_SECONDS``.

A query is needy when the mean, over its searches in the last ``WINDOW``, of its mean top-10
score (missing results count 0) is below the crawl's ``needy_threshold``; its frequency f(q) is
how many times it was searched in that window. The most frequent ``LIMIT`` needy queries are
used.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.db import DatabaseError
from django.utils import timezone

from crawler.core.definition.needy import NeedyQuery
from querylog.selectors import queries_below_relevance

logger = logging.getLogger(__name__)

WINDOW = timedelta(days=7)
LIMIT = 500
NEEDY_REFRESH_SECONDS = 30.0


def needy_queries_get(threshold: float, window: timedelta = WINDOW,
                      limit: int = LIMIT) -> tuple[NeedyQuery, ...]:
    """The needy queries of the log, most frequent first (none when ``threshold`` <= 0)."""
    if threshold <= 0:
        return ()
    rows = queries_below_relevance(threshold, timezone.now() - window, limit)
    return tuple(NeedyQuery(row.query, float(row.frequency), row.relevance) for row in rows)


class NeedyRefresher:
    """Gives a queue server's crawl queue the current needy queries, at most every
    ``interval`` seconds; a database error leaves the previous ones in place."""

    def __init__(self, interval: float = NEEDY_REFRESH_SECONDS) -> None:
        self.interval = interval
        self._last = -float("inf")

    def __call__(self, queue, threshold: float, force: bool = False) -> bool:
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return False
        self._last = now
        try:
            queries = needy_queries_get(threshold)
        except DatabaseError as exc:
            logger.warning("needy queries not refreshed: %s", exc)
            return False
        return queue.set_needy_queries(queries)
