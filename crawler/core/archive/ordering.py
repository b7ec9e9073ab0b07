"""An archive crawl's batches are applied in the order of their schedules, so that its index
keeps the archive's order (and the Doc Ranks that order gives).

Layer: ``crawler.core.archive``. A web crawl's queue server applies batches as they arrive:
which page is appended first depends on which fetcher finished first, and Doc Rank (seed 000:
``log10`` of the documents after a page in its partition) with it. An archive crawl knows its
order: the records of its source, the order an earlier crawl stored its pages in (the WARC
export writes them in that order too). Its fetchers still work on several schedules at once;
:class:`OrderedInbox` takes the batches of the queue server's inbox so that a batch of schedule
``n`` is applied only once schedules ``1 .. n-1`` are acknowledged (their last batch applied):
a batch that comes early (its schedule read from the batch's head,
``crawler.core.transport.batch.batch_head``) is *held* (renamed into the inbox's ``held`` folder as
``<seq>-<1 if it is the schedule's last batch, else 0>-<its name>``, never rewritten) until
its turn. A schedule whose last batch is held is finished as far as the fetchers go: it does
not count against the schedules a queue server keeps out at once
(:meth:`OrderedInbox.finished`), so the fetchers never wait for the order. Batches without a schedule (what other
queue servers' fetchers send this one) and batches of schedules no longer outstanding (a late
copy) are applied at once, as a web crawl's are. With one queue server the archive crawl of a
crawl appends the same documents in the same order as the crawl did.

A crawl stopped in the middle (:meth:`OrderedInbox.take_all_held`) applies what is held, in
order, before it saves: nothing processed is lost, and the schedules not acknowledged are
processed again when it resumes, as a web crawl's are.
"""

from __future__ import annotations

from collections.abc import Iterator

from crawler.core.archive.queue import ArchiveQueue
from crawler.core.transport.batch import batch_head
from crawler.core.transport.spool import Spool, SpoolItem

KIND = "batch"
HELD = "held"


class OrderedInbox:
    """Takes a queue server's received batches in schedule order (see the module)."""

    def __init__(self, spool: Spool, queue: ArchiveQueue) -> None:
        self.spool = spool
        self.queue = queue

    def pending(self) -> int:
        """Batches held for their turn."""
        return len(self.spool.names(HELD))

    def finished(self) -> int:
        """Schedules whose last batch is held: their fetchers are done with them."""
        return len({name.split("-", 1)[0] for name in self.spool.names(HELD)
                    if name.split("-", 2)[1] == "1"})

    def take(self, limit: int | None = None) -> Iterator[SpoolItem]:
        """Batches that may be applied now, in order, at most ``limit``; each must be applied
        and ``done`` before the next is asked for (applying one may make held ones due)."""
        taken = 0
        while limit is None or taken < limit:
            item = self._next()
            if item is None:
                return
            yield item
            taken += 1

    def _next(self) -> SpoolItem | None:
        for name in self.spool.names(HELD):
            if self.queue.seq_may_apply(int(name.split("-", 1)[0])):
                item = self.spool.read(HELD, name)
                if item is not None:
                    return item
        for item in self.spool.take(KIND):
            schedule, done, _ = batch_head(item.payload)
            seq = self.queue.seq_waiting(schedule)
            if seq is None:
                return item
            self.spool.move(item, HELD, f"{seq:012d}-{int(done)}-{item.path.name}")
        return None

    def take_all_held(self) -> Iterator[SpoolItem]:
        """Every held batch, in order, due or not (a crawl that stops)."""
        for name in self.spool.names(HELD):
            item = self.spool.read(HELD, name)
            if item is not None:
                yield item
