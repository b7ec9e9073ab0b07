"""The queue server's crawl queue: what to fetch next, kept on disk (the seed's Scheduler and
its QueueBundle).

Layer: ``crawler.core.scheduler`` (pure Python). The queue-server process (``run_queue_server``)
owns one :class:`CrawlQueue` per crawl, feeds it what fetchers send (discovered urls, robots.txt
data, host errors, ETag/Expires) and hands its schedules to fetchers. Urls are expected in the
canonical form of :func:`crawler.core.urls.canonicalize`; site rules are
:class:`crawler.core.definition.siterules.SiteRules`. The queue orchestrates one module per concern:

* :mod:`.record` — a queued url and its url-file line; :mod:`.lanes` — the url files;
* :mod:`.politeness` — per-host robots rules and delays, urls waiting for robots.txt and urls
  parked while a crawl-delayed host is busy;
* :mod:`.ordering.orders` — the crawl order, a strategy (host budgeting, breadth-first,
  OPIC);
* :mod:`.needy_lane` — urls matching needy queries, scheduled first;
* :mod:`.builder` — fills one schedule; :mod:`.outstanding` — schedules handed out;
* :mod:`.machine` — the calls applied to all of that (deterministically, so the journal can
  replay them); :mod:`.durable.checkpoints`, :mod:`.durable.state`, :mod:`.durable.journal` —
  durability.

Durability and recovery. Every public mutator validates its input, applies it in memory (url
files are appended without fsync), then appends the call to the journal and fdatasyncs before
returning; so anything a call accepted survives a kill -9, and the caller may acknowledge its
message. Applying a call is deterministic (times come from the journal record, hashes are md5,
gzip members have mtime 0), so recovery = load the last checkpoint, cut url files back, replay
the journal (:mod:`.durable.checkpoints`). A checkpoint is written when the journal passes
``checkpoint_journal_bytes``, after recovery, and at :meth:`CrawlQueue.close`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from crawler.core.definition import needy as needy_mod
from crawler.core.definition import policy as pol
from crawler.core.queue_server.freshness import freshness_report
from crawler.core.scheduler.config import SchedulerConfig
from crawler.core.scheduler.durable.checkpoints import CheckpointStore, lock_directory
from crawler.core.scheduler.durable.journal import JournalWriter, read_journal
from crawler.core.scheduler.durable.state import encode_rules
from crawler.core.scheduler.errors import InvalidUrlError, QueueClosedError, SchedulerConfigError
from crawler.core.scheduler.lanes import LaneContext
from crawler.core.scheduler.machine import QueueMachine
from crawler.core.scheduler.ordering.formulas import cld_hash, split_origin
from crawler.core.scheduler.record import DEFAULT_POLICY, LinkItem, clean_anchor
from crawler.core.scheduler.revisits import UrlVisit, VisitRow
from crawler.core.scheduler.robots import RobotsRules, rules_for_status
from crawler.core.scheduler.values import DiscoveredUrl, QueueStats, Schedule
from indexer.core.urls import company_level_domain

logger = logging.getLogger(__name__)


class CrawlQueue:
    """The crawl queue of one queue server for one crawl. Not thread-safe: one caller at a
    time (the queue-server loop). Open with :meth:`open`; call :meth:`close` (or use ``with``)
    to checkpoint and release the directory lock. The web crawl's
    :class:`crawler.core.queue_server.source.QueueSource`.

    Invariants: a crawl-delayed host has at most one outstanding schedule and at most
    ``ceil(delayed_schedule_seconds / delay)`` urls in it (:mod:`.builder`); a url handed out
    in a schedule is handed out again only in that same schedule (:mod:`.outstanding`)."""

    # -- opening and closing ----------------------------------------------------------------

    def __init__(self, root: Path, config: SchedulerConfig, clock: Callable[[], float],
                 lock_fd: int) -> None:
        self.root = root
        self._clock = clock
        self._lock_fd = lock_fd
        self._ctx = LaneContext(root, config.url_buffer, config.max_file_bytes)
        self._store = CheckpointStore(root)
        self._closed = False
        self._journal: JournalWriter | None = None
        self._gen = 0
        self._m = QueueMachine(self._ctx, config)

    @classmethod
    def open(cls, path: str | os.PathLike[str], config: SchedulerConfig, *,
             clock: Callable[[], float] = time.time) -> CrawlQueue:
        """Open (or create) the queue rooted at ``path``. An existing queue is recovered from
        its last checkpoint and journal, then checkpointed with ``config`` (the crawl order of
        an existing queue cannot change; limits and rules can)."""
        root = Path(path)
        lock_fd = lock_directory(root)
        queue: CrawlQueue | None = None
        try:
            queue = cls(root, config, clock, lock_fd)
            queue._start()
        except BaseException:
            if queue is None:
                os.close(lock_fd)
            else:
                queue.abandon()  # releases the lock, removes a failed checkpoint's files
            raise
        return queue

    def _start(self) -> None:
        gen = self._store.current()
        if gen is None:
            logger.info("crawl queue %s: new (order %s)", self.root, self._m.cfg.order.value)
            self._checkpoint()
            return
        wanted = self._m.cfg
        self._m.restore(*self._store.read(gen))
        self._gen = gen
        if self._m.cfg.order is not wanted.order:
            raise SchedulerConfigError(
                f"queue {self.root} was created for order {self._m.cfg.order.value}, "
                f"not {wanted.order.value}")
        committed: dict[str, int] = {}
        for lane in self._m.lanes():
            committed.update((str(rel), int(length)) for rel, length in lane.files)
        self._store.clean_url_files(committed)
        self._m.replaying = True
        replayed = 0
        try:
            for record in read_journal(self._store.journal_path(gen)):
                self._m.dispatch(record)
                replayed += 1
        finally:
            self._m.replaying = False
        self._m.set_config(wanted)
        logger.info("crawl queue %s: recovered generation %d, replayed %d calls",
                    self.root, gen, replayed)
        self._checkpoint()

    def close(self) -> None:
        """Checkpoint and release the lock. The queue reopens where it stopped."""
        if self._closed:
            return
        self._checkpoint()
        if self._journal is not None:
            self._journal.close()
        os.close(self._lock_fd)
        self._closed = True

    def abandon(self) -> None:
        """Release the lock without a checkpoint, after a call failed half-way (a write
        that found the disk full): what is in memory may be ahead of the disk, so it is
        dropped, and the next :meth:`open` recovers from the last checkpoint and the journal
        exactly as after a kill -9 (the failed call never returned, so nothing it accepted
        was acknowledged). Temporary files of a failed checkpoint are removed now, so a full
        disk gets their space back at once."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._journal is not None:
                self._journal.close()
            self._store.remove_temporaries()
        finally:
            os.close(self._lock_fd)

    def __enter__(self) -> CrawlQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def config(self) -> SchedulerConfig:
        return self._m.cfg

    def reconfigure(self, config: SchedulerConfig) -> bool:
        """Put ``config`` in force from now on (the crawl's parameters edited while it runs:
        site rules, quotas, seed policies, limits; not its order): checkpointed at once, so
        that a restart replays the journal under the configuration it was written with.
        False (nothing written) when it is the configuration in force."""
        self._check_open()
        if config == self._m.cfg:
            return False
        if config.order is not self._m.cfg.order:
            raise SchedulerConfigError(f"a crawl's order cannot change while it runs "
                                       f"({self._m.cfg.order.value}, not {config.order.value})")
        self._m.set_config(config)
        self._checkpoint()
        return True

    # -- public calls -----------------------------------------------------------------------

    def add_seeds(self, urls: Iterable[str]) -> int:
        """Queue the crawl's seed urls (depth 0, weight 0), each under its policy from the
        configuration's ``seed_policies`` (default when not listed). In OPIC order the seeds of
        one call share one unit of cash. Returns how many urls were newly accepted."""
        unique = list(dict.fromkeys(urls))
        share = 1.0 / len(unique) if unique else 0.0
        policies = {url: pol.CODE[pol.parse_policy(name)]
                    for url, name in self._m.cfg.seed_policies}
        items = [LinkItem(url, 0, 0, "", 0.0, 0, False, True, share,
                          policies.get(url, DEFAULT_POLICY), 0, "").to_journal()
                 for url in unique]
        return self._call(("add", self._now(), items))

    def add_discovered(self, batch: Iterable[DiscoveredUrl]) -> int:
        """Queue urls fetchers discovered. Invalid urls, urls past the depth limit, urls the
        site rules refuse and urls already queued are dropped (counted in :meth:`stats`).
        Returns how many urls were newly accepted. Durable when it returns."""
        items: list[tuple[Any, ...]] = []
        for found in batch:
            source_cld = found.source_cld
            if not source_cld and found.source_url:
                try:
                    source_cld = company_level_domain(split_origin(found.source_url)[1])
                except InvalidUrlError:
                    source_cld = ""
            try:
                code = pol.CODE[pol.parse_policy(found.policy)]
            except ValueError as exc:
                raise InvalidUrlError(f"{found.url[:200]}: {exc}") from None
            items.append(LinkItem(
                found.url, int(found.depth), int(found.link_index), source_cld,
                float(found.source_weight), int(found.source_tier), bool(found.is_sitemap),
                bool(found.is_html), float(found.opic_cash), code,
                max(0, int(found.policy_depth)), clean_anchor(found.anchor_text)).to_journal())
        return self._call(("add", self._now(), items))

    def set_needy_queries(self, queries: Iterable[needy_mod.NeedyQuery]) -> bool:
        """Score urls against these needy queries from now on (replacing the previous ones;
        an empty list switches needy scoring off). The needy lane is rescored. False (and
        nothing journaled) when the queries did not change."""
        rows = tuple(sorted((str(q.text), float(q.frequency), float(q.relevance))
                            for q in queries))
        needy_mod.NeedyIndex([needy_mod.NeedyQuery(*row) for row in rows])  # validate
        self._check_open()
        if rows == self._m.needy.queries:
            return False
        self._call(("needy", self._now(), rows))
        return True

    def add_robots(self, host: str, rules: RobotsRules | str | bytes | None,
                   status: int = 200) -> None:
        """Robots data for ``host`` — an origin ``scheme://host[:port]`` or any url on it (the
        robots.txt url itself will do). ``rules`` is the robots.txt text or parsed rules;
        ``status`` the HTTP status of the robots.txt fetch (0 for a failure without one).
        Waiting urls of the host are filtered by the rules and released into UrlQueue."""
        origin = self._origin(host)
        resolved = rules_for_status(rules, status, user_agent=self._m.cfg.user_agent,
                                    max_crawl_delay=self._m.cfg.max_crawl_delay)
        encode_rules(resolved)  # refuse rules the state file cannot keep, before journaling
        self._call(("robots", self._now(), origin, resolved))

    def report_host_errors(self, host: str, count: int) -> None:
        """A fetcher saw ``count`` errors for ``host`` (origin or url) in one schedule; at
        ``error_threshold`` or more the host is crawl-delayed by ``error_crawl_delay``."""
        self._call(("errors", self._now(), self._origin(host), int(count)))

    def record_fetched(self, url: str, etag: str | None = None,
                       expires: float | None = None) -> None:
        """Remember a fetched page's ETag and Expires (a Unix time), as a visit of unknown
        outcome (:meth:`record_visits` says more)."""
        self.record_fetched_many([(url, etag, expires)])

    def record_fetched_many(self, items: Iterable[tuple[str, str | None, float | None]]) -> None:
        """:meth:`record_fetched` for a batch, with one fsync."""
        rows = [(url, etag, None if expires is None else float(expires))
                for url, etag, expires in items]
        if rows:
            self._call(("fetched", self._now(), rows))

    def record_visits(self, visits: Iterable[VisitRow]) -> None:
        """Visits of urls (:mod:`.revisits`): their copies' fetch times and outcomes are
        counted; with page recrawl on, each url's validators and indexed copy are kept, what
        the visit replaced or removed is retired, and the url is due again
        ``recrawl_days`` later. Durable when it returns."""
        rows = [visit.to_journal() for visit in visits]
        if rows:
            self._call(("fetched", self._now(), rows))

    def visit_of(self, url_hash: int) -> UrlVisit | None:
        """The visit table's row of a url hash (:func:`indexer.core.urls.url_hash`; the first 8 bytes
        of a doc_id, big-endian), or None."""
        return self._m.validators.get(url_hash)

    def next_revisit_at(self) -> float | None:
        """When the next url is due for a revisit (None: none is waiting, or page recrawl
        is off)."""
        self._check_open()
        if not self._m.cfg.recrawl_enabled:
            return None
        return self._m.revisits.next_due(self._m.cfg.recrawl_interval)

    def retired(self) -> tuple[int, set[bytes], set[int]]:
        """(version, doc_ids of retired copies, url hashes of removed urls): what search
        must leave out (:mod:`.revisits`); the version changes whenever they do."""
        revisits = self._m.revisits
        return revisits.version, revisits.retired, revisits.removed

    def freshness(self) -> dict[str, Any]:
        """The copies' fetch times and the urls by outcome, for the crawl page
        (:func:`crawler.core.queue_server.freshness.freshness_report`)."""
        revisits = self._m.revisits
        return freshness_report(revisits.copies, revisits.outcomes, revisits.released,
                                len(revisits))

    def extra_stats(self, skipped: object) -> dict[str, Any]:
        """Figures only an archive queue has: none (``skipped``, archive records the fetchers
        skipped, never happens in a web crawl)."""
        return {}

    def next_schedule(self, now: float | None = None, requester: str | None = None,
                      unparked_only: bool = False) -> Schedule | None:
        """The next schedule, or None when nothing can be scheduled now. ``unparked_only``:
        one of only the urls that freed crawl-delayed hosts had parked (None when there are
        none; see :mod:`.ordering.orders`), handed out beside the usual schedules.

        A schedule whose deadline passed without an acknowledgement is handed out again first
        (same id, same urls). When ``requester`` (a fetcher's name) still holds an
        unacknowledged schedule, that schedule is returned again, so a retried request does not
        take a second one. The schedule is durable when this returns."""
        when = self._now() if now is None else float(now)
        return self._call(("schedule", self._now(), when, requester)
                          + ((True,) if unparked_only else ()))

    def requeue(self, entries: Iterable[tuple[str, int, float, int, str, int]]) -> int:
        """Urls of a schedule that a fetcher handed back unfetched (their host stalled), as
        ``(url, depth, weight, tier, policy, policy depth)`` of their schedule entries. They
        go to the back of their tier (OPIC: ready again, with no cash) past the Bloom filter,
        and no longer count against ``max_pages``. Returns how many. Durable when it returns."""
        rows = [(str(url), int(depth), float(weight), max(0, int(tier)),
                 pol.CODE[pol.parse_policy(policy)], max(0, int(policy_depth)))
                for url, depth, weight, tier, policy, policy_depth in entries]
        if not rows:
            return 0
        return int(self._call(("requeue", self._now(), rows)))

    def release(self, schedule_ids: Iterable[str]) -> int:
        """Outstanding schedules that no fetcher holds any more (its fetcher gave it back or
        died, or the broker lost its message) are handed out again by the next
        :meth:`next_schedule`, as if their deadline had passed (same id, same urls; their
        crawl-delayed hosts stay theirs). Ids not outstanding are ignored. Returns how many
        were released. Durable when it returns."""
        ids = tuple(str(sid) for sid in schedule_ids)
        if not ids:
            return 0
        return int(self._call(("release", self._now(), ids)))

    def acknowledge(self, schedule_id: str) -> bool:
        """The data of schedule ``schedule_id`` has come back: forget it, free its crawl-delayed
        hosts that :meth:`free_hosts` did not free already (their parked urls go first in the
        next schedule). False when the id is not outstanding
        (already acknowledged, or unknown)."""
        return bool(self._call(("ack", self._now(), str(schedule_id))))

    def free_hosts(self, schedule_id: str, origins: Iterable[str]) -> int:
        """The fetcher of schedule ``schedule_id`` has fetched, and sent back, all its urls
        of these crawl-delayed hosts: they are free for the next schedule before this one is
        acknowledged, their parked urls first in it. Returns how many were freed (origins
        the schedule does not hold are ignored). Durable when it returns."""
        wanted = sorted({str(origin) for origin in origins})
        if not wanted:
            return 0
        return int(self._call(("free", self._now(), str(schedule_id), wanted)))

    def set_host_override(self, host: str, min_delay: float, excluded: bool) -> bool:
        """The operator's override of one host (origin or url) for this crawl: at least
        ``min_delay`` seconds between its requests (0: none), and ``excluded``: nothing more
        of it is scheduled (its waiting, parked and queued urls are refused, counted as
        ``dropped_excluded``, and so are its new urls). False (nothing journaled) when the
        host already has this override. Durable when it returns."""
        delay = float(min_delay)
        if not delay >= 0.0 or delay > 86400.0:
            raise ValueError(f"a minimum delay must be 0..86400 seconds, not {min_delay!r}")
        origin = self._origin(host)
        self._check_open()
        state = self._m.politeness.hosts.get(origin)
        if state is not None and (state.min_delay, state.excluded) == (delay, bool(excluded)):
            return False
        if state is None and delay == 0.0 and not excluded:
            return False
        self._call(("host", self._now(), origin, delay, bool(excluded)))
        return True

    def host_politeness(self, host: str) -> tuple[float, bool, bool] | None:
        """``(delay honoured between requests, robots.txt read, excluded)`` of a host
        (origin or url); None when the queue has not seen it."""
        self._check_open()
        state = self._m.politeness.hosts.get(self._origin(host))
        if state is None:
            return None
        return (state.delay(self._m.politeness.follow), state.rules is not None,
                state.excluded)

    def take_refused(self) -> list[tuple[str, str]]:
        """The ``(reason, url)`` of the urls refused since the last take (see
        :mod:`.machine`), oldest first; they are forgotten here."""
        taken, self._m.refused = self._m.refused, []
        return taken

    def stats(self) -> QueueStats:
        self._check_open()
        machine = self._m
        counters = machine.counters
        dropped = tuple(sorted((k[8:], v) for k, v in counters.items()
                               if k.startswith("dropped_")))
        needy = machine.needy
        return QueueStats(
            tiers=machine.order.tier_counts(),
            **machine.politeness.counts(),
            seen=counters["seen"],
            scheduled=counters["scheduled"],
            outstanding_schedules=len(machine.book),
            acknowledged_schedules=counters["acknowledged"],
            company_level_domains=len(machine.cld),
            dropped=dropped,
            needy_queries=len(needy.index) if needy.index is not None else 0,
            needy_queued=len(needy),
            needy_top=needy.top(),
        )

    def cld_counters(self, host: str) -> tuple[int, float, float]:
        """(SEEN_URLS, WEIGHTED_SEEN_URLS, WEIGHTED_INCOMING_URLS) of ``host``'s CLD."""
        return self._m.cld.get(cld_hash(company_level_domain(host)))

    def opic_scores(self, url: str) -> tuple[float, float] | None:
        """(cash, history) of ``url`` in OPIC order; None when unknown or another order."""
        return self._m.order.scores(url)

    def outstanding(self) -> list[Schedule]:
        """The schedules handed out and not yet acknowledged, oldest first."""
        return self._m.book.all()

    def checkpoint(self) -> None:
        """Write a checkpoint now (normally automatic)."""
        self._check_open()
        self._checkpoint()

    # -- the call path ----------------------------------------------------------------------

    def _now(self) -> float:
        return float(self._clock())

    def _check_open(self) -> None:
        if self._closed:
            raise QueueClosedError(f"crawl queue {self.root} is closed")

    def _origin(self, host: str) -> str:
        text = host.strip()
        if "://" not in text:
            raise InvalidUrlError(
                f"a host must be given as its origin scheme://host[:port], not {host!r}")
        return split_origin(text)[0]

    def _call(self, record: tuple[Any, ...]) -> Any:
        self._check_open()
        result = self._m.dispatch(record)
        if record[0] == "schedule" and result is None and not self._m.last_call_changed:
            return None
        assert self._journal is not None
        self._journal.append(record)
        if self._journal.size >= self._m.cfg.checkpoint_journal_bytes:
            self._checkpoint()
        return result

    # -- checkpoints ------------------------------------------------------------------------

    def _checkpoint(self) -> None:
        sync = self._m.cfg.fsync
        snapshot, garbage = self._m.snapshot()
        if sync:
            self._store.sync_url_files(self._ctx)
        self._ctx.dirty_files.clear()
        self._ctx.new_dirs.clear()
        gen = self._gen + 1
        journal = self._store.write(gen, snapshot, self._m.bloom, self._m.cld,
                                    self._m.validators, sync=sync)
        # committed: generation gen is now the one a restart loads
        if self._journal is not None:
            self._journal.close()
        self._journal = journal
        self._gen = gen
        self._store.remove_url_files(garbage)
        self._store.remove_other_generations(gen)
