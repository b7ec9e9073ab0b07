"""Repeat crawls in the running engine: start the crawls due to start over, and remove the
files of the crawls their repeats replaced.

Layer: Django glue, driven by the queue-server process (``crawler.machines.queue_server``) on its
ticks. A crawl with ``recrawl_days`` starts over that many days after it started, once it has
ended by itself (``services.crawl_repeat``): its repeat is a new crawl that builds a new
index while search keeps answering from the old one, which it replaces in one transaction
when it ends complete (``services.crawl_finish``): Yioop's double index, whose two bundles
swap. The replaced crawl's files (index, queue, inbox, counters, link scores) are removed
:data:`REPLACED_GRACE` after the swap, by each queue server from its own directory: a search
that began on the old index has long ended by then, and at most the live index and the one
being built are on disk.
"""

from __future__ import annotations

import logging
import shutil
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from crawler import services
from crawler.models import Crawl
from indexer.core.runtime.workdir import LINKGRAPH_DIR, crawl_paths

logger = logging.getLogger(__name__)

CHECK_SECONDS = 5.0
REPLACED_GRACE = timedelta(minutes=10)


def start_due_repeat() -> Crawl | None:
    """Start the oldest crawl due to start over, if any (None: none is due, or every channel
    is taken, ``MAX_ACTIVE_CRAWLS``: it waits for one to be free)."""
    for crawl_id in services.crawl_repeats_due(settings.RECRAWL_DAY_SECONDS):
        try:
            return services.crawl_repeat(crawl_id)
        except services.CrawlServiceError as exc:
            logger.info("crawl %s does not start over yet: %s", crawl_id, exc)
            return None
    return None


def remove_replaced(directory: Path, server: int, now=None) -> list[int]:
    """Remove, from queue server ``server``'s ``directory``, the files of the crawls a repeat
    replaced at least :data:`REPLACED_GRACE` ago (queue server 0 also removes their link
    analysis). Returns the timestamps whose files it removed."""
    cutoff = (now or timezone.now()) - REPLACED_GRACE
    removed = []
    for timestamp in Crawl.objects.filter(replaced_at__lte=cutoff).values_list("timestamp",
                                                                               flat=True):
        paths = list(crawl_paths(directory, timestamp).values())
        if server == 0:
            paths.append(directory.parent / LINKGRAPH_DIR / str(timestamp))
        found = [p for p in paths if p.exists()]
        for path in found:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        if found:
            removed.append(timestamp)
            logger.info("queue server %d: files of replaced crawl %s removed", server,
                        timestamp)
    return removed


class RepeatKeeper:
    """What a queue server does for repeat crawls, at most every :data:`CHECK_SECONDS`:
    queue server 0 starts a due repeat while a channel is free (fewer than
    ``MAX_ACTIVE_CRAWLS`` crawls are active); every queue server removes the files of
    replaced crawls."""

    def __init__(self, server: int, directory: Path) -> None:
        self.server = server
        self.directory = directory
        self._checked = -CHECK_SECONDS

    def step(self, channels_full: bool) -> None:
        now = time.monotonic()
        if now - self._checked < CHECK_SECONDS:
            return
        self._checked = now
        if self.server == 0 and not channels_full:
            start_due_repeat()
        remove_replaced(self.directory, self.server)
