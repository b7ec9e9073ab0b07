"""The queue-server process (``manage.py run_queue_server --server N``): Django glue around one
``crawler.core.queue_server.server.QueueServerCore`` per active crawl.

Several crawls may be active at once (issue 37; Yioop's channels, ``MAX_ACTIVE_CRAWLS``), each
with its own queue, seen-url filter, host politeness and index bundle on every queue server
(:mod:`crawler.machines.open_crawl`). Each tick it: follows the active crawls in the database
(opens each one's queue and index, adds this shard's seeds, saves and closes one when it stops
or ends, leaving the others running); applies the batches the ``qs.N`` worker wrote to each
crawl's inbox; refreshes their active index partitions so new pages become searchable; sends
schedules to the fetchers (each naming the version of the crawl's link scores file this
machine holds, which a fetcher on another machine then fetches:
``crawler.machines.score_delivery``), the crawls taking turns
(:mod:`crawler.core.queue_server.sharing`; the fetchers keep the Crawl-delays of the hosts
several crawls ask: :mod:`crawler.machines.host_pacing`); and, every few seconds, reports a
heartbeat with each crawl's counters (:mod:`crawler.core.queue_server.heartbeat`). Each open
crawl has a dictionary-updater process that merges its closed partitions into its dictionary;
it does not outlive the queue server, however the queue server ends: the kernel sends it
SIGTERM when the queue server dies (``operations.process_death``), and it also exits by itself
when its parent changes (``indexer.core.dictionary.updater --parent``), so a restarted queue
server never runs beside the updaters of the one before. A restarted queue server opens every
active crawl again from its files.

Disk space (``crawler.core.queue_server.disk_space``): below the low-water mark of free space on the work
directory's filesystem (``DISK_PAUSE_FREE_BYTES`` / ``_PERCENT``) no new schedules go out (the
crawls pause: fetchers finish what they hold, and their batches are still applied) and no
finished partition is re-ordered; above the high-water mark (``DISK_RESUME_FREE_*``) work
resumes by itself. A write that fails for lack of space anyway (applying a batch, refreshing
the index, a checkpoint) shuts every open crawl's queue and index without saving
(``QueueServerCore.abandon``: they recover from disk as after a kill -9, and the batch stays in
the inbox), and they are opened again once free space is back above the high-water mark. The
heartbeat's ``disk`` counters say all of this; the admin shows their ``reason``.
"""

from __future__ import annotations

import logging
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
from crawler.core.queue_server.disk_space import DiskGuard, DiskState, Watermarks, is_out_of_space
from crawler.core.queue_server.freshness import merge_reports
from crawler.core.queue_server.heartbeat import crawl_counters, heartbeat_counters, saved_crawls
from crawler.core.queue_server.index_order import IndexOrderer
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.queue_server.sharing import take_fairly
from crawler.core.scheduler import Schedule
from crawler.core.transport import fetch_error_kinds
from crawler.core.transport.wire import schedule_to_wire
from crawler.link_analysis import link_analysis_maybe_periodic
from crawler.models import Crawl, QueueServer
from crawler.selectors import live_queue_servers
from indexer.core.errors import IndexStoreError
from indexer.core.runtime.workdir import queue_server_dir
from indexer.core.signals.link_scores import cached_link_scores

from .claim_store import ClaimStore
from .open_crawl import OpenCrawl
from .repeats import RepeatKeeper

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 3.0
ACTIVE_TICK = 0.05
STATUS_SECONDS = 0.25  # the active crawls' rows (running, stopping...) are read at most this often
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
        self._send = send_schedule
        self._tick = tick
        self._stop = threading.Event()
        # the active crawls this queue server works on, by crawl id, in channel order; one
        # is open (its core) unless the disk is paused or it was shut for lack of space
        self.crawls: dict[int, OpenCrawl] = {}
        # the indexes of the crawls that ended here last (at most MAX_ACTIVE_CRAWLS)
        self._orderers: list[IndexOrderer] = []
        self._order_turn = 0
        self._last_heartbeat = 0.0
        self._saved: set[int] = set()  # stopping crawls whose queues this server saved
        self._active: list[Crawl] = []
        self._crawl_checked = -STATUS_SECONDS
        self._claims = ClaimStore.from_settings()  # who holds the schedules handed out
        self._claims_checked = -CLAIMS_SECONDS
        self.edits_seconds = EDITS_SECONDS
        self._turn = 0  # the crawl that takes the first schedule next (take_fairly)
        self._repeats = RepeatKeeper(server, self.directory)  # crawls that start over

    def request_stop(self, *_: object) -> None:
        self._stop.set()

    def core_of(self, crawl_id: int) -> QueueServerCore | None:
        """Crawl ``crawl_id``'s open queue server core, or None."""
        held = self.crawls.get(crawl_id)
        return None if held is None else held.core

    @property
    def cores(self) -> list[QueueServerCore]:
        """The open crawls' cores, in channel order."""
        return [c.core for c in self.crawls.values() if c.core is not None]

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
                idle = self._tick if not self.cores else min(self._tick, ACTIVE_TICK)
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
        if now - self._crawl_checked >= STATUS_SECONDS or not self.cores:
            self._active = list(Crawl.objects.filter(channel__isnull=False)
                                .only("pk", "status", "timestamp", "channel")
                                .order_by("channel"))
            self._crawl_checked = now
        active = self._active
        disk = self._check_disk()
        try:
            busy = self._follow(active, disk)
            if not disk.paused and self._orderers and not busy:
                # the ended crawls' indexes follow the link scores link analysis writes
                # after them (a re-order writes a partition again: not while space is short)
                self._order_ended()
        except OSError as exc:
            if not is_out_of_space(exc):
                raise
            self._out_of_space(exc)
        self._heartbeat()
        for crawl in active:
            if crawl.status == CrawlStatus.STOPPING:
                self._maybe_mark_saved(crawl.pk)
        self._repeats.step(channels_full=len(active) >= services.active_crawls_limit())
        return busy

    def _order_ended(self) -> None:
        """One step of one ended crawl's re-ordering, the crawls in turn."""
        orderer = self._orderers[self._order_turn % len(self._orderers)]
        try:
            if orderer.step() is None:
                self._order_turn += 1  # nothing to do there now: the next one's turn
        except IndexStoreError as exc:
            logger.error("queue server %d: re-ordering the index failed: %s", self.server, exc)
            self._orderers.remove(orderer)

    def _follow(self, active: list[Crawl], disk: DiskState) -> bool:
        """Open, work on, save and close every active crawl; True if busy. A crawl is not
        opened (nor one shut for lack of space opened again) while the disk is paused."""
        wanted = {crawl.pk for crawl in active}
        for crawl_id in [c for c in self.crawls if c not in wanted]:
            self._close_crawl(crawl_id, finish=True)  # ended, or stopped elsewhere
        busy = False
        running: list[tuple[Crawl, OpenCrawl]] = []
        for crawl in active:
            held = self.crawls.get(crawl.pk)
            if held is not None and held.timestamp != crawl.timestamp:
                self._close_crawl(crawl.pk, finish=True)
                held = None
            if crawl.status == CrawlStatus.RUNNING:
                if held is None:
                    held = self.crawls[crawl.pk] = OpenCrawl(
                        crawl.pk, crawl.timestamp, self.server, self.num_servers,
                        self.directory, self.edits_seconds)
                    self._saved.discard(crawl.pk)  # resumed
                if held.core is None:
                    if disk.paused:
                        continue  # waiting for space: reported on this crawl
                    held.open()
                busy = held.work(reorder=not disk.paused) or busy
                running.append((crawl, held))
            elif crawl.status == CrawlStatus.STOPPING:
                if held is not None and held.core is None and held.shut:
                    if disk.paused:
                        continue  # its last batches are saved when there is room
                    held.open()
                if held is not None:
                    held.drain()
                    self._close_crawl(crawl.pk, finish=True)
                self._saved.add(crawl.pk)
        if running:
            busy = self._hand_out(running, disk) or busy
        return busy

    def _hand_out(self, running: list[tuple[Crawl, OpenCrawl]], disk: DiskState) -> bool:
        """Send the running crawls' schedules: one crawl takes them as it always did; several
        take turns (:mod:`crawler.core.queue_server.sharing`; the fetchers keep the delays
        of the hosts they share: ``crawler.machines.host_pacing``). None while the disk is paused (the
        fetchers finish the ones they hold)."""
        now = time.monotonic()
        if now - self._claims_checked >= CLAIMS_SECONDS:
            # schedules no fetcher holds (given back at a stop, lost with a fetcher or by the
            # broker) go out again now rather than after SCHEDULE_TIMEOUT
            self._claims_checked = now
            for _, held in running:
                core = held.core
                claims = self._claims.states(s.id for s in core.queue.outstanding())
                if claims is not None:
                    core.release_lost(claims)
        taken: list[tuple[int, Schedule]] = []
        if not disk.paused and len(running) == 1:
            taken = [(0, s) for s in running[0][1].core.take_schedules()]
        elif not disk.paused:
            cores = [held.core for _, held in running]
            taken = take_fairly(cores, settings.QUEUE_SERVER_MAX_SCHEDULES,
                                self._turn % len(cores))
            self._turn += 1
        handed = set()
        for index, schedule in taken:
            crawl, held = running[index]
            self._send_schedule(crawl, held, schedule)
            handed.add(crawl.pk)
        for crawl, held in running:
            held.settle(crawl.pk in handed)
            if held.idle_ticks == 3:
                self._last_heartbeat = 0.0  # report "idle" at once: the crawl may have ended
        return bool(taken)

    def _send_schedule(self, crawl: Crawl, held: OpenCrawl, schedule: Schedule) -> None:
        core = held.core
        scores = cached_link_scores(core.orderer.scores).get()
        message = schedule_to_wire(schedule, crawl.timestamp, crawl.pk, self.server)
        message["last"] = core.last_requests(schedule)
        message["skip"] = core.skip_hosts(schedule)
        if scores is not None:  # fetchers elsewhere fetch the file it names
            message["scores"] = scores.version
        message.update(schedule_message_fields(schedule))  # an archive's record pointers
        self._send(message)

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
        """A write found the disk full: shut every open crawl's queue and index without
        saving (they recover from disk when opened again, and the batch being applied is
        still in its inbox), and pause until free space is back above the high-water mark."""
        shut = []
        for held in self.crawls.values():
            if held.core is not None:
                held.abandon()
                shut.append(held.timestamp)
        state = self.disk.note_full()
        self._check_disk()
        logger.error("queue server %d: out of space (%s); crawls %s shut until free space is "
                     "back: %s", self.server, exc, shut, state.reason)

    def _close_crawl(self, crawl_id: int, finish: bool) -> None:
        """Close one crawl (``finish``: it has ended; its index is re-ordered by importance
        here once link analysis scores it). Raises ``OSError`` (a full disk) with the crawl
        still open: the caller shuts it (:meth:`_out_of_space`)."""
        held = self.crawls[crawl_id]
        orderer = held.close(finish=finish)
        del self.crawls[crawl_id]
        if orderer is not None:
            self._orderers.append(orderer)
            del self._orderers[:-services.active_crawls_limit()]

    def _close(self) -> None:
        """Close every crawl, saved, not finished (the process ends; they resume when it
        starts again)."""
        for crawl_id in list(self.crawls):
            self._close_crawl(crawl_id, finish=False)

    # --- reporting ----------------------------------------------------------------------

    def _heartbeat(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_heartbeat < HEARTBEAT_SECONDS:
            return
        self._last_heartbeat = now
        reports = {crawl_id: held.counters() for crawl_id, held in self.crawls.items()}
        wanted = {crawl.pk for crawl in self._active}
        self._saved &= wanted  # a saved crawl no longer active needs no more saying
        services.queue_server_heartbeat(self.server, self.base_url, heartbeat_counters(
            reports, self._saved, self.disk.state.as_counters()))
        if self._stop.is_set():
            QueueServer.objects.filter(server_id=self.server).update(
                state=QueueServer.State.DOWN)
        for crawl_id, held in self.crawls.items():
            if held.core is not None or held.last_stats:
                self._update_crawl(crawl_id)

    def _update_crawl(self, crawl_id: int) -> None:
        """Crawl counters are the sums over the queue servers' latest reports; when every
        live queue server of the crawl is idle, the crawl has finished."""
        live = [c for c in (crawl_counters(q.counters, crawl_id) for q in live_queue_servers())
                if c is not None]
        totals = dict.fromkeys(COUNTER_FIELDS.values(), 0)
        for counters in live:
            for key, field in COUNTER_FIELDS.items():
                totals[field] += int(counters.get(key, 0) or 0)
        robots = robots_failures.merge(c.get("robots_failures") for c in live)
        errors = fetch_error_kinds.merge_heartbeats(live)
        skipped = archive_skipped.merge(c.get("archive_skipped") for c in live)
        Crawl.objects.filter(pk=crawl_id).update(
            **totals, robots_failures=robots, fetch_error_kinds=errors,
            freshness=merge_reports(c.get("freshness") for c in live),
            archive_skipped=skipped)
        if self.server == 0:
            services.crawl_sample_record(crawl_id)  # the dashboard's pages-per-second chart
            link_analysis_maybe_periodic(crawl_id)  # every LINK_ANALYSIS_EVERY_PAGES pages
        if (self.server == 0 and len(live) >= self.num_servers
                and all(c.get("idle") for c in live)):
            try:
                ended = services.crawl_finish(crawl_id)
                logger.info("crawl %s finished: %s", crawl_id,
                            ended.end_reason or "nothing left to fetch")
            except services.CrawlServiceError:
                pass

    def _maybe_mark_saved(self, crawl_id: int) -> None:
        live = live_queue_servers()
        if live and all(crawl_id in saved_crawls(q.counters) for q in live):
            with transaction.atomic():
                try:
                    services.crawl_mark_saved(crawl_id)
                except services.CrawlServiceError:
                    pass
