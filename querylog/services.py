"""Writes to the query log: :func:`query_log_record`, one row per logged search.

Layer: Django glue of the ``querylog`` app. The search view (``ranking.views``) calls it once
the answer has been sent; nothing else writes the log.

The log steers what is crawled first (needy queries), and anyone may search, so it is bounded
two ways: a client (by address) adds at most ``QUERY_LOG_PER_CLIENT_PER_MINUTE`` rows a minute
(counted in the default cache; one client cannot flood the crawl's priorities), and rows older
than ``QUERY_LOG_RETENTION_DAYS`` are deleted, at most once an hour, by the write that finds
the hour's mark free in the cache.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.utils import timezone

from .models import QueryLog

logger = logging.getLogger(__name__)

TOP_K = 10
MAX_QUERY_CHARS = 512  # QueryLog.query's max_length


def query_log_record(query: str, total: int, scores: list[float], client: str = "") -> None:
    """Log one search (one INSERT): the normalised query, its number of results and its best
    ``TOP_K`` scores with their :func:`mean_top`. Nothing is logged for an empty query. Never
    raises: a search must not fail because its log could not be written (a locked or read-only
    database is logged and skipped)."""
    text = normalize_query(query)
    if not text or not _client_may_log(client):
        return
    _prune_now_and_then()
    top = sorted((float(s) for s in scores), reverse=True)[:TOP_K]
    try:
        # a savepoint: a refused row must not abort a transaction the caller is in (on
        # PostgreSQL every later query of that transaction would fail)
        with transaction.atomic():
            QueryLog.objects.create(query=text, results=max(0, int(total)),
                                    top_scores=[round(s, 6) for s in top],
                                    mean_top_score=mean_top(top))
    except DatabaseError as exc:
        logger.warning("query log not written for %r: %s", text, exc)


def normalize_query(query: str) -> str:
    """Lower-case, single spaces, no NUL (no PostgreSQL text can hold one), at most
    ``MAX_QUERY_CHARS`` characters."""
    return " ".join(query.replace("\x00", " ").lower().split())[:MAX_QUERY_CHARS]


def mean_top(scores: list[float], k: int = TOP_K) -> float:
    """The mean of the best ``k`` scores, missing ones counted as 0."""
    best = sorted((float(s) for s in scores), reverse=True)[:k]
    return sum(best) / k if k else 0.0


def _client_may_log(client: str) -> bool:
    """False once ``client`` has logged its rows of this minute (a cache that cannot be reached
    counts nothing: the search is logged)."""
    limit = int(settings.QUERY_LOG_PER_CLIENT_PER_MINUTE)
    if not client or limit <= 0:
        return True
    key = f"querylog:client:{client}:{int(time.time() // 60)}"
    try:
        cache.add(key, 0, timeout=120)
        return cache.incr(key) <= limit
    except Exception as exc:
        logger.warning("query log rate bound not checked: %s", exc)
        return True


def query_log_prune(days: int | None = None) -> int:
    """Delete the rows older than ``days`` (``QUERY_LOG_RETENTION_DAYS``; 0 keeps every row).
    Returns how many were deleted."""
    days = int(settings.QUERY_LOG_RETENTION_DAYS if days is None else days)
    if days <= 0:
        return 0
    deleted, _ = QueryLog.objects.filter(
        created_at__lt=timezone.now() - timedelta(days=days)).delete()
    return deleted


def _prune_now_and_then() -> None:
    try:
        if cache.add("querylog:pruned", 1, timeout=3600):
            with transaction.atomic():
                query_log_prune()
    except Exception as exc:
        logger.warning("query log not pruned: %s", exc)
