"""Search-side rows: the query log that needy-query crawl prioritisation reads (seed 001).

Layer: Django glue. The search view writes one :class:`QueryLog` row per first-page search
(:meth:`QueryLog.record`, from ``ranking.views.run_search``); ``crawler.needy`` aggregates the rows into needy queries for
the queue servers, which share only the database with the web machine.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, models

logger = logging.getLogger(__name__)

TOP_K = 10


class QueryLog(models.Model):
    """One search: the query as typed (normalised: lower-case, single spaces), how many results
    it had and the scores of its top ``TOP_K`` results; ``mean_top_score`` is their mean with
    missing results counted as 0, the "average top-K relevance" of Olston's needy queries."""

    query = models.CharField(max_length=512, db_index=True)
    results = models.PositiveIntegerField(default=0)
    top_scores = models.JSONField(default=list)
    mean_top_score = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.query} ({self.mean_top_score:.3f})"

    @classmethod
    def record(cls, query: str, total: int, scores: list[float]) -> None:
        """Log one search (one INSERT). Never raises: a search must not fail because its log
        could not be written (a locked or read-only database is logged and skipped)."""
        text = normalize_query(query)
        if not text:
            return
        top = sorted((float(s) for s in scores), reverse=True)[:TOP_K]
        try:
            cls.objects.create(query=text, results=max(0, int(total)),
                               top_scores=[round(s, 6) for s in top],
                               mean_top_score=mean_top(top))
        except DatabaseError as exc:
            logger.warning("query log not written for %r: %s", text, exc)


def normalize_query(query: str) -> str:
    return " ".join(query.lower().split())[:512]


def mean_top(scores: list[float], k: int = TOP_K) -> float:
    """The mean of the best ``k`` scores, missing ones counted as 0."""
    best = sorted((float(s) for s in scores), reverse=True)[:k]
    return sum(best) / k if k else 0.0
