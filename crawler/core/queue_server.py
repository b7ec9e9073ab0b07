"""A queue server: one shard of one crawl — its crawl queue (Scheduler) and its index (Indexer).

Layer: ``crawler.core``. The process around it (``manage.py run_queue_server``) reads the crawl
from the database, sends the schedules this produces to the fetchers, and reports counters; the
queue server's Celery worker writes what fetchers ship into the spool. This class only works on
disk, so it is testable without Django, Celery or a network.

Work directory of queue server n (``WORK_DIRECTORY/qs<n>``): its crawl queue, its
IndexDocumentBundle, the spool of received batches and its counters, laid out as
:mod:`indexer.core.runtime.workdir` says.

Call order: ``QueueServerCore(config)``, then ``add_seeds`` (at crawl start), then repeatedly
``ingest()``, ``maybe_refresh()``, ``maybe_reorder()``, ``release_lost()`` (now and then, with
the fetchers' claims), ``apply_host_overrides()`` (the operator's, now and then),
``take_activity()`` (what happened to urls and hosts, for the admin: :mod:`.activity`) and
``take_schedules()``; ``close()`` at the end (``close(finish=True)``
when the crawl has ended: its last partition is finished, so that it too can be re-ordered by
importance, see :mod:`crawler.core.index_order`). Every batch is applied and only then removed
from the spool, so a kill -9 at any moment loses nothing (a batch applied twice is harmless:
the queue's Bloom filter drops repeated urls and query-time grouping folds a repeated document
into one result). After any call raised ``OSError`` (a full disk), call
``abandon()`` instead of ``close()``: it recovers as a kill -9 would, and the batch that failed
is still in the inbox.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexer.core.bundle.reorder import ReorderResult
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.documents.encoding import EncodedDocument, scale_regions
from indexer.core.runtime.workdir import crawl_paths, scores_path
from indexer.core.urls import server_of_url

from .activity import Activity, ActivityLog
from .archive.ordering import OrderedInbox
from .archive.queue import ArchiveQueue, ArchiveQueueConfig
from .archive.skipped import SkippedRecords
from .batch import FetcherBatch
from .claims import lost_schedules
from .crawl import CrawlConfig
from .fetch_error_kinds import FetchErrorKinds
from .index_order import IndexOrderer
from .indexing import anchor_boosts, boost_link_documents, crawl_link_scores
from .page_parts import PageParts
from .recrawl import RetiredPublisher, replaces_active_copy, visit_rows
from .robots_failures import RobotsFailures
from .scheduler import CrawlQueue, Schedule, SchedulerConfig
from .scheduler.errors import InvalidUrlError
from .spool import Spool
from .urls import origin_of
from .visits import Visit
from .wire import (
    WireError,
    deferred_from_wire,
    discovered_from_wire,
    document_from_wire,
    encoded_document_from_wire,
    is_encoded_document,
)

logger = logging.getLogger(__name__)

COUNTERS = ("pages_fetched", "fetch_errors", "bytes_downloaded", "documents_indexed",
            "batches", "bad_batches", "deferred_urls", "dropped_host_urls", "abandoned_urls")
# A url requested this many times and given up on each time (a page that never finishes by its
# deadline) is not requeued again: the first try and two retries.
MAX_PAGE_TRIES = 3


def _boost_encoded(items: list[EncodedDocument], scores: Any) -> list[EncodedDocument]:
    """:func:`~crawler.core.indexing.boost_link_documents` for encoded documents: a link
    document's region weights times its source page's anchor boost."""
    if scores is None:
        return items
    rows = [i for i, item in enumerate(items) if item.is_link and item.source]
    if not rows:
        return items
    out = list(items)
    boosts = anchor_boosts([items[i].source for i in rows], scores).tolist()
    for i, boost in zip(rows, boosts, strict=True):
        if boost != 1.0:
            out[i] = scale_regions(items[i], boost)
    return out


@dataclass(frozen=True, slots=True)
class QueueServerConfig:
    server: int
    num_servers: int
    directory: Path
    crawl: CrawlConfig
    refresh_seconds: float = 10.0       # a fetched page is searchable within about this long
    # A refresh rebuilds the active partition's files, so it costs more as the partition
    # grows: refreshes are spaced so that they take at most this share of the time (their
    # cost was a fifth of a one-process crawl's main thread at 0.15), but never
    # more than max_refresh_seconds apart (a fetched page is searchable within a minute).
    refresh_share: float = 0.05
    max_refresh_seconds: float = 40.0
    # a host whose downloads stalled this many schedules is dropped for the rest of the crawl
    # (see crawler.core.fetch.hostwatch)
    stall_drop_threshold: int = 3
    max_outstanding: int = 4            # schedules handed out and not yet acknowledged
    schedule_size: int = 5000           # DOWNLOAD_SIZE_INTERVAL
    schedule_timeout: float = 1800.0    # a schedule not acknowledged by then is handed out again
    # the name robots.txt groups address the crawler by (its user agent's first word)
    robots_agent: str = "YioopyBot"
    # a schedule no fetcher claimed this long after it was handed out is handed out again
    # (see crawler.core.claims)
    unclaimed_timeout: float = 60.0
    # the queue server decides when to refresh (maybe_refresh), not the number of documents
    bundle: BundleConfig = field(default_factory=lambda: BundleConfig(refresh_every_docs=0))
    # how long a day of page_recrawl_days is (tests and demonstrations shorten it)
    recrawl_day_seconds: float = 86400.0

    def __post_init__(self) -> None:
        if not 0 <= self.server < self.num_servers:
            raise ValueError(f"server {self.server} is not in 0..{self.num_servers - 1}")


class QueueServerCore:
    def __init__(self, config: QueueServerConfig, clock: Callable[[], float] = time.time
                 ) -> None:
        self.config = config
        self._clock = clock
        crawl = config.crawl
        self.paths = crawl_paths(Path(config.directory), crawl.timestamp)
        Path(config.directory).mkdir(parents=True, exist_ok=True)
        self.spool = Spool(self.paths["inbox"])
        scheduler = SchedulerConfig.from_crawl(
            crawl, schedule_size=config.schedule_size, schedule_timeout=config.schedule_timeout,
            user_agent=config.robots_agent, recrawl_day_seconds=config.recrawl_day_seconds)
        # an archive crawl's queue hands out record pointers (crawler.core.archive), and its
        # batches are applied in the order of their schedules (the archive's order)
        self.queue: CrawlQueue | ArchiveQueue
        self.order: OrderedInbox | None = None
        # a web crawl's pages shipped in parts are applied whole (crawler.core.page_parts)
        self.parts = PageParts(self.spool, lambda: [s.id for s in self.queue.outstanding()])
        if crawl.archive is not None:
            self.queue = ArchiveQueue.open(self.paths["queue"], crawl.archive, ArchiveQueueConfig(
                config.server, config.num_servers, crawl.timestamp, config.schedule_size,
                config.schedule_timeout, crawl.max_pages), clock=clock)
            self.order = OrderedInbox(self.spool, self.queue)
        else:
            self.queue = CrawlQueue.open(self.paths["queue"], scheduler, clock=clock)
        try:
            self.index = IndexBundleWriter(
                self.paths["index"], config.bundle,
                crawl_parameters={"timestamp": crawl.timestamp, "name": crawl.name,
                                  "order": str(crawl.order), "server": config.server,
                                  "num_servers": config.num_servers})
        except BaseException:
            self.queue.abandon()  # just opened and checkpointed: nothing to save
            raise
        # finished partitions follow the crawl's newest link scores (one partition per step)
        self.orderer = IndexOrderer(
            self.paths["index"], scores_path(Path(config.directory).parent, crawl.timestamp),
            writer=self.index)
        self.retired = RetiredPublisher(self.queue, self.paths["index"])
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.error_hosts: dict[str, int] = {}  # origin -> fetch errors, for the dashboard
        self.host_stalls: dict[str, int] = {}  # origin -> schedules it stalled
        self.dropped_hosts: dict[str, str] = {}  # origin -> why it was dropped
        self.page_tries: dict[str, int] = {}  # url -> times requested and abandoned
        self.robots_failures = RobotsFailures()  # robots.txt answers, failures by kind
        self.activity = ActivityLog()  # urls and hosts since the glue last took them
        self.excluded_hosts: set[str] = set()  # origins the operator excluded
        self.fetch_errors = FetchErrorKinds()  # failed page downloads by kind, with examples
        self.skipped = SkippedRecords()  # archive records the fetchers skipped, by reason
        self._load_state()
        self._dirty = False
        self._last_refresh = clock()
        self._refresh_cost = 0.0  # seconds the last refresh took
        # origin -> when the last schedule holding it was acknowledged: a crawl-delayed host's
        # last request was no later, so its next schedule waits from there.
        self._delayed_last: dict[str, float] = {}

    # --- state --------------------------------------------------------------------------

    def _load_state(self) -> None:
        try:
            data = json.loads(self.paths["state"].read_text())
        except (FileNotFoundError, ValueError):
            return
        for key in COUNTERS:
            self.counters[key] = int(data.get(key, 0))
        self.error_hosts = {str(k): int(v) for k, v in data.get("error_hosts", {}).items()}
        self.host_stalls = {str(k): int(v) for k, v in data.get("host_stalls", {}).items()}
        self.dropped_hosts = {str(k): str(v) for k, v in data.get("dropped_hosts", {}).items()}
        self.page_tries = {str(k): int(v) for k, v in data.get("page_tries", {}).items()}
        self.robots_failures = RobotsFailures.from_json(data.get("robots_failures"))
        self.fetch_errors = FetchErrorKinds.from_json(data.get("fetch_error_kinds"))
        self.skipped = SkippedRecords.from_json(data.get("archive_skipped"))

    def _save_state(self) -> None:
        tmp = self.paths["state"].with_suffix(".tmp")
        top = dict(sorted(self.error_hosts.items(), key=lambda kv: -kv[1])[:1000])
        try:
            tmp.write_text(json.dumps({**self.counters, "error_hosts": top,
                                       "host_stalls": self.host_stalls,
                                       "dropped_hosts": self.dropped_hosts,
                                       "page_tries": self.page_tries,
                                       "robots_failures": self.robots_failures.to_json(),
                                       "fetch_error_kinds": self.fetch_errors.to_json(),
                                       "archive_skipped": self.skipped.to_json()}))
            os.replace(tmp, self.paths["state"])
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def _snapshot(self) -> tuple:
        return (dict(self.counters), dict(self.error_hosts), dict(self.host_stalls),
                dict(self.dropped_hosts), dict(self.page_tries),
                RobotsFailures.from_json(self.robots_failures.to_json()),
                FetchErrorKinds.from_json(self.fetch_errors.to_json()),
                SkippedRecords.from_json(self.skipped.to_json()))

    def _restore(self, snapshot: tuple) -> None:
        (self.counters, self.error_hosts, self.host_stalls, self.dropped_hosts,
         self.page_tries, self.robots_failures, self.fetch_errors, self.skipped) = snapshot

    # --- input --------------------------------------------------------------------------

    def owns(self, url: str) -> bool:
        return server_of_url(url, self.config.num_servers) == self.config.server

    def add_seeds(self, urls: Iterable[str]) -> int:
        """Queue this shard's seed urls (the others belong to other queue servers)."""
        return self.queue.add_seeds(u for u in urls if self.owns(u))

    def ingest(self, limit: int | None = 50, held_too: bool = False) -> int:
        """Apply received batches, oldest first; return how many were applied.

        A batch whose application fails with ``OSError`` (a full disk) stays in the inbox
        and the error is raised: the counters are as before that batch (and saved, if
        possible, with the batches applied before it), but the queue and the index may have
        taken part of it, so the caller must :meth:`abandon` this object and open a new one
        later, which applies the batch again (applying twice is harmless, see the module).
        A page's parts are applied together (:class:`PageParts`); an archive crawl's batches
        in the order of their schedules (:class:`OrderedInbox`). ``held_too``: the batches
        waiting for the rest of their page, or for their turn, all of them (the crawl stops).
        """
        applied = 0
        if self.order is None:
            items = self.parts.take_all() if held_too else self.parts.take(limit)
        else:
            items = self.order.take_all_held() if held_too else self.order.take(limit)
        for item in items:
            before = self._snapshot()
            try:
                self._apply(FetcherBatch.from_wire(json.loads(item.payload)))
            except (WireError, ValueError, KeyError, TypeError) as exc:
                logger.error("queue server %d: dropping malformed batch %s: %s",
                             self.config.server, item.path.name, exc)
                self.counters["bad_batches"] += 1
            except OSError:
                self._restore(before)
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

    def _without_spent_tries(self, deferred: list[Any], abandoned: Sequence[str]) -> list[Any]:
        """Count the tries of the urls the fetcher requested and gave up on; leave out of
        ``deferred`` those tried :data:`MAX_PAGE_TRIES` times."""
        spent = set()
        for url in abandoned:
            tries = self.page_tries[url] = self.page_tries.get(url, 0) + 1
            if tries >= MAX_PAGE_TRIES:
                spent.add(url)
        if not spent:
            return deferred
        kept = [d for d in deferred if d[0] not in spent]
        self.counters["abandoned_urls"] += len(deferred) - len(kept)
        for url in spent:
            logger.warning("queue server %d: %s given up after %d tries that did not finish",
                           self.config.server, url, self.page_tries[url])
        return kept

    def _apply(self, batch: FetcherBatch) -> None:
        crawl = self.config.crawl
        if batch.crawl != crawl.timestamp:
            raise WireError(f"batch of crawl {batch.crawl} sent to crawl {crawl.timestamp}")
        if batch.server is not None and batch.server != self.config.server:
            raise WireError(f"batch for queue server {batch.server} sent to "
                            f"{self.config.server}")
        encoded = [encoded_document_from_wire(d) for d in batch.docs if is_encoded_document(d)]
        docs = [document_from_wire(d) for d in batch.docs if not is_encoded_document(d)]
        # anchor fields: link documents weigh their source's link score once the crawl has one
        scores = crawl_link_scores(Path(self.config.directory).parent, crawl.timestamp)
        docs = boost_link_documents(docs, scores)
        encoded = _boost_encoded(encoded, scores)
        discovered = [discovered_from_wire(r) for r in batch.discovered]
        deferred = [deferred_from_wire(r) for r in batch.deferred]
        visits = [Visit.from_wire(r) for r in batch.fetched]
        hopeless = None if batch.hopeless is None else set(batch.hopeless)
        for origin, count in batch.stalls.items():
            self._record_stalls(origin, count, counts=hopeless is None or origin in hopeless)
        self.activity.add_log(batch.log)
        self.activity.add_refused(batch.refused)
        if self.dropped_hosts:
            for d in discovered:
                if origin_of(d.url) in self.dropped_hosts:
                    self.activity.refuse("host_dropped", d.url)
            kept = [d for d in discovered if origin_of(d.url) not in self.dropped_hosts]
            kept_deferred = [d for d in deferred if origin_of(d[0]) not in self.dropped_hosts]
            self.counters["dropped_host_urls"] += (len(discovered) - len(kept)
                                                   + len(deferred) - len(kept_deferred))
            discovered, deferred = kept, kept_deferred
        if replaces_active_copy(self.queue, [*(e.doc_id for e in encoded),
                                             *(d.doc_id for d in docs)],
                                self.index.active_partition):
            self.index.close_partition()  # see crawler.core.recrawl
        partition_before = self.index.active_partition
        if encoded:
            self.index.append_encoded(encoded)
        if docs:
            self.index.append(docs)
        if encoded or docs:
            self.counters["documents_indexed"] += len(encoded) + len(docs)
            self._dirty = True
        for robots in batch.robots:
            origin, status = str(robots["origin"]), int(robots.get("status", 0))
            self.queue.add_robots(origin, robots.get("body"), status)
            kind = self.robots_failures.record(f"{origin}/robots.txt", status,
                                               robots.get("error"), robots.get("message"))
            self.activity.robots(origin, status, robots.get("body"), robots.get("error"),
                                 robots.get("message"))
            if kind is not None:
                logger.warning("queue server %d: robots.txt of %s failed (%s): host disallowed",
                               self.config.server, origin, kind)
        if discovered:
            self.queue.add_discovered(discovered)
        deferred = self._without_spent_tries(deferred, batch.abandoned)
        if deferred:
            self.queue.requeue(deferred)
            self.counters["deferred_urls"] += len(deferred)
        for origin, count in batch.host_errors.items():
            self.queue.report_host_errors(origin, count)
            self.error_hosts[origin] = self.error_hosts.get(origin, 0) + count
        if visits:
            self.queue.record_visits(visit_rows(visits, self.index.active_partition))
            if self.index.active_partition != partition_before:  # closed ones are searchable
                self.retired.publish()
        for key, value in batch.counters.items():
            if key in self.counters:
                self.counters[key] += value
        self.fetch_errors.add(batch.errors)
        self.skipped.add(batch.skipped)
        self.counters["batches"] += 1
        if batch.done and batch.schedule:
            schedule_id = batch.schedule
            now = self._clock()
            for schedule in self.queue.outstanding():
                if schedule.id == schedule_id:
                    for entry in schedule.entries:
                        if entry.crawl_delay > 0:
                            self._delayed_last[origin_of(entry.url)] = now
            self.queue.acknowledge(schedule_id)

    def _record_stalls(self, origin: str, count: int, counts: bool = True) -> None:
        """A fetcher's schedule saw ``count`` stalled downloads of ``origin`` (fetchers report
        a schedule's stalls once, at its end): they show among the error hosts, and a host
        that stalled ``stall_drop_threshold`` schedules (``counts``: none of its downloads in
        the schedule came in time) is dropped for the rest of the crawl."""
        if count <= 0:
            return
        self.error_hosts[origin] = self.error_hosts.get(origin, 0) + count
        if not counts:
            return
        stalled = self.host_stalls.get(origin, 0) + 1
        self.host_stalls[origin] = stalled
        if stalled >= self.config.stall_drop_threshold and origin not in self.dropped_hosts:
            self.dropped_hosts[origin] = f"stalled {stalled} schedules"
            logger.warning("queue server %d: host %s dropped for this crawl: it stalled %d "
                           "schedules", self.config.server, origin, stalled)

    def skip_hosts(self, schedule: Schedule) -> list[str]:
        """The dropped and excluded hosts among ``schedule``'s urls (the fetcher leaves them
        out)."""
        if not self.dropped_hosts and not self.excluded_hosts:
            return []
        return sorted({origin_of(e.url) for e in schedule.entries}
                      & (self.dropped_hosts.keys() | self.excluded_hosts))

    # --- the operator's host overrides, and the activity the admin shows ------------------

    def apply_host_overrides(self, overrides: Iterable[tuple[str, float, bool]]) -> list[str]:
        """The operator's overrides ``(origin, minimum delay, excluded)`` of this crawl's
        hosts (all of them, as the admin holds them): those of hosts this queue server owns
        go to its crawl queue (:meth:`CrawlQueue.set_host_override`); an excluded host is
        also left out of the schedules already handed out that are handed out again.
        Returns the origins applied (owned here), changed or not."""
        applied, excluded = [], set()
        for origin, min_delay, is_excluded in overrides:
            if not self.owns(origin):
                continue
            self.queue.set_host_override(origin, min_delay, is_excluded)
            applied.append(origin)
            if is_excluded:
                excluded.add(origin_of(origin))
        self.excluded_hosts = excluded
        return applied

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
        (and pages now removed) leave search at the same time (:mod:`.recrawl`)."""
        now = self._clock()
        config = self.config
        interval = min(max(config.refresh_seconds, self._refresh_cost / config.refresh_share),
                       max(config.refresh_seconds, config.max_refresh_seconds))
        if (self._dirty or self.retired.pending) and (
                force or now - self._last_refresh >= interval):
            started = time.perf_counter()
            self.retired.publish()  # before the new copies become searchable
            if self._dirty:
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

    def take_schedules(self, requester: str | None = None) -> list[Schedule]:
        """New (or timed-out) schedules, while fewer than max_outstanding are out."""
        out: list[Schedule] = []
        # At the limit, a timed-out schedule is still handed out again (one per call).
        while self._schedules_out() < self.config.max_outstanding or (
                not out and self._has_expired()):
            schedule = self.queue.next_schedule(self._clock(), requester)
            if schedule is None or any(s.id == schedule.id for s in out):
                break
            out.append(schedule)
            if len(out) >= self.config.max_outstanding:
                break
        return out

    def _held(self) -> int:
        """Received batches waiting: for the rest of their page, or (an archive crawl's) for
        their schedule's turn."""
        return self.parts.pending() if self.order is None else self.order.pending()

    def _schedules_out(self) -> int:
        """Schedules the fetchers are working on: outstanding ones, but for an archive crawl's
        whose last batch is held for its turn (:class:`OrderedInbox`; at most three times
        ``max_outstanding`` of those, so held batches stay bounded)."""
        out = len(self.queue.outstanding())
        if self.order is None:
            return out
        return max(out - self.order.finished(), out - 3 * self.config.max_outstanding)

    def release_lost(self, claims: Mapping[str, str]) -> list[str]:
        """Hand out again, with the next :meth:`take_schedules`, the outstanding schedules no
        fetcher holds, by their ``claims`` (schedule id -> claim state, see
        :mod:`crawler.core.claims`); returns their ids."""
        config = self.config
        lost = lost_schedules(self.queue.outstanding(), claims, self._clock(),
                              config.unclaimed_timeout, config.schedule_timeout)
        if lost:
            self.queue.release(lost)
        return lost

    def last_requests(self, schedule: Schedule) -> dict[str, float]:
        """For the schedule's crawl-delayed hosts, the latest time their previous requests
        could have been made (unknown after a restart: now, to be safe)."""
        now = self._clock()
        return {origin_of(e.url): self._delayed_last.get(origin_of(e.url), now)
                for e in schedule.entries if e.crawl_delay > 0}

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
        archive = {}
        if isinstance(self.queue, ArchiveQueue):  # its records skipped: listing and fetchers
            archive = self.queue.archive_stats()
            total = SkippedRecords.from_json(archive["archive_skipped"])
            total.add(self.skipped)
            archive["archive_skipped"] = total.to_json()
            archive["archive_skipped_by_kind"] = total.counts()  # /metrics exports it
        return {**self.counters, **self.queue.stats().as_dict(), **archive,
                "inbox": self.spool.pending("batch") + self._held(), "error_hosts": dict(top),
                "stalled_hosts": len(self.host_stalls), "dropped_hosts": dict(dropped),
                "robots_failures": self.robots_failures.to_json(),
                # failed page downloads by kind (a *_by_kind mapping: /metrics exports it)
                "fetch_errors_by_kind": self.fetch_errors.counts(),
                "fetch_error_examples": self.fetch_errors.examples(),
                # the copies' ages and the urls by their last visit (crawler.core.freshness)
                "freshness": self.queue.freshness()}

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
