"""A queue server: one shard of one crawl — its queue source (the crawl queue, or an archive
crawl's archive queue) and its index (Indexer). This module is the facade the process calls.

Layer: ``crawler.core.queue_server``. The process around it (``manage.py run_queue_server``)
reads the crawl from the database, sends the schedules this produces to the fetchers, and reports
counters; the queue server's Celery worker writes what fetchers ship into the spool. This class
only works on disk, so it is testable without Django, Celery or a network. Beside it: where
schedules come from (:mod:`.source`, the only code that knows the kind of crawl), applying one
batch (:mod:`.applying`), hosts' stalls, drops and overrides (:mod:`.hosts`), the counters and
tallies saved across restarts (:mod:`.state`), the configuration (:mod:`.config`).

Work directory of queue server n (``WORK_DIRECTORY/qs<n>``): its crawl queue, its
IndexDocumentBundle, the spool of received batches and its counters, laid out as
:mod:`indexer.core.runtime.workdir` says.

Call order: ``QueueServerCore(config)``, then ``add_seeds`` (at crawl start), then repeatedly
``update_crawl()`` (the crawl as edited while it runs, now and then), ``ingest()``, ``maybe_refresh()``, ``maybe_reorder()``, ``release_lost()`` (now and then, with
the fetchers' claims), ``apply_host_overrides()`` (the operator's, now and then),
``take_activity()`` (what happened to urls and hosts, for the admin: :mod:`.activity`) and
``take_schedules()``; ``close()`` at the end (``close(finish=True)``
when the crawl has ended: its last partition is finished, so that it too can be re-ordered by
importance, see :mod:`crawler.core.queue_server.index_order`). Every batch is applied and only
then removed from the spool, so a kill -9 at any moment loses nothing (a batch applied twice is
harmless: the queue's Bloom filter drops repeated urls and query-time grouping folds a repeated
document into one result). After any call raised ``OSError`` (a full disk), call
``abandon()`` instead of ``close()``: it recovers as a kill -9 would, and the batch that failed
is still in the inbox.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.queue_server.activity import Activity, ActivityLog
from crawler.core.queue_server.applying import BatchApplier
from crawler.core.queue_server.claims import lost_schedules
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.hosts import HostBook
from crawler.core.queue_server.index_order import (
    IndexOrderer,
    current_anchor_boost,
    scores_tag,
)
from crawler.core.queue_server.recrawl import RetiredPublisher
from crawler.core.queue_server.source import Inbox, QueueSource, open_source, scheduler_config
from crawler.core.queue_server.state import QueueServerState
from crawler.core.scheduler import Schedule
from crawler.core.scheduler.errors import InvalidUrlError
from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.spool import Spool
from crawler.core.transport.wire import WireError
from indexer.core.bundle.reorder import ReorderResult
from indexer.core.bundle.writer import IndexBundleWriter
from indexer.core.runtime.workdir import crawl_paths, scores_path
from indexer.core.urls import server_of_url

logger = logging.getLogger(__name__)


class QueueServerCore:
    """One shard of one crawl (see the module)."""

    def __init__(self, config: QueueServerConfig, clock: Callable[[], float] = time.time
                 ) -> None:
        self.config = config
        self._clock = clock
        crawl = config.crawl
        self.paths = crawl_paths(Path(config.directory), crawl.timestamp)
        Path(config.directory).mkdir(parents=True, exist_ok=True)
        self.spool = Spool(self.paths["inbox"])
        # the queue source and the inbox of the crawl's kind (crawler.core.queue_server.source)
        self.queue: QueueSource
        self.inbox: Inbox
        self.queue, self.inbox = open_source(config, self.paths["queue"], self.spool, clock)
        scores = scores_path(Path(config.directory).parent, crawl.timestamp)
        try:
            # link documents are stored as fetched; each build of a partition's files gives
            # them the anchor boost of the crawl's newest link scores
            self.index = IndexBundleWriter(
                self.paths["index"], config.bundle,
                crawl_parameters={"timestamp": crawl.timestamp, "name": crawl.name,
                                  "order": str(crawl.order), "server": config.server,
                                  "num_servers": config.num_servers},
                anchor=lambda: current_anchor_boost(scores))
        except BaseException:
            self.queue.abandon()  # just opened and checkpointed: nothing to save
            raise
        # finished partitions follow the crawl's newest link scores (one partition per step)
        self.orderer = IndexOrderer(self.paths["index"], scores, writer=self.index)
        self.retired = RetiredPublisher(self.queue, self.paths["index"])
        self.activity = ActivityLog()  # urls and hosts since the glue last took them
        self.hosts = HostBook(config.server, config.stall_drop_threshold)
        self.state = self._load_state()
        self._dirty = False
        self._last_refresh = clock()
        self._refresh_cost = 0.0  # seconds the last refresh took
        self._refreshed_with: str | None = None  # the score file's tag at the last refresh
        self._applier = BatchApplier(config, self.queue, self.index, self.hosts, self.activity,
                                     self.retired, clock, self._mark_dirty)

    # --- the state's tallies, as the glue and the admin read them --------------------------

    @property
    def counters(self) -> dict[str, int]:
        return self.state.counters

    @property
    def error_hosts(self) -> dict[str, int]:
        return self.state.error_hosts

    @property
    def host_stalls(self) -> dict[str, int]:
        return self.state.host_stalls

    @property
    def dropped_hosts(self) -> dict[str, str]:
        return self.state.dropped_hosts

    @property
    def page_tries(self) -> dict[str, int]:
        return self.state.page_tries

    @property
    def excluded_hosts(self) -> set[str]:
        return self.hosts.excluded_hosts

    # --- state --------------------------------------------------------------------------

    def _load_state(self) -> QueueServerState:
        try:
            data = json.loads(self.paths["state"].read_text())
        except (FileNotFoundError, ValueError):
            return QueueServerState.empty()
        return QueueServerState.from_json(data)

    def _save_state(self) -> None:
        # what the near-duplicate gate saved so far, kept with the counters (it is in memory)
        self.state.counters["near_duplicate_fetches_saved"] = \
            self._applier.near_duplicates.fetches_saved()
        tmp = self.paths["state"].with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps(self.state.to_json()))
            os.replace(tmp, self.paths["state"])
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def _mark_dirty(self) -> None:
        self._dirty = True

    # --- input --------------------------------------------------------------------------

    def owns(self, url: str) -> bool:
        return server_of_url(url, self.config.num_servers) == self.config.server

    def add_seeds(self, urls: Iterable[str]) -> int:
        """Queue this shard's seed urls (the others belong to other queue servers)."""
        return self.queue.add_seeds(u for u in urls if self.owns(u))

    def update_crawl(self, crawl: CrawlConfig) -> int:
        """The crawl as edited while it runs (issue 37; Yioop's fetchers pick up changed
        crawl parameters): its site rules, quotas, seed policies, limits and sleep window are
        in force from now on (the queue checkpoints them), and its new seeds this shard owns
        are queued; its order stays the one it started with. Returns how many seed urls were newly queued. Urls already queued that
        the new rules refuse are left out by the fetchers, which read the rules with each
        schedule (``crawler.core.fetcher.lanes.split_schedule``)."""
        old = self.config.crawl
        if crawl.timestamp != old.timestamp:
            raise ValueError(f"crawl {crawl.timestamp} is not the open crawl {old.timestamp}")
        crawl = replace(crawl, order=old.order)  # a running crawl keeps its order
        if crawl == old:
            return 0
        self.config = replace(self.config, crawl=crawl)
        self._applier.config = self.config
        self.queue.reconfigure(scheduler_config(self.config))
        known = {seed.url for seed in old.seeds}
        added = self.add_seeds(seed.url for seed in crawl.seeds if seed.url not in known)
        logger.info("queue server %d: crawl %s edited while running: %d new seed urls queued",
                    self.config.server, crawl.timestamp, added)
        return added

    def asleep(self) -> bool:
        """Whether the crawl's sleep window holds now (no schedules go out)."""
        window = self.config.crawl.sleep
        return window is not None and window.asleep(self._clock())

    def ingest(self, limit: int | None = 50, held_too: bool = False) -> int:
        """Apply received batches, oldest first; return how many were applied.

        A batch whose application fails with ``OSError`` (a full disk) stays in the inbox
        and the error is raised: the counters are as before that batch (and saved, if
        possible, with the batches applied before it), but the queue and the index may have
        taken part of it, so the caller must :meth:`abandon` this object and open a new one
        later, which applies the batch again (applying twice is harmless, see the module).
        The inbox gives a page's parts together (:class:`.page_parts.PageParts`), an archive
        crawl's batches in the order of their schedules
        (:class:`crawler.core.archive.ordering.OrderedInbox`). ``held_too``: the
        batches waiting for the rest of their page, or for their turn, all of them (the crawl
        stops).
        """
        applied = 0
        items = self.inbox.take_all_held() if held_too else self.inbox.take(limit)
        for item in items:
            before = self.state.copy()
            try:
                self._applier.apply(FetcherBatch.from_wire(json.loads(item.payload)),
                                    self.state)
            except (WireError, ValueError, KeyError, TypeError) as exc:
                logger.error("queue server %d: dropping malformed batch %s: %s",
                             self.config.server, item.path.name, exc)
                self.state.counters["bad_batches"] += 1
            except OSError:
                self.state = before
                if applied:
                    self._try_save_state()
                raise
            self.spool.done(item)
            applied += 1
        if applied:
            self._save_state()
        return applied

    def _try_save_state(self) -> None:
        try:
            self._save_state()
        except OSError as exc:
            logger.warning("queue server %d: counters not saved: %s", self.config.server, exc)

    # --- hosts: the dropped and excluded, the operator's overrides; the admin's activity ---

    def skip_hosts(self, schedule: Schedule) -> list[str]:
        """The dropped and excluded hosts among ``schedule``'s urls (the fetcher leaves them
        out)."""
        return self.hosts.skip_hosts(self.state, schedule)

    def apply_host_overrides(self, overrides: Iterable[tuple[str, float, bool]]) -> list[str]:
        """The operator's overrides ``(origin, minimum delay, excluded)`` of this crawl's
        hosts (all of them, as the admin holds them): those of hosts this queue server owns
        go to its queue source (``set_host_override``); an excluded host is also left out of
        the schedules already handed out that are handed out again. Returns the origins
        applied (owned here), changed or not."""
        return self.hosts.apply_overrides(overrides, self.owns, self.queue)

    def take_activity(self) -> Activity | None:
        """What happened to urls and hosts since the last take (:mod:`.activity`), the urls
        the crawl queue refused included; None when nothing did."""
        for reason, url in self.queue.take_refused():
            self.activity.refuse(reason, url)
        return self.activity.take(self._host_politeness)

    def _host_politeness(self, origin: str) -> tuple[float, bool, bool] | None:
        try:
            return self.queue.host_politeness(origin)
        except InvalidUrlError:
            return None

    # --- output -------------------------------------------------------------------------

    def maybe_refresh(self, force: bool = False) -> bool:
        """Make recently appended documents searchable: at most every refresh_seconds, and
        less often while refreshes are slow (see ``refresh_share``); the copies they replace
        (and pages now removed) leave search at the same time (:mod:`.recrawl`). A new link
        score file is a reason to refresh too: the active partition's link documents get
        its anchor boost (:mod:`indexer.core.partition.anchors`)."""
        now = self._clock()
        config = self.config
        interval = min(max(config.refresh_seconds, self._refresh_cost / config.refresh_share),
                       max(config.refresh_seconds, config.max_refresh_seconds))
        due = force or now - self._last_refresh >= interval
        if due and not self._dirty and self.index.active_documents:
            # new link scores: the active partition's anchor boost is rebuilt from them
            self._dirty = scores_tag(self.orderer.scores) != self._refreshed_with
        if (self._dirty or self.retired.pending) and due:
            started = time.perf_counter()
            self.retired.publish()  # before the new copies become searchable
            if self._dirty:
                self._refreshed_with = scores_tag(self.orderer.scores)
                self.index.refresh()
            self._refresh_cost = time.perf_counter() - started
            self._dirty = False
            self._last_refresh = now
            return True
        return False

    def maybe_reorder(self) -> ReorderResult | None:
        """Re-order one finished index partition by importance when link analysis has
        written newer scores than it is ordered by (:class:`IndexOrderer`)."""
        return self.orderer.step()

    def take_schedules(self, requester: str | None = None,
                       max_outstanding: int | None = None) -> list[Schedule]:
        """New (or timed-out) schedules, while fewer than max_outstanding are out; then, up to
        ``delayed_schedules`` more, schedules of only the urls freed crawl-delayed hosts had
        parked, so that such a host fetches on while the long schedules finish (its delay,
        not the other hosts' schedules, paces it; see :mod:`crawler.core.scheduler.ordering.
        orders`). None in the crawl's sleep window (:mod:`crawler.core.definition.sleep`).
        ``max_outstanding``: this call's limit instead of the configured one (several crawls
        sharing the fetchers take turns: :func:`crawler.core.queue_server.sharing.
        take_fairly`)."""
        if self.asleep():
            return []
        most = self.config.max_outstanding if max_outstanding is None else max_outstanding
        out = self._take_usual(requester, most)
        limit = most + self.config.delayed_schedules
        while self._schedules_out() < limit:
            schedule = self.queue.next_schedule(self._clock(), requester, unparked_only=True)
            if schedule is None or any(s.id == schedule.id for s in out):
                break
            out.append(schedule)
        return out

    def _take_usual(self, requester: str | None, most: int) -> list[Schedule]:
        out: list[Schedule] = []
        # At the limit, a timed-out schedule is still handed out again (one per call).
        while self._schedules_out() < most or (not out and self._has_expired()):
            schedule = self.queue.next_schedule(self._clock(), requester)
            if schedule is None or any(s.id == schedule.id for s in out):
                break
            out.append(schedule)
            if len(out) >= most:
                break
        return out

    def _held(self) -> int:
        """Received batches waiting: for the rest of their page, or (an archive crawl's) for
        their schedule's turn."""
        return self.inbox.pending()

    def schedules_out(self) -> int:
        """Schedules the fetchers are working on (see :meth:`_schedules_out`)."""
        return self._schedules_out()

    def _schedules_out(self) -> int:
        """Schedules the fetchers are working on: outstanding ones, but for an archive crawl's
        whose last batch is held for its turn (``Inbox.finished``; at most three times
        ``max_outstanding`` of those, so held batches stay bounded)."""
        out = len(self.queue.outstanding())
        return max(out - self.inbox.finished(), out - 3 * self.config.max_outstanding)

    def release_lost(self, claims: Mapping[str, str]) -> list[str]:
        """Hand out again, with the next :meth:`take_schedules`, the outstanding schedules no
        fetcher holds, by their ``claims`` (schedule id -> claim state, see
        :mod:`crawler.core.queue_server.claims`); returns their ids."""
        config = self.config
        lost = lost_schedules(self.queue.outstanding(), claims, self._clock(),
                              config.unclaimed_timeout, config.schedule_timeout)
        if lost:
            self.queue.release(lost)
        return lost

    def last_requests(self, schedule: Schedule) -> dict[str, float]:
        """For the schedule's crawl-delayed hosts, the latest time their previous requests
        could have been made (unknown after a restart: now, to be safe)."""
        return self.hosts.last_requests(schedule, self._clock())

    def _has_expired(self) -> bool:
        now = self._clock()
        return any(s.deadline <= now for s in self.queue.outstanding())

    def settled(self) -> bool:
        """:meth:`idle`, and then every document applied so far made searchable (a forced
        refresh when some are not yet). A crawl ends when all its queue servers have settled,
        and its link analysis starts at once: it must read every document, the last ones
        included (without this, a refresh spaced out by ``refresh_share`` on a busy machine
        left the pages fetched last out of the web graph). With page recrawl on, a queue
        server whose urls wait to be due again never settles: the crawl runs until it is
        stopped, as Yioop's crawls with page recrawl do."""
        if not self.idle():
            return False
        self.maybe_refresh(force=True)
        return self.queue.next_revisit_at() is None

    def idle(self) -> bool:
        """Nothing queued, due for a revisit, waiting, handed out or received but
        unapplied. Once a crawl's max_pages are scheduled, urls still queued or waiting no
        longer count: they will not be scheduled (robots.txt urls still are)."""
        due = self.queue.next_revisit_at()
        if due is not None and due <= self._clock():
            return False
        stats = self.queue.stats()
        max_pages = self.queue.config.max_pages
        if max_pages and stats.scheduled >= max_pages:
            pending = stats.robots_txt_queued
        else:
            pending = stats.queued + stats.waiting_robots + stats.crawl_delayed
        return (pending == 0 and stats.outstanding_schedules == 0
                and self.spool.pending("batch") == 0 and self._held() == 0)

    def stats(self) -> dict[str, Any]:
        top = sorted(self.error_hosts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        dropped = sorted(self.dropped_hosts.items())[:20]
        state = self.state
        extra = self.queue.extra_stats(state.skipped)  # an archive's: records skipped...
        return {**self.counters, **self.queue.stats().as_dict(), **extra,
                "inbox": self.spool.pending("batch") + self._held(), "error_hosts": dict(top),
                "asleep": self.asleep(),
                "stalled_hosts": len(self.host_stalls), "dropped_hosts": dict(dropped),
                "robots_failures": state.robots_failures.to_json(),
                # failed page downloads by kind (a *_by_kind mapping: /metrics exports it)
                "fetch_errors_by_kind": state.fetch_errors.counts(),
                "fetch_error_examples": state.fetch_errors.examples(),
                # the copies' ages and the urls by their last visit
                # (crawler.core.queue_server.freshness)
                "freshness": self.queue.freshness(),
                # downloads the near-duplicate gate saved (crawler.core.queue_server.near_duplicates)
                "near_duplicate_fetches_saved": self._applier.near_duplicates.fetches_saved()}

    def abandon(self) -> None:
        """Release the queue and the index without writing, after a call raised ``OSError``
        half-way (a full disk): they recover on the next open from what is on disk, as after
        a kill -9, and their temporary files are removed now. Counters keep their last saved
        values; received batches not applied stay in the inbox."""
        try:
            self.index.abandon()
        finally:
            try:
                self.queue.abandon()
            finally:
                self.paths["state"].with_suffix(".tmp").unlink(missing_ok=True)

    def close(self, finish: bool = False) -> None:
        """Save and close. ``finish``: the crawl has ended, so its active index partition is
        closed (a resumed crawl starts a new one), which lets it be re-ordered like the
        others once link analysis has scored the crawl."""
        try:
            if finish and self._held():
                self.ingest(limit=None, held_too=True)  # a stop: what was done is kept
            self.retired.publish()
            if finish:
                self.index.close_partition()
            elif self._dirty:
                self.index.refresh()
            self._save_state()
        finally:
            try:
                self.index.close()
            finally:
                self.queue.close()
