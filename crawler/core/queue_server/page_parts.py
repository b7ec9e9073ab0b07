"""A page's documents are stored together, even when its fetcher shipped them in parts.

Layer: ``crawler.core``. A fetcher ships what it found every few hundred pages, and in the
middle of a page when the page's documents alone pass the batch bound (an index page with
thousands of links: :mod:`crawler.core.fetcher.outboxes`); those batches are marked
``partial`` (:class:`~crawler.core.transport.batch.FetcherBatch`). Applied as they came, another
fetcher's batch could land between two parts of the page, and the index's order (hence Doc
Rank, seed 000: ``log10`` of the documents after a page in its partition) would depend on
which fetcher finished first. :class:`PageParts` takes a queue server's inbox so that a partial
batch of a schedule waits (renamed into the inbox's ``parts`` folder, never rewritten) for the
schedule's next batch that is not partial, and they are applied one after the other: a page's
documents are always contiguous, so the order of the index follows the order pages were handled, and an
archive crawl of the crawl (:mod:`crawler.core.archive`), which handles the same pages in the
same order, rebuilds the same index.

Only the schedule's own queue server's batches carry the schedule (the ones to other queue
servers are applied as they come). A part whose schedule is no longer outstanding (its next
batch came first) is applied at once; when a crawl stops, the parts waiting are applied
(:meth:`PageParts.take_all_held`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterator

from crawler.core.transport.batch import batch_head
from crawler.core.transport.spool import Spool, SpoolItem

KIND = "batch"
PARTS = "parts"


def _key(schedule: str) -> str:
    return hashlib.sha1(schedule.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class PageParts:
    """Takes a queue server's received batches with each page's parts together (see the
    module). ``outstanding()`` gives the ids of the schedules still out."""

    def __init__(self, spool: Spool, outstanding: Callable[[], Collection[str]]) -> None:
        self.spool = spool
        self._outstanding = outstanding

    def pending(self) -> int:
        """Partial batches waiting for the rest of their page."""
        return len(self.spool.names(PARTS))

    def take(self, limit: int | None = None) -> Iterator[SpoolItem]:
        """Batches to apply now, in order, at most ``limit``; each must be applied and
        ``done`` before the next is asked for."""
        taken = 0
        for item in self._orphans():
            if limit is not None and taken >= limit:
                return
            yield item
            taken += 1
        for item in self.spool.take(KIND):
            schedule, _, partial = batch_head(item.payload)
            if schedule is not None and partial:
                self.spool.move(item, PARTS, f"{_key(schedule)}-{item.path.name}")
                continue
            waiting = [] if schedule is None else self._parts_of(schedule)
            for part in [*waiting, item]:
                yield part  # a page's parts and their sequel are never split by the limit
                taken += 1
            if limit is not None and taken >= limit:
                return

    def _parts_of(self, schedule: str) -> list[SpoolItem]:
        prefix = _key(schedule) + "-"
        found = (self.spool.read(PARTS, name) for name in self.spool.names(PARTS)
                 if name.startswith(prefix))
        return [item for item in found if item is not None]

    def _orphans(self) -> list[SpoolItem]:
        """Waiting parts whose schedule is no longer out: nothing else will come for them."""
        names = self.spool.names(PARTS)
        if not names:
            return []
        live = {_key(s) for s in self._outstanding()}
        found = (self.spool.read(PARTS, name) for name in names
                 if name.split("-", 1)[0] not in live)
        return [item for item in found if item is not None]

    def finished(self) -> int:
        """Outstanding schedules whose last batch is held back: none (a web crawl's batches
        wait for the rest of their page, never for their schedule's turn)."""
        return 0

    def take_all_held(self) -> Iterator[SpoolItem]:
        """Every waiting part, in the order they came (a crawl that stops)."""
        for name in sorted(self.spool.names(PARTS), key=lambda n: n.split("-", 1)[1]):
            item = self.spool.read(PARTS, name)
            if item is not None:
                yield item
