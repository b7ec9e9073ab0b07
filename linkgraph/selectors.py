"""What the admin shows of a crawl's link analysis (reads of
:class:`linkgraph.models.LinkAnalysis`).

Layer: Django glue; the services (:mod:`linkgraph.services`) write the row.
"""

from __future__ import annotations

from datetime import UTC, timedelta

from django.conf import settings
from django.utils import timezone

from .models import LinkAnalysis

STAGE_LABELS = {"starting": "starting", "documents": "reading the shards' documents",
                "loops": "finding link loops", "linkrank": "LinkRank iterations",
                "scores": "writing the scores file", "publish": "sending the scores to the shards"}


def link_analysis_status_get(crawl_id: int) -> dict:
    """What the admin shows of a crawl's link analysis (JSON-ready): the run in progress (its
    stage and counts, or ``stalled``) and the last run that ended; times as "YYYY-MM-DD
    HH:MM:SS UTC", the crawl page's format."""
    row = LinkAnalysis.objects.filter(crawl_id=crawl_id).first()
    if row is None:
        row = LinkAnalysis(crawl_id=crawl_id)
    now = timezone.now()
    stale = timedelta(seconds=settings.LINK_ANALYSIS_STALE_SECONDS)
    running = row.state == LinkAnalysis.State.RUNNING
    stalled = running and row.heartbeat_at is not None and now - row.heartbeat_at > stale

    def when(value) -> str | None:
        # the crawl page's one date format ("2026-11-29 02:30:00 UTC"), as its other times
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if value else None

    percent = None
    if running and row.stage_total > 0:
        percent = round(100.0 * min(row.stage_done, row.stage_total) / row.stage_total, 1)
    return {
        "state": "stalled" if stalled else row.state,
        "reason": row.reason,
        "requested_at": when(row.requested_at),
        "follow_up": row.rerun,
        "every_pages": int(settings.LINK_ANALYSIS_EVERY_PAGES),
        "running": None if not running else {
            "started_at": when(row.run_started_at), "heartbeat_at": when(row.heartbeat_at),
            "stage": STAGE_LABELS.get(row.stage, row.stage), "done": row.stage_done,
            "total": row.stage_total, "percent": percent,
            "seconds": round((now - row.run_started_at).total_seconds(), 1)
            if row.run_started_at else None},
        "last": None if not row.last_outcome else {
            "outcome": row.last_outcome, "error": row.last_error,
            "started_at": when(row.last_started_at), "finished_at": when(row.last_finished_at),
            "pages": row.last_pages, "urls": row.last_urls, "edges": row.last_edges,
            "seconds": round(row.last_seconds, 1), "shards": row.last_shards},
        "runs": row.runs,
    }
