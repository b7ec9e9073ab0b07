"""The queue-server process (``manage.py run_queue_server --server N``): Django glue around
``crawler.core.queue_server.server.QueueServerCore``.

Each tick it: follows the active crawl in the database (opens its queue and index, adds this
shard's seeds, saves and closes when the crawl stops); applies the batches the ``qs.N`` worker
wrote to the inbox; refreshes the active index partition so new pages become searchable; sends
schedules to the fetchers (each naming the version of the crawl's link scores file this
machine holds, which a fetcher on another machine then fetches:
``crawler.machines.score_delivery``); and, every few seconds, reports a heartbeat with its counters. A
separate dictionary-updater process merges closed partitions into the dictionary; it does not
outlive the queue server, however the queue server ends: the kernel sends it SIGTERM when the
queue server dies (``operations.process_death``), and it also exits by itself when its parent
changes (``indexer.core.dictionary.updater --parent``), so a restarted queue server never runs beside the
updater of the one before.

Disk space (``crawler.core.queue_server.disk_space``): below the low-water mark of free space on the work
directory's filesystem (``DISK_PAUSE_FREE_BYTES`` / ``_PERCENT``) no new schedules go out (the
crawl pauses: fetchers finish what they hold, and their batches are still applied) and no
finished partition is re-ordered; above the high-water mark (``DISK_RESUME_FREE_*``) work
resumes by itself. A write that fails for lack of space anyway (applying a batch, refreshing
the index, a checkpoint) shuts the crawl's queue and index without saving
(``QueueServerCore.abandon``: they recover from disk as after a kill -9, and the batch stays in
the inbox), and they are opened again once free space is back above the high-water mark. The
heartbeat's ``disk`` counters say all of this; the admin shows their ``reason``.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import transaction

from crawler import services
from crawler.core.archive import skipped as archive_skipped
from crawler.core.archive.queue import schedule_message_fields
from crawler.core.definition.crawl import CrawlStatus
from crawler.core.queue_server import robots_failures
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.disk_space import DiskGuard, DiskState, Watermarks, is_out_of_space
from crawler.core.queue_server.freshness import merge_reports
from crawler.core.queue_server.index_order import IndexOrderer
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.transport import fetch_error_kinds
from crawler.core.transport.wire import schedule_to_wire
from crawler.hosts.activity import HostActivityPump
from crawler.identity import robots_agent_name
from crawler.link_analysis import link_analysis_maybe_periodic
from crawler.models import Crawl, QueueServer
from crawler.selectors import ConfigNotFound, crawl_config_get, live_queue_servers
from indexer.core.bundle.writer import BundleConfig
from indexer.core.errors import IndexStoreError
from indexer.core.runtime.workdir import queue_server_dir
from indexer.core.signals.link_scores import cached_link_scores
from operations.process_death import die_with_parent

from .claim_store import ClaimStore
from .needy import NeedyRefresher
from .repeats import RepeatKeeper

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 3.0
IDLE_SECONDS = 3.0
ACTIVE_TICK = 0.05
STATUS_SECONDS = 0.25  # the crawl's row (running, stopping...) is read at most this often
CLAIMS_SECONDS = 1.0  # the fetchers' claims of outstanding schedules are read this often
# the crawl's editable parameters (seeds, allowed and disallowed sites, quotas, sleep window)
# are read this often: an edit reaches a running crawl well within a minute (issue 37)
EDITS_SECONDS = 10.0
COUNTER_FIELDS = {"pages_fetched": "pages_fetched", "fetch_errors": "fetch_errors",
                  "bytes_downloaded": "bytes_downloaded",
                  "documents_indexed": "documents_indexed", "seen": "urls_seen",
                  "queued": "urls_queued", "hosts": "hosts_seen"}


def disk_watermarks() -> Watermarks:
    """The free-space marks of the settings (a bad pair raises ``ValueError`` at start)."""
    return Watermarks(settings.DISK_PAUSE_FREE_BYTES, settings.DISK_RESUME_FREE_BYTES,
                      settings.DISK_PAUSE_FREE_PERCENT, settings.DISK_RESUME_FREE_PERCENT)


class QueueServerProcess:
    def __init__(self, server: int, num_servers: int, base_url: str,
                 send_schedule: Callable[[dict], None], tick: float = 0.2,
                 disk: DiskGuard | None = None) -> None:
        self.server = server
        self.num_servers = num_servers
        self.base_url = base_url
        self.directory = queue_server_dir(settings.WORK_DIRECTORY, server)
        # the free space of the work directory's filesystem (tests pass their own guard)
        self.disk = disk or DiskGuard(disk_watermarks(), self.directory)
        self._disk_paused = False
        # a crawl whose queue and index were shut because a write found the disk full: it
        # is opened again (to go on, or to save it when stopping) once there is room
        self._shut_for: int | None = None
        self._last_stats: dict = {}  # its counters, reported while it is shut
        self._send = send_schedule
        self._tick = tick
        self._stop = threading.Event()
        self.core: QueueServerCore | None = None
        self.crawl_id: int | None = None
        self._updater: subprocess.Popen | None = None
        self._orderer: IndexOrderer | None = None  # the index of the crawl that ended last
        self._last_heartbeat = 0.0
        self._saved_for: int | None = None
        self._idle_ticks = 0
        self._last_activity = time.monotonic()
        self._crawl: Crawl | None = None
        self._crawl_checked = -STATUS_SECONDS
        self._refresh_needy = NeedyRefresher()  # the query log's needy queries, now and then
        self._claims = ClaimStore.from_settings()  # who holds the schedules handed out
        self._claims_checked = -CLAIMS_SECONDS
        self.edits_seconds = EDITS_SECONDS
        self._edits_checked = time.monotonic()
        self._hosts = HostActivityPump(server)  # the admin's url and host pages, overrides
        self._repeats = RepeatKeeper(server, self.directory)  # crawls that start over

    def request_stop(self, *_: object) -> None:
        self._stop.set()

    def run(self) -> None:
        logger.info("queue server %d of %d started (work directory %s)", self.server,
                    self.num_servers, self.directory)
        try:
            while not self._stop.is_set():
                # after a tick that applied batches or handed out schedules, the next one
                # comes at once: the fetchers wait for what it produces
                busy = self.tick()
                # while a crawl is open, quiet ticks come often: a fetcher waiting for its
                # next schedule waits for the tick that applies its batch
                idle = self._tick if self.core is None else min(self._tick, ACTIVE_TICK)
                self._stop.wait(0.0 if busy else idle)
        finally:
            try:
                self._close()
            except OSError as exc:
                if not is_out_of_space(exc):
                    raise
                self._out_of_space(exc)
            self._heartbeat(force=True)

    # --- one round ----------------------------------------------------------------------

    def tick(self) -> bool:
        """One round of work; True if it applied batches or handed out schedules."""
        busy = False
        now = time.monotonic()
        if now - self._crawl_checked >= STATUS_SECONDS or self.core is None:
            self._crawl = (Crawl.objects.filter(active_lock=True)
                           .only("pk", "status", "timestamp").first())
            self._crawl_checked = now
        crawl = self._crawl
        disk = self._check_disk()
        try:
            busy = self._follow(crawl, disk)
            if self.core is None and self._orderer is not None and not disk.paused:
                # the ended crawl's index follows the link scores link analysis writes after
                # it (a re-order writes a partition again: not while space is short)
                try:
                    self._orderer.step()
                except IndexStoreError as exc:
                    logger.error("queue server %d: re-ordering the index failed: %s",
                                 self.server, exc)
                    self._orderer = None
        except OSError as exc:
            if not is_out_of_space(exc):
                raise
            self._out_of_space(exc)
        self._heartbeat()
        if crawl is not None and crawl.status == CrawlStatus.STOPPING:
            self._maybe_mark_saved(crawl.pk)
        if self.core is None:
            self._repeats.step(crawl_active=crawl is not None)
        return busy

    def _follow(self, crawl: Crawl | None, disk: DiskState) -> bool:
        """Open, work on, save and close the active crawl; True if busy. A crawl is not
        opened (nor one shut for lack of space opened again) while the disk is paused."""
        if crawl is None or (self.crawl_id is not None and crawl.pk != self.crawl_id):
            self._close(finish=True)
        if crawl is not None and crawl.status == CrawlStatus.RUNNING:
            if self.core is None:
                if disk.paused:
                    self.crawl_id = crawl.pk  # waiting for space: reported on this crawl
                    return False
                self._open(crawl.pk)
            return self._work(crawl, disk)
        if crawl is not None and crawl.status == CrawlStatus.STOPPING:
            if self.core is None and self._shut_for == crawl.pk:
                if disk.paused:
                    return False  # its last batches are saved when there is room
                self._open(crawl.pk)
            if self.core is not None:
                self.core.ingest(limit=None)
                self._hosts.step(self.core, crawl.pk)
                self._close(finish=True)
            self._saved_for = crawl.pk
        return False

    def _check_disk(self) -> DiskState:
        state = self.disk.check()
        if state.paused != self._disk_paused:
            self._disk_paused = state.paused
            self._last_heartbeat = 0.0  # the admin hears of it at once
            if state.paused:
                logger.warning("queue server %d: %s", self.server, state.reason)
            else:
                logger.info("queue server %d: disk space is back (%d MB free): crawling "
                            "resumes", self.server, state.usage.free_bytes // 2 ** 20)
        return state

    def _out_of_space(self, exc: OSError) -> None:
        """A write found the disk full: shut the crawl's queue and index without saving
        (they recover from disk when opened again, and the batch being applied is still in
        the inbox), and pause until free space is back above the high-water mark."""
        if self.core is not None:
            try:
                self._last_stats = self.core.stats()
            except OSError:
                pass
            self._stop_updater()
            try:
                self.core.abandon()
            finally:
                self.core = None
                self._shut_for = self.crawl_id
        state = self.disk.note_full()
        self._check_disk()
        logger.error("queue server %d: out of space (%s); crawl %s shut until free space is "
                     "back: %s", self.server, exc, self._shut_for, state.reason)

    def _open(self, crawl_id: int) -> None:
        config = crawl_config_get(crawl_id)
        core = QueueServerCore(QueueServerConfig(
            self.server, self.num_servers, self.directory, config,
            refresh_seconds=settings.INDEX_REFRESH_SECONDS,
            max_outstanding=settings.QUEUE_SERVER_MAX_SCHEDULES,
            schedule_size=settings.DOWNLOAD_SIZE_INTERVAL,
            schedule_timeout=settings.SCHEDULE_TIMEOUT, robots_agent=robots_agent_name(),
            unclaimed_timeout=settings.SCHEDULE_UNCLAIMED_TIMEOUT,
            recrawl_day_seconds=settings.RECRAWL_DAY_SECONDS,
            bundle=BundleConfig(max_partition_docs=settings.INDEX_PARTITION_DOCUMENTS,
                                refresh_every_docs=0)))
        try:
            added = core.add_seeds(s.url for s in config.seeds)
        except BaseException:
            core.abandon()
            raise
        if self._shut_for != crawl_id:
            self._last_stats = {}
        self.core = core
        self.crawl_id = crawl_id
        self._shut_for = None
        self._orderer = None
        self._saved_for = None
        self._idle_ticks = 0
        self._last_activity = time.monotonic()
        logger.info("queue server %d: crawl %s open, %d seed urls queued", self.server,
                    config.timestamp, added)
        self._updater = subprocess.Popen(
            [sys.executable, "-m", "indexer.core.dictionary.updater", str(self.core.paths["index"]),
             "--loop", "--parent", str(os.getpid())],
            stdin=subprocess.DEVNULL, preexec_fn=die_with_parent(signal.SIGTERM))

    def _work(self, crawl: Crawl, disk: DiskState) -> bool:
        core = self.core
        assert core is not None
        now = time.monotonic()
        busy = False
        if core.ingest(limit=200):
            self._last_activity = now
            busy = True
        core.maybe_refresh()
        self._hosts.step(core, crawl.pk)  # url and host log; the operator's host overrides
        if not disk.paused:
            core.maybe_reorder()  # a finished partition, after link analysis wrote new scores
        if core.config.crawl.needy_threshold > 0:  # the query log, read from the shared DB
            self._refresh_needy(core.queue, core.config.crawl.needy_threshold)
        if now - self._edits_checked >= self.edits_seconds:
            self._edits_checked = now
            self._follow_edits(core, crawl.pk)
        if now - self._claims_checked >= CLAIMS_SECONDS:
            # schedules no fetcher holds (given back at a stop, lost with a fetcher or by the
            # broker) go out again now rather than after SCHEDULE_TIMEOUT
            self._claims_checked = now
            claims = self._claims.states(s.id for s in core.queue.outstanding())
            if claims is not None:
                core.release_lost(claims)
        # paused for disk space: no new schedules (the fetchers finish the ones they hold)
        scores = cached_link_scores(core.orderer.scores).get()
        scores_version = None if scores is None else scores.version
        for schedule in [] if disk.paused else core.take_schedules():
            message = schedule_to_wire(schedule, crawl.timestamp, crawl.pk, self.server)
            message["last"] = core.last_requests(schedule)
            message["skip"] = core.skip_hosts(schedule)
            if scores_version is not None:  # fetchers elsewhere fetch the file it names
                message["scores"] = scores_version
            message.update(schedule_message_fields(schedule))  # an archive's record pointers
            self._send(message)
            self._last_activity = now
            busy = True
        # Idle means: nothing queued, waiting, out or in the inbox, and nothing applied or
        # handed out for IDLE_SECONDS, so a batch still on its way through the broker is
        # not mistaken for the end of the crawl.
        quiet = now - self._last_activity >= IDLE_SECONDS
        self._idle_ticks = self._idle_ticks + 1 if (quiet and core.settled()) else 0
        if self._idle_ticks == 3:
            self._last_heartbeat = 0.0  # report "idle" at once: the crawl may have finished
        return busy

    def _follow_edits(self, core: QueueServerCore, crawl_id: int) -> None:
        """The crawl as edited in the admin while it runs (seeds, site rules, quotas, sleep
        window): in force in this queue server from now on (``QueueServerCore.update_crawl``);
        a row that no longer reads keeps the crawl as it was, with an error in the log."""
        try:
            core.update_crawl(crawl_config_get(crawl_id))
        except (ConfigNotFound, ValueError) as exc:
            logger.error("queue server %d: the edits of crawl %s are not applied: %s",
                         self.server, crawl_id, exc)

    def _stop_updater(self) -> None:
        if self._updater is not None:
            self._updater.send_signal(signal.SIGTERM)
            try:
                self._updater.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._updater.kill()
                self._updater.wait()
            self._updater = None

    def _close(self, finish: bool = False) -> None:
        """Stop the dictionary updater and close the crawl; ``finish``: the crawl has ended
        (its last index partition is finished, and re-ordered here by importance once link
        analysis scores the crawl, see ``crawler.core.queue_server.index_order``). Raises ``OSError`` (a
        full disk) with the crawl still open: the caller shuts it (:meth:`_out_of_space`)."""
        self._stop_updater()
        if self.core is not None:
            self.core.close(finish=finish)
            if finish:
                self._orderer = IndexOrderer(self.core.orderer.bundle, self.core.orderer.scores)
            self.core = None
            logger.info("queue server %d: crawl closed", self.server)
        self.crawl_id = None
        self._shut_for = None
        self._last_stats = {}

    # --- reporting ----------------------------------------------------------------------

    def _heartbeat(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_heartbeat < HEARTBEAT_SECONDS:
            return
        self._last_heartbeat = now
        counters: dict = {"crawl": None}
        if self.core is not None:
            self._last_stats = self.core.stats()
            counters = {**self._last_stats, "crawl": self.crawl_id,
                        "idle": self._idle_ticks >= 3}
        elif self.crawl_id is not None:  # shut or not opened for lack of space: not idle
            counters = {**self._last_stats, "crawl": self.crawl_id, "idle": False}
        if self._saved_for is not None:
            counters["saved"] = self._saved_for
        counters["disk"] = self.disk.state.as_counters()
        services.queue_server_heartbeat(self.server, self.base_url, counters)
        if self._stop.is_set():
            QueueServer.objects.filter(server_id=self.server).update(
                state=QueueServer.State.DOWN)
        if self.crawl_id is not None and (self.core is not None or self._last_stats):
            self._update_crawl(self.crawl_id)

    def _update_crawl(self, crawl_id: int) -> None:
        """Crawl counters are the sums over the queue servers' latest reports; when every
        live queue server of the crawl is idle, the crawl has finished."""
        live = [q for q in live_queue_servers() if q.counters.get("crawl") == crawl_id]
        totals = dict.fromkeys(COUNTER_FIELDS.values(), 0)
        for q in live:
            for key, field in COUNTER_FIELDS.items():
                totals[field] += int(q.counters.get(key, 0) or 0)
        robots = robots_failures.merge(q.counters.get("robots_failures") for q in live)
        errors = fetch_error_kinds.merge_heartbeats(q.counters for q in live)
        skipped = archive_skipped.merge(q.counters.get("archive_skipped") for q in live)
        Crawl.objects.filter(pk=crawl_id).update(
            **totals, robots_failures=robots, fetch_error_kinds=errors,
            freshness=merge_reports(q.counters.get("freshness") for q in live),
            archive_skipped=skipped)
        if self.server == 0:
            services.crawl_sample_record(crawl_id)  # the dashboard's pages-per-second chart
            link_analysis_maybe_periodic(crawl_id)  # every LINK_ANALYSIS_EVERY_PAGES pages
        if (self.server == 0 and len(live) >= self.num_servers
                and all(q.counters.get("idle") for q in live)):
            try:
                ended = services.crawl_finish(crawl_id)
                logger.info("crawl %s finished: %s", crawl_id,
                            ended.end_reason or "nothing left to fetch")
            except services.CrawlServiceError:
                pass

    def _maybe_mark_saved(self, crawl_id: int) -> None:
        live = live_queue_servers()
        if live and all(q.counters.get("saved") == crawl_id for q in live):
            with transaction.atomic():
                try:
                    services.crawl_mark_saved(crawl_id)
                except services.CrawlServiceError:
                    pass

