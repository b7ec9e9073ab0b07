"""A whole crawl inside one process: every queue server of the crawl and a pool of fetcher
threads, wired through the same spools the distributed engine uses. No broker is needed.

Pages are processed in worker processes, one per core by default
(:class:`crawler.core.fetcher.processing.ProcessPool`): the fetcher threads download, the
workers process, and this process's main thread applies the batches to the queue servers'
crawl queues and indexes, so every core is busy. ``processes=1`` processes in the fetcher
threads instead (the tests that pin a crawl's behaviour use it: no start-up cost).

Layer: ``crawler.core``. ``manage.py crawl`` uses it (first-time users, scripts), and so do the
crawl tests that pin the crawl's behaviour without process start-up costs.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.core.archive.queue import ArchiveSchedule
from crawler.core.archive.worker import ArchiveWorker
from crawler.core.definition.crawl import CrawlConfig
from crawler.core.definition.schedules import LOCAL_SCHEDULE_SIZE
from crawler.core.fetcher import ScheduleWorker
from crawler.core.fetcher.processing import default_processes, page_processing
from crawler.core.http import CachingResolver, FetchConfig, Fetcher, hop_fetcher_for
from crawler.core.processing.process import PageProcessor
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.index_order import reorder_ended_bundle
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.transport.batch import FetcherBatch
from indexer.core.bundle.reorder import ReorderResult
from indexer.core.runtime.workdir import queue_server_dir
from indexer.core.text import TextAnalyzer

logger = logging.getLogger(__name__)

# schedules of only freed crawl-delayed hosts' urls a queue server may have out beyond the
# fetchers' (QueueServerConfig.delayed_schedules), each on a thread of its own
DELAYED_SCHEDULES = 2


@dataclass(frozen=True, slots=True)
class LocalCrawlProgress:
    elapsed: float
    pages_fetched: int
    documents_indexed: int
    fetch_errors: int
    queued: int
    outstanding: int
    done: bool


@dataclass(frozen=True, slots=True)
class LocalCrawlResult:
    elapsed: float
    stats: tuple[dict[str, Any], ...]
    index_paths: tuple[Path, ...]
    finished: bool  # False when stopped by the time limit or the caller

    @property
    def pages_fetched(self) -> int:
        return sum(int(s.get("pages_fetched", 0)) for s in self.stats)

    @property
    def documents_indexed(self) -> int:
        return sum(int(s.get("documents_indexed", 0)) for s in self.stats)


class LocalCrawl:
    def __init__(self, crawl: CrawlConfig, work_directory: Path, fetch: FetchConfig,
                 processor: PageProcessor, num_servers: int = 1, fetchers: int = 2,
                 schedule_size: int = LOCAL_SCHEDULE_SIZE, refresh_seconds: float = 5.0,
                 worker_options: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.time,
                 recrawl_day_seconds: float = 86400.0, processes: int | None = 1) -> None:
        """``clock`` is the queue servers' and the fetchers' time (when a page was fetched,
        when a url is due again): a test of page recrawl moves it on instead of waiting.
        ``processes``: worker processes for page processing (None: one per core; 1 or
        fewer: in the fetcher threads)."""
        self.crawl = crawl
        self.fetch = fetch
        self.processor = processor
        self.num_servers = num_servers
        self.fetchers = max(1, fetchers)
        self.servers = [
            QueueServerCore(QueueServerConfig(
                n, num_servers, queue_server_dir(work_directory, n), crawl,
                refresh_seconds=refresh_seconds, max_outstanding=self.fetchers,
                delayed_schedules=DELAYED_SCHEDULES,
                schedule_size=schedule_size, recrawl_day_seconds=recrawl_day_seconds),
                clock=clock)
            for n in range(num_servers)]
        self._locks = [threading.Lock() for _ in self.servers]
        self._analyzer = TextAnalyzer()
        # one Fetcher for every schedule (thread-safe): keep-alive connections, threads and
        # the DNS cache last the whole crawl, and a download a schedule stopped waiting for
        # does not hold up the end of that schedule
        self._resolver = CachingResolver()
        self._fetcher = Fetcher(fetch, resolver=self._resolver)
        self._hop_fetcher = hop_fetcher_for(fetch, self._resolver)
        self._processes = default_processes() if processes is None else max(1, processes)
        self._processing = page_processing(processor, self._processes, crawl)
        self._worker_options = {"clock": clock, "processing": self._processing,
                                **(worker_options or {})}
        for server in self.servers:
            server.add_seeds(s.url for s in crawl.seeds)

    def _ship(self, server: int, batch: FetcherBatch) -> None:
        self.servers[server].spool.put("batch", json.dumps(batch.to_wire()).encode())

    def _work(self, schedule: Any, server: int, last: dict[str, float], skip: list[str],
              keep_going: Callable[[], bool]) -> None:
        if isinstance(schedule, ArchiveSchedule):  # an archive crawl: read, not fetched
            archive = ArchiveWorker(self.crawl, self.processor, self.num_servers, self._ship,
                                    keep_going, analyzer=self._analyzer,
                                    **self._worker_options)
            try:
                archive.run(schedule, schedule.pointers, server)
            finally:
                archive.close()
            return
        worker = ScheduleWorker(self.crawl, self.fetch, self.processor, self.num_servers,
                                self._ship, keep_going, fetcher=self._fetcher,
                                hop_fetcher=self._hop_fetcher, analyzer=self._analyzer,
                                **self._worker_options)
        try:
            worker.run(schedule, server, last, skip_hosts=skip)
        finally:
            worker.close()

    def run(self, max_seconds: float | None = None,
            progress: Callable[[LocalCrawlProgress], None] | None = None,
            stop: threading.Event | None = None) -> LocalCrawlResult:
        stop = stop or threading.Event()
        started = time.monotonic()
        finished = False

        def keep_going() -> bool:
            return not stop.is_set() and (
                max_seconds is None or time.monotonic() - started < max_seconds)

        running: set[Future[None]] = set()
        last_report = 0.0
        # a thread for each schedule a queue server may have out: its fetchers' usual ones,
        # and those of only freed crawl-delayed hosts (QueueServerCore.take_schedules)
        threads = self.fetchers + sum(s.config.delayed_schedules for s in self.servers)
        with ThreadPoolExecutor(threads, thread_name_prefix="fetcher") as pool:
            while keep_going():
                for n, server in enumerate(self.servers):
                    with self._locks[n]:
                        server.ingest(limit=None)
                        server.maybe_refresh()
                        server.maybe_reorder()
                        schedules = server.take_schedules()
                        lasts = [server.last_requests(s) for s in schedules]
                        skips = [server.skip_hosts(s) for s in schedules]
                    for schedule, last, skip in zip(schedules, lasts, skips, strict=True):
                        running.add(pool.submit(self._work, schedule, n, last, skip,
                                                keep_going))
                done = {f for f in running if f.done()}
                for future in done:
                    future.result()  # a worker bug surfaces here
                running -= done
                if not running and all(s.idle() for s in self.servers):
                    finished = True
                    break
                now = time.monotonic()
                if progress and now - last_report >= 0.5:
                    progress(self._progress(now - started, False))
                    last_report = now
                if running:
                    wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            stop.set()
        for server in self.servers:
            server.ingest(limit=None)
            server.maybe_refresh(force=True)
        elapsed = time.monotonic() - started
        if progress:
            progress(self._progress(elapsed, True))
        stats = tuple(server.stats() for server in self.servers)
        return LocalCrawlResult(elapsed, stats, tuple(s.paths["index"] for s in self.servers),
                                finished)

    def order_indexes(self) -> list[ReorderResult]:
        """Re-order every finished index partition not yet ordered by the crawl's newest
        link scores (after link analysis, before or after :meth:`close`; after it, several
        partitions at a time in ``processes`` worker processes)."""
        out: list[ReorderResult] = []
        for n, server in enumerate(self.servers):
            with self._locks[n]:
                if server.index.closed:
                    out.extend(reorder_ended_bundle(server.orderer.bundle,
                                                    server.orderer.scores, self._processes))
                else:
                    out.extend(server.orderer.run())
        return out

    def _progress(self, elapsed: float, done: bool) -> LocalCrawlProgress:
        stats = [s.stats() for s in self.servers]
        return LocalCrawlProgress(
            elapsed, sum(int(s["pages_fetched"]) for s in stats),
            sum(int(s["documents_indexed"]) for s in stats),
            sum(int(s["fetch_errors"]) for s in stats), sum(int(s["queued"]) for s in stats),
            sum(int(s["outstanding_schedules"]) for s in stats), done)

    def close(self, finish: bool = True) -> None:
        """Close every queue server; ``finish`` (the crawl is over): each finishes its active
        index partition, so that link analysis can order it too (:meth:`order_indexes`)."""
        try:
            for server in self.servers:
                server.close(finish=finish)
        finally:
            self._processing.close()
            self._fetcher.close()
            self._hop_fetcher.close()
