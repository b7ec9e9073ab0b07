"""Fetcher glue: settings and database rows in, a ``ScheduleWorker`` run out.

Layer: Django glue, used by ``crawler.tasks.fetch_schedule_task`` and ``manage.py crawl``.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django.conf import settings

from classifiers.selectors import trained_classifiers_get
from crawler import services
from crawler.core.archive.source import pointers_from_wire
from crawler.core.archive.worker import ArchiveWorker
from crawler.core.definition.crawl import CrawlConfig
from crawler.core.fetcher import ScheduleWorker, WorkerReport
from crawler.core.http import CachingResolver, FetchConfig, Fetcher, hop_fetcher_for
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.process import PageProcessor
from crawler.core.scheduler import Schedule
from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.wire import schedule_from_wire
from crawler.identity import robots_agent_name
from crawler.models import Crawl
from crawler.selectors import crawl_config_get
from indexer.core.runtime.reloading import ReloadingFile
from indexer.core.runtime.workdir import score_files, scores_path
from indexer.core.signals.link_scores import LinkScores
from indexer.core.urls import hashes_of

from . import presence as fetcher_presence
from .claim_store import ClaimStore
from .host_pacing import RedisHostPacer
from .own_endpoints import engine_endpoints
from .score_delivery import ScoreDelivery

logger = logging.getLogger(__name__)


def fetch_config_for(crawl: CrawlConfig) -> FetchConfig:
    return FetchConfig(
        allowed_networks=tuple(settings.CRAWLER_ALLOWED_NETWORKS),
        ca_bundle=settings.CRAWLER_CA_BUNDLE,
        user_agent=settings.CRAWLER_USER_AGENT,
        byte_range=crawl.page_options.byte_range,
        connect_timeout=settings.CRAWLER_CONNECT_TIMEOUT,
        read_timeout=settings.CRAWLER_READ_TIMEOUT,
        page_deadline=settings.CRAWLER_PAGE_DEADLINE,
        per_host_concurrency=settings.CRAWLER_PER_HOST_CONCURRENCY,
        concurrency=settings.CRAWLER_CONCURRENCY,
        refused_endpoints=engine_endpoints(),  # its own /metrics, Redis...: never crawled
    )


class _FetcherCache:
    """The fetcher process's Fetchers, kept from one schedule to the next: their keep-alive
    connections, TLS context, threads and DNS cache are reused instead of being built again
    for every schedule. One pair per fetch configuration, for the last ``keep`` configurations
    used (several crawls run at once, issue 37: each crawl's byte range makes its own
    configuration, and the schedules of the crawls come in turns); rebuilt for every schedule
    while they are misconfigured (a CA bundle that could not be loaded: fixing the file is
    enough, no restart)."""

    def __init__(self, keep: int = 4) -> None:
        self._keep = max(1, keep)
        # (configuration, its pair), the least recently used first (a FetchConfig compares
        # equal by value but holds mappings, so it is not a dict key)
        self._pairs: list[tuple[FetchConfig, tuple[Fetcher, Fetcher]]] = []
        self._resolver = CachingResolver(parallel=settings.CRAWLER_DNS_PARALLEL)

    def get(self, config: FetchConfig) -> tuple[Fetcher, Fetcher]:
        found = next((i for i, (c, _) in enumerate(self._pairs) if c == config), None)
        pair = None if found is None else self._pairs.pop(found)[1]
        if pair is not None and pair[0].misconfigured:
            self._close(pair)
            pair = None
        if pair is None:
            pair = (Fetcher(config, resolver=self._resolver),
                    hop_fetcher_for(config, self._resolver))
        self._pairs.append((config, pair))
        while len(self._pairs) > self._keep:
            self._close(self._pairs.pop(0)[1])
        return pair

    @staticmethod
    def _close(pair: tuple[Fetcher, Fetcher]) -> None:
        for fetcher in pair:
            fetcher.close()

    def close(self) -> None:
        while self._pairs:
            self._close(self._pairs.pop(0)[1])


_fetchers = _FetcherCache(keep=max(1, settings.MAX_ACTIVE_CRAWLS))


def indexing_plugins() -> dict[str, tuple[str, ...]]:
    """The ``INDEXING_PLUGINS`` setting as a ``PageProcessingConfig`` override (none when it
    is unset: the engine's default plugins)."""
    plugins = settings.INDEXING_PLUGINS
    return {} if plugins is None else {"indexing_plugins": tuple(plugins)}


def processor_for(crawl: CrawlConfig) -> PageProcessor:
    """The crawl's page processor, with the models of the classifiers it runs and the
    ``PAGE_CPU_SECONDS`` budget of a page."""
    config = PageProcessingConfig.from_options(
        crawl.page_options, classifiers=trained_classifiers_get(crawl.page_options.classifiers),
        cpu_seconds=settings.PAGE_CPU_SECONDS, **indexing_plugins())
    return PageProcessor(replace(config, robot_name=robots_agent_name()))


class CrawlRunningCheck:
    """``should_continue`` for a worker: is the crawl still running? (asked at most every
    ``interval`` seconds)."""

    def __init__(self, crawl_id: int, interval: float = 2.0) -> None:
        self.crawl_id = crawl_id
        self.interval = interval
        self._checked = 0.0
        self._running = True

    def __call__(self) -> bool:
        now = time.monotonic()
        if now - self._checked >= self.interval:
            self._running = Crawl.objects.filter(pk=self.crawl_id, status="running").exists()
            self._checked = now
        return self._running


class _LinkScoresCache:
    """The link-analysis scores a fetcher ranks discovered links by: the crawl's own
    ``manage.py score_update`` output if there is one, else the newest crawl's. Reloaded when the
    file changes (:class:`indexer.core.runtime.reloading.ReloadingFile`). A machine without a
    queue server receives the file when a schedule message announces a version it does not
    hold (:mod:`crawler.machines.score_delivery`); until then its fetchers rank links by page
    order."""

    def __init__(self) -> None:
        self._file: ReloadingFile[LinkScores] | None = None

    def lookup(self, crawl_timestamp: int) -> Callable[[list[str]], Any] | None:
        own = scores_path(settings.WORK_DIRECTORY, crawl_timestamp)
        candidates = [own] if own.exists() else sorted(
            score_files(settings.WORK_DIRECTORY), key=lambda p: p.stat().st_mtime,
            reverse=True)[:1]
        if not candidates:
            return None
        if self._file is None or self._file.path != candidates[0]:
            self._file = ReloadingFile(candidates[0], LinkScores)
        scores = self._file.get()
        if scores is None:
            return None

        def scores_for(urls: list[str]) -> Any:
            return scores.scores_for(hashes_of(urls), field="linkrank_relative", default=0.0)

        return scores_for


_link_scores = _LinkScoresCache()
_score_delivery = ScoreDelivery()


class _ClaimStoreCache:
    """The fetcher process's claim store (one Redis connection pool), made on first use."""

    def __init__(self) -> None:
        self._store: ClaimStore | None = None

    def get(self) -> ClaimStore:
        if self._store is None:
            self._store = ClaimStore.from_settings()
        return self._store


_claims = _ClaimStoreCache()


class _HostPacerCache:
    """The fetcher process's host pacer (one Redis connection pool), made on first use."""

    def __init__(self) -> None:
        self._pacer: RedisHostPacer | None = None

    def get(self) -> RedisHostPacer:
        if self._pacer is None:
            self._pacer = RedisHostPacer.from_settings()
        return self._pacer


_host_pacer = _HostPacerCache()


def run_schedule(message: dict[str, Any], ship: Callable[[int, dict], None]) -> dict:
    """Run one schedule message; ``ship(server, batch)`` sends a batch's JSON form.

    The schedule is claimed first (``crawler.machines.claim_store``): a copy of a schedule another
    fetcher holds or finished is dropped; a schedule received while the crawl is not running,
    or stopped by a crawl stop, is given back, so that its queue server hands it out again at
    once when the crawl runs."""
    header, schedule = schedule_from_wire(message)
    crawl = crawl_config_get(header["crawl_id"])
    if crawl.timestamp != header["crawl"]:
        return {"refused": "schedule of another crawl"}
    claims = _claims.get()
    deadline = schedule.deadline or time.time() + settings.SCHEDULE_TIMEOUT
    check = CrawlRunningCheck(crawl.crawl_id)
    if not check():
        claims.give_back(schedule.id, deadline)
        logger.info("crawl %s is not running: schedule %s given back", crawl.crawl_id,
                    schedule.id)
        return {"skipped": schedule.id}
    name, host = f"{socket.gethostname()}:{os.getpid()}", socket.gethostname()
    refused = claims.claim(schedule.id, name)
    if refused is not None:
        logger.info("schedule %s (copy %d) dropped: another fetcher has it (%s)", schedule.id,
                    schedule.reissue, refused)
        return {"duplicate": schedule.id, "claim": refused}
    presence = fetcher_presence.current()  # this process's heartbeat thread, if any
    services.fetcher_heartbeat(name, host, os.getpid(), "fetching", schedule=schedule.id)
    if presence is not None:
        presence.schedule_started(schedule.id)
        ship = _counting_pages(ship, presence)
    try:
        with claims.holding(schedule.id, name, deadline) as holding:
            report = _run_worker(crawl, header["server"], schedule, message, ship, check)
            holding.done = not report.stopped_early
    finally:
        if presence is not None:
            presence.schedule_done()
    services.fetcher_heartbeat(name, host, os.getpid(), "idle", pages=report.fetched,
                               finished_schedule=True,
                               rate=None if presence is None else presence.rate())
    logger.info("schedule %s: %d fetched, %d errors, %d documents, %d deferred in %.1fs",
                schedule.id, report.fetched, report.errors, report.documents, report.deferred,
                report.elapsed)
    return {"schedule": schedule.id, "fetched": report.fetched, "errors": report.errors,
            "documents": report.documents, "stopped_early": report.stopped_early,
            "deferred": report.deferred, "stalls": report.stalls}


def _counting_pages(ship: Callable[[int, dict], None], presence: fetcher_presence.Presence
                    ) -> Callable[[int, dict], None]:
    """``ship``, telling ``presence`` the pages each batch carries (its fetcher's rate)."""
    def counted(server: int, batch: dict) -> None:
        ship(server, batch)
        presence.pages(int((batch.get("counters") or {}).get("pages_fetched", 0)))

    return counted


def _run_worker(crawl: CrawlConfig, server: int, schedule: Schedule, message: dict[str, Any],
                ship: Callable[[int, dict], None], check: CrawlRunningCheck) -> WorkerReport:
    def ship_wire(server: int, batch: FetcherBatch) -> None:
        ship(server, batch.to_wire())

    if crawl.archive is not None:  # an archive crawl: the records are read, not fetched
        archive = ArchiveWorker(crawl, processor_for(crawl), settings.NUM_QUEUE_SERVERS,
                                ship_wire, check)
        try:
            return archive.run(schedule, pointers_from_wire(message.get("archive")), server)
        finally:
            archive.close()
    config = fetch_config_for(crawl)
    fetcher, hop_fetcher = _fetchers.get(config)

    # the scores file the queue server announced, fetched once onto a machine without it
    _score_delivery.ensure(crawl.timestamp, server, message.get("scores"))
    worker = ScheduleWorker(crawl, config, processor_for(crawl), settings.NUM_QUEUE_SERVERS,
                            ship_wire, check, fetcher=fetcher, hop_fetcher=hop_fetcher,
                            link_scores=_link_scores.lookup(crawl.timestamp),
                            host_pacer=_host_pacer.get())
    try:
        return worker.run(schedule, server,
                          {str(k): float(v) for k, v in message.get("last", {}).items()},
                          skip_hosts=[str(h) for h in message.get("skip") or []])
    finally:
        worker.close()
