"""The queue server's crawl queue: what to fetch next, kept on disk (the seed's Scheduler and
its QueueBundle).

Layer: ``crawler.core.scheduler`` (pure Python). The queue-server process (``run_queue_server``)
owns one :class:`CrawlQueue` per crawl, feeds it what fetchers send (discovered urls, robots.txt
data, host errors, ETag/Expires) and hands its schedules to fetchers. Urls are expected in the
canonical form of :func:`crawler.core.urls.canonicalize`; site rules are
:class:`crawler.core.siterules.SiteRules`. The queue orchestrates one module per concern:

* :mod:`.record` — a queued url and its url-file line; :mod:`.lanes` — the url files;
* :mod:`.politeness` — per-host robots rules and delays, urls waiting for robots.txt and urls
  parked while a crawl-delayed host is busy;
* :mod:`.orders` — the crawl order, a strategy (host budgeting, breadth-first, OPIC);
* :mod:`.needy_lane` — urls matching needy queries, scheduled first;
* :mod:`.builder` — fills one schedule; :mod:`.outstanding` — schedules handed out;
* :mod:`.checkpoints`, :mod:`.state`, :mod:`.journal` — durability.

A new url passes, in order: validity, the depth limit, the site rules, its policy (distrusted
urls past ``distrust_max_depth`` are dropped before they reach the Bloom filter, so a later
trusted link still queues them), the Bloom filter; then it waits for its host's robots.txt,
and once robots allow it the order files it (its tier shifted by its policy: favor sooner,
distrust later), or the needy lane takes it.

Durability and recovery. Every public mutator validates its input, applies it in memory (url
files are appended without fsync), then appends the call to the journal and fdatasyncs before
returning; so anything a call accepted survives a kill -9, and the caller may acknowledge its
message. Applying a call is deterministic (times come from the journal record, hashes are md5,
gzip members have mtime 0), so recovery = load the last checkpoint, cut url files back, replay
the journal (:mod:`.checkpoints`). A checkpoint is written when the journal passes
``checkpoint_journal_bytes``, after recovery, and at :meth:`CrawlQueue.close`.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import needy as needy_mod
from .. import policy as pol
from .bloom import BloomFilter, url_digests, url_hashes
from .builder import ScheduleBuilder
from .checkpoints import CheckpointStore, lock_directory
from .cldtable import CldTable
from .config import SchedulerConfig
from .errors import CorruptQueueError, InvalidUrlError, QueueClosedError, SchedulerConfigError
from .formulas import (
    check_storable,
    cld_hash,
    company_level_domain,
    incoming_increment,
    seen_increment,
    split_origin,
)
from .journal import JournalWriter, read_journal
from .lanes import LaneContext
from .needy_lane import NeedyLane
from .orders import CrawlOrderStrategy, make_order
from .outstanding import Outstanding, ScheduleBook
from .politeness import HostState, Politeness, robots_url
from .record import DEFAULT_POLICY, LinkItem, QueuedUrl, clean_anchor
from .robots import DISALLOW_ALL, RobotsRules, rules_for_status
from .state import QueueSnapshot, Validators, encode_rules
from .values import DiscoveredUrl, QueueStats, Schedule

logger = logging.getLogger(__name__)


def _day_stamp(t: float) -> str:
    return time.strftime("%Y%m%d", time.gmtime(t))


class CrawlQueue:
    """The crawl queue of one queue server for one crawl. Not thread-safe: one caller at a
    time (the queue-server loop). Open with :meth:`open`; call :meth:`close` (or use ``with``)
    to checkpoint and release the directory lock.

    Invariants: a crawl-delayed host has at most one outstanding schedule and at most
    ``ceil(delayed_schedule_seconds / delay)`` urls in it (:mod:`.builder`); a url handed out
    in a schedule is handed out again only in that same schedule (:mod:`.outstanding`)."""

    # -- opening and closing ----------------------------------------------------------------

    def __init__(self, root: Path, config: SchedulerConfig, clock: Callable[[], float],
                 lock_fd: int) -> None:
        self.root = root
        self._cfg = config
        self._clock = clock
        self._lock_fd = lock_fd
        self._ctx = LaneContext(root, config.url_buffer, config.max_file_bytes)
        self._store = CheckpointStore(root)
        self._closed = False
        self._replaying = False
        self._journal: JournalWriter | None = None
        self._gen = 0
        self._garbage: list[str] = []
        self._cld_keys: dict[str, int] = {}
        self._last_call_changed = False
        self._pending: list[str] = []   # lines filed during one call, scored at its end
        self._token = secrets.token_hex(4)
        self._bloom = BloomFilter.for_capacity(config.bloom_expected_urls, config.bloom_fp_rate)
        self._cld = CldTable()
        self._politeness = Politeness(self._ctx, config.robots)
        self._order: CrawlOrderStrategy = make_order(config.order, self._ctx)
        self._needy = NeedyLane()
        self._book = ScheduleBook()
        self._validators: Validators = {}
        self._counters: dict[str, int] = {"seen": 0, "scheduled": 0, "acknowledged": 0}
        self._seq = 0
        self._bloom_epoch: float | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], config: SchedulerConfig, *,
             clock: Callable[[], float] = time.time) -> CrawlQueue:
        """Open (or create) the queue rooted at ``path``. An existing queue is recovered from
        its last checkpoint and journal, then checkpointed with ``config`` (the crawl order of
        an existing queue cannot change; limits and rules can)."""
        root = Path(path)
        lock_fd = lock_directory(root)
        try:
            queue = cls(root, config, clock, lock_fd)
            queue._start()
        except BaseException:
            os.close(lock_fd)
            raise
        return queue

    def _start(self) -> None:
        gen = self._store.current()
        if gen is None:
            logger.info("crawl queue %s: new (order %s)", self.root, self._cfg.order.value)
            self._checkpoint()
            return
        wanted = self._cfg
        self._load(gen)
        if self._cfg.order is not wanted.order:
            raise SchedulerConfigError(
                f"queue {self.root} was created for order {self._cfg.order.value}, "
                f"not {wanted.order.value}")
        committed: dict[str, int] = {}
        for lane in [*self._order.lanes(), *self._politeness.lanes()]:
            committed.update((str(rel), int(length)) for rel, length in lane.files)
        self._store.clean_url_files(committed)
        self._replaying = True
        replayed = 0
        try:
            for record in read_journal(self._store.journal_path(gen)):
                self._dispatch(record)
                replayed += 1
        finally:
            self._replaying = False
        self._set_config(wanted)
        logger.info("crawl queue %s: recovered generation %d, replayed %d calls",
                    self.root, gen, replayed)
        self._checkpoint()

    def _set_config(self, cfg: SchedulerConfig) -> None:
        self._cfg = cfg
        self._ctx.buffer_limit = cfg.url_buffer
        self._ctx.max_file_bytes = cfg.max_file_bytes
        self._politeness.behaviour = cfg.robots

    def close(self) -> None:
        """Checkpoint and release the lock. The queue reopens where it stopped."""
        if self._closed:
            return
        self._checkpoint()
        if self._journal is not None:
            self._journal.close()
        os.close(self._lock_fd)
        self._closed = True

    def destroy(self) -> None:
        """Close and delete the whole queue directory (a crawl that is closed for good)."""
        self.close()
        shutil.rmtree(self.root)

    def __enter__(self) -> CrawlQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def config(self) -> SchedulerConfig:
        return self._cfg

    # -- public calls -----------------------------------------------------------------------

    def add_seeds(self, urls: Iterable[str]) -> int:
        """Queue the crawl's seed urls (depth 0, weight 0), each under its policy from the
        configuration's ``seed_policies`` (default when not listed). In OPIC order the seeds of
        one call share one unit of cash. Returns how many urls were newly accepted."""
        unique = list(dict.fromkeys(urls))
        share = 1.0 / len(unique) if unique else 0.0
        policies = {url: pol.CODE[pol.parse_policy(name)]
                    for url, name in self._cfg.seed_policies}
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
        if rows == self._needy.queries:
            return False
        self._call(("needy", self._now(), rows))
        return True

    def needy_matches(self, url: str, anchor_text: str = "") -> list[str]:
        """The needy queries a url (with an anchor text) matches now."""
        return self._needy.matches(url, anchor_text)

    def add_robots(self, host: str, rules: RobotsRules | str | bytes | None,
                   status: int = 200) -> None:
        """Robots data for ``host`` — an origin ``scheme://host[:port]`` or any url on it (the
        robots.txt url itself will do). ``rules`` is the robots.txt text or parsed rules;
        ``status`` the HTTP status of the robots.txt fetch (0 for a failure without one).
        Waiting urls of the host are filtered by the rules and released into UrlQueue."""
        origin = self._origin(host)
        resolved = rules_for_status(rules, status, user_agent=self._cfg.user_agent,
                                    max_crawl_delay=self._cfg.max_crawl_delay)
        encode_rules(resolved)  # refuse rules the state file cannot keep, before journaling
        self._call(("robots", self._now(), origin, resolved))

    def report_host_errors(self, host: str, count: int) -> None:
        """A fetcher saw ``count`` errors for ``host`` (origin or url) in one schedule; at
        ``error_threshold`` or more the host is crawl-delayed by ``error_crawl_delay``."""
        self._call(("errors", self._now(), self._origin(host), int(count)))

    def record_fetched(self, url: str, etag: str | None = None,
                       expires: float | None = None) -> None:
        """Remember a fetched page's ETag and Expires (a Unix time) for recrawls."""
        self.record_fetched_many([(url, etag, expires)])

    def record_fetched_many(self, items: Iterable[tuple[str, str | None, float | None]]) -> None:
        """:meth:`record_fetched` for a batch, with one fsync."""
        rows = [(url, etag, None if expires is None else float(expires))
                for url, etag, expires in items]
        if rows:
            self._call(("fetched", self._now(), rows))

    def next_schedule(self, now: float | None = None,
                      requester: str | None = None) -> Schedule | None:
        """The next schedule, or None when nothing can be scheduled now.

        A schedule whose deadline passed without an acknowledgement is handed out again first
        (same id, same urls). When ``requester`` (a fetcher's name) still holds an
        unacknowledged schedule, that schedule is returned again, so a retried request does not
        take a second one. The schedule is durable when this returns."""
        when = self._now() if now is None else float(now)
        return self._call(("schedule", self._now(), when, requester))

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

    def acknowledge(self, schedule_id: str) -> bool:
        """The data of schedule ``schedule_id`` has come back: forget it, free its crawl-delayed
        hosts (their parked urls return to UrlQueue). False when the id is not outstanding
        (already acknowledged, or unknown)."""
        return bool(self._call(("ack", self._now(), str(schedule_id))))

    def stats(self) -> QueueStats:
        self._check_open()
        counters = self._counters
        dropped = tuple(sorted((k[8:], v) for k, v in counters.items()
                               if k.startswith("dropped_")))
        needy = self._needy
        return QueueStats(
            tiers=self._order.tier_counts(),
            **self._politeness.counts(),
            seen=counters["seen"],
            scheduled=counters["scheduled"],
            outstanding_schedules=len(self._book),
            acknowledged_schedules=counters["acknowledged"],
            company_level_domains=len(self._cld),
            dropped=dropped,
            needy_queries=len(needy.index) if needy.index is not None else 0,
            needy_queued=len(needy),
            needy_top=needy.top(),
        )

    def cld_counters(self, host: str) -> tuple[int, float, float]:
        """(SEEN_URLS, WEIGHTED_SEEN_URLS, WEIGHTED_INCOMING_URLS) of ``host``'s CLD."""
        return self._cld.get(cld_hash(company_level_domain(host)))

    def opic_scores(self, url: str) -> tuple[float, float] | None:
        """(cash, history) of ``url`` in OPIC order; None when unknown or another order."""
        return self._order.scores(url)

    def outstanding(self) -> list[Schedule]:
        """The schedules handed out and not yet acknowledged, oldest first."""
        return self._book.all()

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
        result = self._dispatch(record)
        if record[0] == "schedule" and result is None and not self._last_call_changed:
            return None
        assert self._journal is not None
        self._journal.append(record)
        if self._journal.size >= self._cfg.checkpoint_journal_bytes:
            self._checkpoint()
        return result

    def _dispatch(self, record: tuple[Any, ...]) -> Any:
        try:
            return self._dispatch_one(record)
        finally:
            if self._pending:
                lines, self._pending = self._pending, []
                self._needy.file(lines, self._cfg, self._order.push)

    def _dispatch_one(self, record: tuple[Any, ...]) -> Any:
        """Apply one journal record: ``(kind, time, *arguments)``."""
        kind, t = record[0], record[1]
        self._ctx.day = _day_stamp(t)
        self._last_call_changed = True
        if kind == "add":
            return self._apply_add([LinkItem.from_journal(item) for item in record[2]])
        if kind == "robots":
            return self._apply_robots(record[2], record[3])
        if kind == "errors":
            return self._apply_errors(record[2], record[3])
        if kind == "fetched":
            return self._apply_fetched(record[2])
        if kind == "schedule":
            return self._apply_schedule(record[2], record[3])
        if kind == "ack":
            return self._apply_ack(record[2])
        if kind == "needy":
            return self._apply_needy(record[2])
        if kind == "requeue":
            return self._apply_requeue(record[2])
        raise CorruptQueueError(f"unknown journal record {kind!r}")

    def _count(self, name: str, amount: int = 1) -> None:
        if amount:
            self._counters[name] = self._counters.get(name, 0) + amount

    def _cld_key(self, host: str) -> int:
        key = self._cld_keys.get(host)
        if key is None:
            if len(self._cld_keys) > 200_000:
                self._cld_keys.clear()
            key = cld_hash(company_level_domain(host))
            self._cld_keys[host] = key
        return key

    # -- adding -----------------------------------------------------------------------------

    def _apply_add(self, items: list[LinkItem]) -> int:
        merged, cash = self._merge_links(items)
        kept = self._admissible(merged)
        if not kept:
            return 0
        digests = url_digests([item.url for item, _, _ in kept])
        hashes = url_hashes(digests).tolist()
        fresh = self._order.fresh(hashes, [item for item, _, _ in kept], cash)
        if len(fresh) != len(kept):
            kept = [kept[p] for p in fresh]
            digests = digests[fresh]
            hashes = [hashes[p] for p in fresh]
        accepted = 0
        for position, is_new in enumerate(self._bloom.add_many(digests).tolist()):
            if not is_new:
                self._count("dropped_duplicate")
                continue
            item, origin, host = kept[position]
            self._order.accepted(hashes[position], item, cash[item.url])
            accepted += 1
            incoming = 0.0
            if item.source_cld and cld_hash(item.source_cld) != self._cld_key(host):
                incoming = incoming_increment(item.source_weight, item.source_tier)
            self._route(QueuedUrl(item.url, item.depth, float(item.link_index), -1, item.flags,
                                  incoming, item.policy, item.policy_depth, item.anchor),
                        origin, host)
        self._count("seen", accepted)
        return accepted

    def _merge_links(self, items: list[LinkItem]) -> tuple[list[LinkItem], dict[str, float]]:
        """Links to one url in one call become one: the most trusting policy, their anchor
        texts together (:meth:`LinkItem.merged`); each earns its cash (OPIC)."""
        link_cash = self._order.link_cash
        merged: dict[str, LinkItem] = {}
        first_cash: dict[str, float] = {}
        extra_cash: dict[str, float] = {}
        for item in items:
            url = item.url
            value = link_cash(item.opic_cash, item.policy)
            held = merged.get(url)
            if held is None:
                merged[url] = item
                first_cash[url] = value
                continue
            extra_cash[url] = extra_cash.get(url, 0.0) + value
            merged[url] = held.merged(item)
        for url, value in extra_cash.items():
            first_cash[url] += value
        return list(merged.values()), first_cash

    def _admissible(self, items: list[LinkItem]) -> list[tuple[LinkItem, str, str]]:
        """``(item, origin, host)`` of the links that pass validity, the depth limit, the site
        rules and their policy; the others are counted as dropped."""
        cfg = self._cfg
        rules = cfg.site_rules
        check_rules = bool(rules.disallowed) or rules.restrict
        kept = []
        for item in items:
            try:
                check_storable(item.url)
                origin, host = split_origin(item.url)
            except InvalidUrlError:
                self._count("dropped_invalid")
                continue
            if 0 <= cfg.max_depth < item.depth:
                self._count("dropped_depth")
                continue
            if check_rules and not rules.permits(item.url):
                self._count("dropped_site_rules")
                continue
            if pol.dropped(pol.FROM_CODE[item.policy], item.policy_depth,
                           cfg.distrust_max_depth):
                self._count("dropped_distrust")  # not in the Bloom filter: rule 2
                continue
            kept.append((item, origin, host))
        return kept

    def _route(self, record: QueuedUrl, origin: str, host: str) -> None:
        """A new url: wait for robots, or be filed, or be refused."""
        politeness = self._politeness
        state = politeness.host(origin)
        if record.url == robots_url(origin):
            if state.rules is None and not state.robots_queued:
                self._queue_robots(origin, state)
            self._order.forget(record.url)
            return
        if state.rules is None:
            politeness.wait(origin, record)
            if not state.robots_queued:
                self._queue_robots(origin, state)
            return
        if politeness.allowed(state, record.url, origin):
            self._enqueue(record, host)
        else:
            self._count("dropped_robots")
            self._order.forget(record.url)

    def _queue_robots(self, origin: str, state: HostState) -> None:
        self._bloom.add(self._politeness.queue_robots(origin, state))

    def _enqueue(self, record: QueuedUrl, host: str) -> None:
        """File a url that robots allowed: update its CLD, pick its tier (shifted by its
        policy); with needy queries active it is scored at the end of the call."""
        wseen, wincoming = self._cld.update(self._cld_key(host),
                                            seen_increment(int(record.weight)), record.incoming)
        cfg = self._cfg
        tier = self._order.tier(record.depth, wseen, wincoming, record.flags)
        tier = max(0, tier + pol.tier_adjustment(pol.FROM_CODE[record.policy],
                                                 cfg.favor_tier_bonus,
                                                 cfg.distrust_tier_penalty))
        filed = QueuedUrl(record.url, record.depth, record.weight, tier, record.flags, 0.0,
                          record.policy, record.policy_depth, record.anchor)
        if self._needy.active:
            self._pending.append(filed.to_line())
        else:
            self._order.push(filed)

    def _apply_needy(self, rows: tuple[tuple[str, float, float], ...]) -> bool:
        old = self._needy.set_queries(rows, self._cfg, self._order.has_needy_lane)
        self._pending.extend(old)
        if not self._replaying:
            logger.info("crawl queue %s: %d needy queries; needy lane rescored (%d urls)",
                        self.root, len(rows), len(old))
        return True

    # -- robots, errors, validators ---------------------------------------------------------

    def _apply_robots(self, origin: str, rules: RobotsRules) -> None:
        state = self._politeness.host(origin)
        state.robots_queued = False
        if not self._politeness.follow:
            return
        state.rules = rules
        self._release_waiting(origin, state)
        host = split_origin(origin + "/")[1]
        sitemaps = [url for url in getattr(rules, "sitemaps", ()) or ()
                    if isinstance(url, str) and url.startswith(origin + "/")]
        if sitemaps:
            cld = company_level_domain(host)
            self._apply_add([LinkItem(url, 1, 0, cld, 0.0, 0, True, False, 0.0)
                             for url in sitemaps])

    def _release_waiting(self, origin: str, state: HostState) -> None:
        taken = self._politeness.take_waiting(origin)
        if taken is None:
            return
        lines, files = taken
        host = split_origin(origin + "/")[1]
        released = refused = 0
        for line in lines:
            record = QueuedUrl.from_line(line)
            if self._politeness.allowed(state, record.url, origin):
                self._enqueue(record, host)
                released += 1
            else:
                self._order.forget(record.url)
                refused += 1
        self._count("dropped_robots", refused)
        self._garbage.extend(files)
        if not self._replaying:
            logger.info("robots %s: released %d waiting urls, refused %d",
                        origin, released, refused)

    def _apply_errors(self, origin: str, count: int) -> None:
        cfg = self._cfg
        if count >= cfg.error_threshold:
            state = self._politeness.host(origin)
            if state.error_delay < cfg.error_crawl_delay and not self._replaying:
                logger.info("host %s: %d errors, crawl-delayed %.0fs", origin, count,
                            cfg.error_crawl_delay)
            state.error_delay = max(state.error_delay, cfg.error_crawl_delay)

    def _apply_fetched(self, rows: list[tuple[str, str | None, float | None]]) -> None:
        if not self._cfg.recrawl_enabled:
            return
        digests = url_digests([row[0] for row in rows])
        for url_hash, (_, etag, expires) in zip(url_hashes(digests).tolist(), rows,
                                                strict=True):
            if etag or expires is not None:
                self._validators[url_hash] = (etag or None, expires)
            else:
                self._validators.pop(url_hash, None)

    # -- scheduling -------------------------------------------------------------------------

    def _apply_schedule(self, now: float, requester: str | None) -> Schedule | None:
        self._last_call_changed = False
        held = self._book.held_by(requester)
        if held is not None:
            return held
        cfg = self._cfg
        if cfg.recrawl_enabled:
            if self._bloom_epoch is None:
                self._bloom_epoch = now
                self._last_call_changed = True
            elif now - self._bloom_epoch >= cfg.recrawl_days * 86400.0:
                self._bloom.clear()
                self._bloom_epoch = now
                self._last_call_changed = True
        schedule = self._book.reissue_expired(now, cfg.schedule_timeout, requester)
        if schedule is not None:
            self._last_call_changed = True
            if not self._replaying:
                logger.warning("schedule %s timed out; handed out again (%d urls)",
                               schedule.id, len(schedule.entries))
            return schedule
        if not self._anything_queued():
            return None
        self._last_call_changed = True
        return self._build(now, requester)

    def _anything_queued(self) -> bool:
        if len(self._politeness.robots_lane):
            return True
        if self._cfg.max_pages and self._counters["scheduled"] >= self._cfg.max_pages:
            return False
        return bool(len(self._needy)) or self._order.ready() > 0

    def _build(self, now: float, requester: str | None) -> Schedule | None:
        """robots.txt urls first (nothing else of their hosts can go before them), then the
        needy lane, then the crawl order."""
        cfg = self._cfg
        sid = f"{self._token}-{self._seq + 1}"
        politeness = self._politeness
        builder = ScheduleBuilder(cfg, sid, now, self._counters["scheduled"], politeness,
                                  self._validators, self._cld_key, self._count)
        while builder.pos < builder.size:
            line = politeness.robots_lane.pop()
            if line is None:
                break
            builder.place(QueuedUrl.from_line(line), 0.0, None, robots=True)
        builder.fill_from_needy(self._needy)
        self._order.fill(builder)
        if not builder.entries:
            return None
        self._seq += 1
        entries = tuple(sorted(builder.entries, key=lambda entry: entry.slot))
        schedule = Schedule(sid, entries, now, now + cfg.schedule_timeout, cfg.round_size)
        delayed = tuple(builder.delayed_hosts)
        for origin in delayed:
            politeness.hosts[origin].busy = sid
        self._book.add(Outstanding(schedule, delayed, tuple(builder.robots_origins),
                                   requester))
        self._count("scheduled", builder.pages)
        if not self._replaying:
            logger.info("schedule %s: %d urls (%d robots.txt), %d parked, %d delayed hosts",
                        sid, len(entries), len(entries) - builder.pages, builder.parked,
                        len(delayed))
        return schedule

    def _apply_requeue(self, rows: list[tuple[str, int, float, int, str, int]]) -> int:
        for url, depth, weight, tier, code, policy_depth in rows:
            self._order.push(QueuedUrl(url, depth, weight, tier, 0, 0.0, code, policy_depth))
        self._counters["scheduled"] = max(0, self._counters["scheduled"] - len(rows))
        self._count("requeued", len(rows))
        return len(rows)

    def _apply_ack(self, sid: str) -> bool:
        out = self._book.pop(sid)
        if out is None:
            self._last_call_changed = False
            return False
        self._count("acknowledged")
        hosts = self._politeness.hosts
        for origin in out.delayed_hosts:
            state = hosts[origin]
            if state.busy == sid:
                state.busy = None
            self._requeue_parked(origin)
        for origin in out.robots_origins:
            state = hosts[origin]
            if state.rules is not None:
                continue
            state.robots_queued = False     # fetched, but no robots data came back
            if state.robots_attempts >= self._cfg.robots_retries:
                if not self._replaying:
                    logger.warning("robots %s: no answer after %d attempts; host disallowed",
                                   origin, state.robots_attempts)
                state.rules = DISALLOW_ALL
                self._release_waiting(origin, state)
            else:
                self._queue_robots(origin, state)
        return True

    def _requeue_parked(self, origin: str) -> None:
        taken = self._politeness.take_parked(origin)
        if taken is None:
            return
        lines, files = taken
        if self._needy.active:
            self._pending.extend(lines)
        else:
            for line in lines:
                self._order.push(QueuedUrl.from_line(line))
        self._garbage.extend(files)

    # -- checkpoints ------------------------------------------------------------------------

    def _checkpoint(self) -> None:
        sync = self._cfg.fsync
        gen = self._gen + 1
        order_state, garbage = self._order.checkpoint()
        host_lanes, dead = self._politeness.checkpoint()
        garbage = [*self._garbage, *garbage, *dead]
        if sync:
            self._store.sync_url_files(self._ctx)
        self._ctx.dirty_files.clear()
        self._ctx.new_dirs.clear()
        needy = self._needy
        snapshot = QueueSnapshot(
            token=self._token, config=self._cfg, hosts=self._politeness.hosts,
            host_lanes=host_lanes, order=order_state,
            outstanding=list(self._book.schedules.values()), requesters=self._book.requesters,
            counters=self._counters, seq=self._seq, bloom_epoch=self._bloom_epoch,
            needy_heap=needy.heap, needy_seq=needy.seq, needy_queries=needy.queries)
        journal = self._store.write(gen, snapshot, self._bloom, self._cld, self._validators,
                                    sync=sync)
        # committed: generation gen is now the one a restart loads
        if self._journal is not None:
            self._journal.close()
        self._journal = journal
        self._gen = gen
        self._garbage = []
        self._store.remove_url_files(garbage)
        self._store.remove_other_generations(gen)

    def _load(self, gen: int) -> None:
        snap, self._bloom, self._cld, self._validators = self._store.read(gen)
        self._gen = gen
        self._set_config(snap.config)
        self._token = snap.token
        self._politeness.restore(snap.hosts, snap.host_lanes)
        self._order = make_order(snap.config.order, self._ctx)
        self._order.restore(snap.order)
        self._book.restore(snap.outstanding, snap.requesters)
        self._needy.heap = list(snap.needy_heap)
        self._needy.seq = snap.needy_seq
        self._needy.queries = snap.needy_queries
        self._needy.build_index(snap.config, self._order.has_needy_lane)
        self._counters = snap.counters
        self._seq = snap.seq
        self._bloom_epoch = snap.bloom_epoch
        self._garbage = []
