"""The query log: one row per first-page search, which needy-query crawl prioritisation reads
(the seed *The Science of Crawl, part 3*: "needy" queries, whose average top-K relevance is
poor).

Layer: Django glue of the small ``querylog`` app, below ``ranking`` (which writes the log
through :func:`querylog.services.query_log_record`) and ``crawler`` (whose queue servers read
it through :mod:`querylog.selectors`). It imports neither. The table keeps the name it had when
the model lived in ``ranking`` (``ranking_querylog``), so the log survived the move.
"""

from __future__ import annotations

from django.db import models


class QueryLog(models.Model):
    """One search: the query as typed (normalised: lower-case, single spaces), how many results
    it had and the scores of its top ``querylog.services.TOP_K`` results; ``mean_top_score`` is
    their mean with missing results counted as 0, the "average top-K relevance" of Olston's
    needy queries. A score is the result's relevance as a share of the most its query's terms
    can give, in [0, 1] (``ranking.core.search.explain.relevance_share``), not its final,
    rank-fused score (the same for every query of two or more words); rows logged before
    that change hold final scores."""

    query = models.CharField(max_length=512, db_index=True)
    results = models.PositiveIntegerField(default=0)
    top_scores = models.JSONField(default=list)
    mean_top_score = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "ranking_querylog"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.query} ({self.mean_top_score:.3f})"
