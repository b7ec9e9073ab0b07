"""Reads of the query log: the per-query aggregates that needy-query crawling uses.

Layer: Django glue of the ``querylog`` app. ``crawler.machines.needy`` turns these rows into the crawl
queue's needy queries; the plain :class:`QueryStats` value keeps this app free of crawler types.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Avg, Count

from .models import QueryLog


@dataclass(frozen=True, slots=True)
class QueryStats:
    """A logged query: how many times it was searched (``frequency``) and the mean of its
    searches' mean top-K scores (``relevance``)."""

    query: str
    frequency: int
    relevance: float


def queries_below_relevance(threshold: float, since: datetime,
                            limit: int) -> tuple[QueryStats, ...]:
    """The queries searched since ``since`` whose mean top-K score, over those searches, is
    below ``threshold``: the ``limit`` most frequent, most frequent first (ties by query)."""
    rows = (QueryLog.objects.filter(created_at__gte=since).values("query")
            .annotate(frequency=Count("id"), relevance=Avg("mean_top_score"))
            .filter(relevance__lt=threshold).order_by("-frequency", "query")[:limit])
    return tuple(QueryStats(row["query"], int(row["frequency"]), float(row["relevance"] or 0))
                 for row in rows)
