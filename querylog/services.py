"""Writes to the query log: :func:`query_log_record`, one row per logged search.

Layer: Django glue of the ``querylog`` app. The search view (``ranking.views``) calls it once
the answer has been sent; nothing else writes the log.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, transaction

from .models import QueryLog

logger = logging.getLogger(__name__)

TOP_K = 10
MAX_QUERY_CHARS = 512  # QueryLog.query's max_length


def query_log_record(query: str, total: int, scores: list[float]) -> None:
    """Log one search (one INSERT): the normalised query, its number of results and its best
    ``TOP_K`` scores with their :func:`mean_top`. Nothing is logged for an empty query. Never
    raises: a search must not fail because its log could not be written (a locked or read-only
    database is logged and skipped)."""
    text = normalize_query(query)
    if not text:
        return
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
