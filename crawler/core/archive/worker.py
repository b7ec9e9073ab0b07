"""The fetcher side of an archive crawl: one schedule of record pointers, read and processed.

Layer: ``crawler.core.archive``, beside :class:`crawler.core.fetcher.ScheduleWorker` and built
the same way by the same glue (``crawler.machines.fetching`` for the Celery fetchers,
:class:`crawler.core.local_crawl.LocalCrawl` in one process), which picks this worker when the
crawl has an archive source. For each url of the schedule, in order, the record its pointer
names is read (:class:`.records.RecordReader`) and handed, as the answer a fetcher would have
got, to the web crawl's own page handling (:class:`crawler.core.fetcher.pages.PageHandler`:
the page processors, the crawl's Page Options, scrapers and page rules, robots metas and
``X-Robots-Tag``, index documents for the page and its links) and outboxes, which ship batches
to the queue servers that own the documents, the last one to the schedule's own queue server
marked done. Nothing is downloaded and no link is followed: the page handling's discovered
urls are not produced. A record that cannot become a page is counted by reason in the batch
(``skipped``), never fatal; the crawl's stop is checked between records. Records are read in
this thread and processed where the crawl's :class:`crawler.core.fetcher.processing.PageProcessing`
runs them (worker processes in ``manage.py crawl``): a few are read ahead while earlier ones
are processed, and their documents go out in the archive's order.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from crawler.core.archive.records import RecordReader
from crawler.core.archive.source import Pointer
from crawler.core.archive.stored import RecordSkipped
from crawler.core.definition.crawl import CrawlConfig
from crawler.core.fetcher.emit import LinkedPage, LinkEmitter
from crawler.core.fetcher.outboxes import (
    SEEN_URLS_BEFORE_UPDATE_SCHEDULER,
    SHIP_BYTES,
    SHIP_SECONDS,
    Outboxes,
)
from crawler.core.fetcher.pages import Handling, PageHandler
from crawler.core.fetcher.processing import InlineProcessing, PageProcessing
from crawler.core.fetcher.worker import IN_FLIGHT_PAGES, Ship, WorkerReport
from crawler.core.http import FetchResult
from crawler.core.memory import release_free_heap
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import Schedule, ScheduleEntry
from indexer.core.text import TextAnalyzer


class _NoLinks(LinkEmitter):
    """An archive crawl follows no link: no discovered urls (link documents are still made)."""

    def discovered(self, page: LinkedPage, entry: ScheduleEntry,
                   refused: list[list[Any]] | None = None) -> Iterator[list[Any]]:
        return iter(())


class ArchiveWorker:
    """Reads and processes one archive schedule. Not thread-safe; make one per schedule (or
    reuse it for schedules one after the other) and :meth:`close` it."""

    def __init__(self, crawl: CrawlConfig, processor: PageProcessor, num_servers: int,
                 ship: Ship, should_continue: Callable[[], bool] = lambda: True, *,
                 analyzer: TextAnalyzer | None = None,
                 ship_every: int = SEEN_URLS_BEFORE_UPDATE_SCHEDULER,
                 ship_seconds: float = SHIP_SECONDS, ship_bytes: int = SHIP_BYTES,
                 processing: PageProcessing | None = None,
                 clock: Callable[[], float] = time.time, **_: Any) -> None:
        if crawl.archive is None:
            raise ValueError(f"crawl {crawl.timestamp} is not an archive crawl")
        self.crawl = crawl
        self._ship = ship
        self._continue = should_continue
        self._clock = clock
        self._reader = RecordReader(crawl.archive, processor.config.byte_range)
        self._outboxes = Outboxes(num_servers, ship_every, ship_seconds, ship_bytes)
        self._pages = PageHandler(
            processing or InlineProcessing(processor, analyzer or processor.analyzer),
            _NoLinks(crawl), self._outboxes, clock)
        self._in_flight: deque[Handling] = deque()  # records being processed, in order
        self._schedule_id = ""
        self._origin = 0
        self._batches = 0
        self._counts = [0, 0, 0]  # this schedule's pages, failed pages, documents

    def close(self) -> None:
        self._reader.close()

    def run(self, schedule: Schedule, pointers: tuple[Pointer, ...],
            origin_server: int) -> WorkerReport:
        """Read and process every record of ``schedule`` (``pointers[i]`` is where
        ``schedule.entries[i]``'s record is), then ship; stops early when the crawl does."""
        if len(pointers) != len(schedule.entries):
            raise ValueError(f"schedule {schedule.id}: {len(schedule.entries)} urls but "
                             f"{len(pointers)} record pointers")
        started = self._clock()
        self._schedule_id, self._origin = schedule.id, origin_server
        self._outboxes.start(time.monotonic())
        self._counts = [0, 0, 0]
        stopped = False
        for entry, pointer in zip(schedule.entries, pointers, strict=True):
            if not self._continue():
                stopped = True
                break
            self._start(entry, pointer)
            self._apply_processed(wait=len(self._in_flight) - IN_FLIGHT_PAGES)
        self._apply_processed(wait=len(self._in_flight))
        self._flush(done=not stopped)
        fetched, errors, documents = self._counts
        return WorkerReport(fetched, errors, documents, self._batches, stopped,
                            self._clock() - started)

    def _start(self, entry: ScheduleEntry, pointer: Pointer) -> None:
        """Read one record and send it to be processed; a record skipped is counted by its
        reason at once."""
        try:
            page = self._reader.read(pointer)
        except RecordSkipped as exc:
            self._outboxes.of(self._origin).skipped.record(exc.reason, entry.url, exc.message)
            return
        result = FetchResult(url=entry.url, final_url=page.url, status=page.status,
                             headers=page.headers, body=page.body, ip=page.ip or None)
        self._in_flight.append(self._pages.start(entry, result, self._origin,
                                                 fetched_at=page.fetched_at))

    def _apply_processed(self, wait: int) -> None:
        """Put processed records in the outboxes in the archive's order: the first ``wait``
        whether ready or not, then while the next is ready; ship when due."""
        while self._in_flight and (wait > 0 or self._in_flight[0].ready()):
            wait -= 1
            failed, documents = self._pages.finish(self._in_flight.popleft(), self._ship_part)
            self._counts[0] += 1
            self._counts[1] += failed
            self._counts[2] += documents
            now = time.monotonic()
            if self._outboxes.page_handled(now):
                self._flush(done=False)
                self._outboxes.shipped(now)

    def _ship_part(self) -> None:
        self._flush(done=False)

    def _flush(self, done: bool) -> None:
        for server, batch in self._outboxes.take_batches(self.crawl.timestamp,
                                                         self._schedule_id, self._origin,
                                                         done):
            self._ship(server, batch)
            self._batches += 1
        release_free_heap()
