"""What one schedule's run has counted so far, and the urls it hands back.

Layer: ``crawler.core.fetcher``. The worker makes one :class:`ScheduleStats` per schedule; the
rounds and the page handling add to it; the worker's report and the final batch read it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from crawler.core.scheduler import ScheduleEntry
from crawler.core.urls import origin_of

# a host with this many failed downloads in a schedule is not asked for more of its urls
DOWNLOAD_ERROR_THRESHOLD = 50


@dataclass(slots=True)
class ScheduleStats:
    """Counters of one schedule (pages fetched, failed, documents made), each origin's failed
    downloads, and the urls handed back to the queue server (``deferred``; ``lane_deferred``
    of them not reached by the crawl-delay lanes) or left out (``skipped``: hosts the queue
    server dropped). Only the schedule's main thread touches it."""

    fetched: int = 0
    errors: int = 0
    documents: int = 0
    skipped: int = 0
    lane_deferred: int = 0
    host_errors: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    deferred: list[ScheduleEntry] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)  # deferred urls that were requested

    def count_page(self, entry: ScheduleEntry, failed: bool, documents: int) -> None:
        """One download handled: it made ``documents`` documents, or ``failed``."""
        self.fetched += 1
        self.documents += documents
        if failed:
            self.errors += 1
            self.host_errors[origin_of(entry.url)] += 1

    def failing(self, origin: str) -> bool:
        """Has ``origin`` failed too often in this schedule to be asked for more?"""
        return self.host_errors[origin] >= DOWNLOAD_ERROR_THRESHOLD
