"""One active crawl in the queue-server process: its ``QueueServerCore`` (queue, seen-url filter,
host politeness, index), its dictionary updater, and what the process keeps about it between
ticks (idle ticks, the last counters, its edits, host log and needy queries).

Layer: Django glue, used only by ``crawler.machines.queue_server``, which holds one
:class:`OpenCrawl` per active crawl (issue 37: several crawls run at once, each on its own
channel) and shares the fetchers between them. Each crawl's files are its own
(:func:`indexer.core.runtime.workdir.crawl_paths`), so nothing here is shared with the others.

Call order: ``open()`` (or not, while the disk is paused: the crawl is then reported but not
open), then per tick ``work()`` while it runs, ``drain()`` when it stops; ``close(finish)`` at
its end or the process's; ``abandon()`` after a write found the disk full (it is shut, and
opened again by the process once there is room).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

from django.conf import settings

from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.index_order import IndexOrderer
from crawler.core.queue_server.server import QueueServerCore
from crawler.hosts.activity import HostActivityPump
from crawler.identity import robots_agent_name
from crawler.selectors import ConfigNotFound, crawl_config_get
from indexer.core.bundle.writer import BundleConfig
from operations.process_death import die_with_parent

from .needy import NeedyRefresher

logger = logging.getLogger(__name__)

# Idle means: nothing queued, waiting, out or in the inbox, and nothing applied or handed out
# for IDLE_SECONDS, so a batch still on its way through the broker is not mistaken for the end
# of the crawl.
IDLE_SECONDS = 3.0


class OpenCrawl:
    """One active crawl on this queue server (see the module)."""

    def __init__(self, crawl_id: int, timestamp: int, server: int, num_servers: int,
                 directory, edits_seconds: float) -> None:
        self.crawl_id = crawl_id
        self.timestamp = timestamp
        self.server = server
        self.num_servers = num_servers
        self.directory = directory
        self.core: QueueServerCore | None = None
        self.shut = False  # shut for lack of space: opened again once there is room
        self.last_stats: dict = {}  # its counters, reported while it is shut or not open
        self.idle_ticks = 0
        self.last_activity = time.monotonic()
        self.edits_seconds = edits_seconds
        self._edits_checked = time.monotonic()
        self._updater: subprocess.Popen | None = None
        self._hosts = HostActivityPump(server)  # the admin's url and host pages, overrides
        self._refresh_needy = NeedyRefresher()  # the query log's needy queries, now and then

    # --- lifecycle ------------------------------------------------------------------------

    def open(self) -> None:
        """Open the crawl's queue and index (recovered from disk after a restart or a shut),
        queue this shard's seeds, and start its dictionary updater."""
        config = crawl_config_get(self.crawl_id)
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
        if not self.shut:
            self.last_stats = {}
        self.core = core
        self.shut = False
        self.idle_ticks = 0
        self.last_activity = time.monotonic()
        logger.info("queue server %d: crawl %s open, %d seed urls queued", self.server,
                    config.timestamp, added)
        self._updater = subprocess.Popen(
            [sys.executable, "-m", "indexer.core.dictionary.updater",
             str(core.paths["index"]), "--loop", "--parent", str(os.getpid())],
            stdin=subprocess.DEVNULL, preexec_fn=die_with_parent(signal.SIGTERM))

    def stop_updater(self) -> None:
        if self._updater is not None:
            self._updater.send_signal(signal.SIGTERM)
            try:
                self._updater.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._updater.kill()
                self._updater.wait()
            self._updater = None

    def close(self, finish: bool = False) -> IndexOrderer | None:
        """Stop the dictionary updater and close the crawl; ``finish``: it has ended (its last
        partition is finished; the returned orderer re-orders it by importance once link
        analysis scores the crawl). Raises ``OSError`` (a full disk) with the crawl still
        open: the caller shuts it (:meth:`abandon`)."""
        self.stop_updater()
        orderer = None
        if self.core is not None:
            self.core.close(finish=finish)
            if finish:
                orderer = IndexOrderer(self.core.orderer.bundle, self.core.orderer.scores)
            self.core = None
            logger.info("queue server %d: crawl %s closed", self.server, self.timestamp)
        return orderer

    def abandon(self) -> None:
        """A write found the disk full: shut the queue and index without saving (they recover
        from disk when opened again; the batch being applied is still in the inbox)."""
        if self.core is None:
            return
        try:
            self.last_stats = self.core.stats()
        except OSError:
            pass
        self.stop_updater()
        try:
            self.core.abandon()
        finally:
            self.core = None
            self.shut = True

    # --- one tick -------------------------------------------------------------------------

    def work(self, reorder: bool) -> bool:
        """A running crawl's tick, schedules aside (the process hands them out for all the
        crawls together): apply batches, refresh the index, the host log and overrides,
        re-order a finished partition (``reorder``: not while the disk is short), needy
        queries, the admin's edits. True if it applied batches."""
        core = self.core
        assert core is not None
        now = time.monotonic()
        busy = False
        if core.ingest(limit=200):
            self.last_activity = now
            busy = True
        core.maybe_refresh()
        self._hosts.step(core, self.crawl_id)  # url and host log; the operator's overrides
        if reorder:
            core.maybe_reorder()  # a finished partition, after link analysis wrote new scores
        if core.config.crawl.needy_threshold > 0:  # the query log, read from the shared DB
            self._refresh_needy(core.queue, core.config.crawl.needy_threshold)
        if now - self._edits_checked >= self.edits_seconds:
            self._edits_checked = now
            self._follow_edits(core)
        return busy

    def settle(self, handed_out: bool) -> None:
        """After the tick's schedules: count an idle tick when nothing happened for
        IDLE_SECONDS and the crawl has settled (``QueueServerCore.settled``)."""
        now = time.monotonic()
        if handed_out:
            self.last_activity = now
        quiet = now - self.last_activity >= IDLE_SECONDS
        core = self.core
        self.idle_ticks = self.idle_ticks + 1 if (
            quiet and core is not None and core.settled()) else 0

    def drain(self) -> None:
        """The crawl is stopping: apply what came in, write its host log, and save and close
        it (resumable)."""
        if self.core is not None:
            self.core.ingest(limit=None)
            self._hosts.step(self.core, self.crawl_id)

    def _follow_edits(self, core: QueueServerCore) -> None:
        """The crawl as edited in the admin while it runs (seeds, site rules, quotas, sleep
        window): in force in this queue server from now on (``QueueServerCore.update_crawl``);
        a row that no longer reads keeps the crawl as it was, with an error in the log."""
        try:
            core.update_crawl(crawl_config_get(self.crawl_id))
        except (ConfigNotFound, ValueError) as exc:
            logger.error("queue server %d: the edits of crawl %s are not applied: %s",
                         self.server, self.crawl_id, exc)

    # --- reporting ------------------------------------------------------------------------

    def counters(self) -> dict | None:
        """Its counters for the heartbeat (None: opened never yet, nothing to report)."""
        if self.core is not None:
            self.last_stats = self.core.stats()
            return {**self.last_stats, "idle": self.idle_ticks >= 3}
        return {**self.last_stats, "idle": False}
