"""The queue server's crawl queue: what to fetch next, kept on disk (the seed's Scheduler and
its QueueBundle).

Layer: ``crawler.core.scheduler`` (pure Python). The queue-server process (``run_queue_server``)
owns one :class:`CrawlQueue` per crawl, feeds it what fetchers send (discovered urls, robots.txt
data, host errors, ETag/Expires) and hands its schedules to fetchers. Neighbours: robots rules
come from the fetch side (:mod:`.robots`); urls are expected in the canonical form of
:func:`crawler.core.urls.canonicalize`; site rules are :class:`crawler.core.siterules.SiteRules`.

On-disk layout (under the directory the caller gives)::

    LOCK                                   flock: one process per queue
    CURRENT                                the committed checkpoint generation <g> (text)
    QueueState/state.<g>.bin               pickled queue state: lanes, hosts, schedules, OPIC
    UrlExistsFilterBundle/bloom.<g>.bin    Bloom filter of queued urls (see .bloom)
    CLDData/cld.<g>.bin                    CLD hash -> SEEN, WEIGHTED_SEEN, WEIGHTED_INCOMING
    EtagExpires/etag.<g>.bin               url hash -> (ETag, Expires)
    ScheduleData/journal.<g>.log           every accepted call since checkpoint <g> (see .journal)
    UrlQueue/RobotsTxt/<day>/<n>.txt.gz    robots.txt urls, scheduled before anything else
    UrlQueue/Tier<k>/<day>/<n>.txt.gz      urls ready to schedule, in arrival order per tier
    WaitRobotUrl/<host hash>/<day>/<n>.txt.gz      urls of hosts whose robots.txt is not in yet
    CrawlDelayedHosts/<host hash>/<day>/<n>.txt.gz urls parked until their host's schedule is
                                                   acknowledged

Url files are described in :mod:`.lanes`. A record is one line of tab-separated fields:
``url, depth, weight, tier, flags, incoming, policy, policy depth, anchor`` — ``weight`` is the
link index ``i`` the url came with (its weight, echoed to fetchers), ``tier`` the tier it was
filed in (-1 while waiting for robots), ``flags`` bit 1 sitemap / bit 2 non-HTML, ``incoming``
the WEIGHTED_INCOMING_URLS increment to apply when it enters UrlQueue, ``policy`` the crawl
policy (``f`` favor, ``d`` default, ``x`` distrust, see :mod:`crawler.core.policy`) with its
depth, ``anchor`` the anchor text (whitespace folded; for needy-query matching). Records of the
older six-field form read as default policy without anchor text.

Seed policies and needy queries. A url's tier is shifted by its policy (favor sooner, distrust
later; distrusted urls past ``distrust_max_depth`` are dropped before they reach the Bloom
filter, so a later trusted link still queues them). With needy queries set
(:meth:`CrawlQueue.set_needy_queries`) and ``need_weight`` > 0, a url whose need score is
positive goes to the *needy lane* instead of its tier: an in-memory heap (saved in the
checkpoint) ordered by the combined priority of :func:`crawler.core.needy.combined_priority`,
which every schedule drains before the tiers. New needy queries rescore the lane (urls no
longer needed return to their tiers); urls already in the tiers are not rescored. OPIC order
keeps its cash order (a favored link's cash counts double, a distrusted link's half) and no
needy lane. A ``<host hash>`` is :func:`indexer.core.ids.hash8`
of the host's origin ``scheme://host[:port]`` in hex.

Durability and recovery. Every public mutator validates its input, applies it in memory (url
files are appended without fsync), then appends the call to the journal and fdatasyncs before
returning; so anything a call accepted survives a kill -9, and the caller may acknowledge its
message. Applying a call is deterministic (times come from the journal record, hashes are md5,
gzip members have mtime 0), so recovery = load checkpoint <g>, truncate url files to their
committed lengths, delete files the checkpoint does not know, replay journal <g>. A checkpoint
(when the journal passes ``checkpoint_journal_bytes``, after recovery, and at :meth:`close`)
flushes and fsyncs url files, writes the generation-<g+1> files and an empty journal, then
renames CURRENT (the commit point), then deletes generation <g> and url files already read.

Crawl-delayed hosts. The seed spaces a delayed host's urls a request round (100 slots) apart,
so a 5000-url schedule holds at most 50 of them and each round waits for the delay. Here the
pacing is by time instead: a schedule holds at most ``ceil(delayed_schedule_seconds / delay)``
urls of a delayed host (at least one, in any slots), and the fetcher requests them one at a time
in the host's own lane, each once the delay since the host's previous request has passed
(:mod:`crawler.core.fetch_worker`); urls it did not get to before the rest of the schedule was
done come back deferred (:meth:`CrawlQueue.requeue`). Further urls of a host that has an
outstanding schedule are parked in CrawlDelayedHosts until that schedule is acknowledged.

Invariants: a url enters UrlQueue only after its host's robots rules allowed it (unless robots
are ignored); a crawl-delayed host has at most one outstanding schedule (so the one fetcher
holding it paces every request to it) and at most ``ceil(delayed_schedule_seconds / delay)``
urls in it; a url handed out in a schedule is handed out again only in that same schedule (same
id) after a timeout, never after the schedule was acknowledged.
"""

from __future__ import annotations

import fcntl
import heapq
import logging
import math
import os
import pickle
import secrets
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from indexer.core.policies import CrawlPolicy
from indexer.core.urls import company_level_domain

from .. import needy as needy_mod
from .. import policy as pol
from ..crawl import CrawlOrder, RobotsBehaviour
from . import opic
from .bloom import BloomFilter, url_digests, url_hashes
from .cldtable import CldTable
from .config import DELAYED_SCHEDULE_SECONDS, SchedulerConfig
from .errors import (
    CorruptQueueError,
    InvalidUrlError,
    QueueClosedError,
    QueueLockedError,
    SchedulerConfigError,
)
from .formulas import (
    budget_tier,
    check_storable,
    cld_hash,
    host_hash,
    incoming_increment,
    seen_increment,
    split_origin,
)
from .journal import JournalWriter, read_journal
from .lanes import URL_FILES_EXTENSION, Lane, LaneContext
from .robots import ALLOW_ALL, DISALLOW_ALL, RobotsRules, rules_for_status
from .storage import atomic_write, fsync_dir, fsync_file, read_blob, write_blob
from .values import DiscoveredUrl, QueueStats, Schedule, ScheduleEntry

logger = logging.getLogger(__name__)

STATE_DIR = "QueueState"
BLOOM_DIR = "UrlExistsFilterBundle"
CLD_DIR = "CLDData"
ETAG_DIR = "EtagExpires"
JOURNAL_DIR = "ScheduleData"
URL_QUEUE = "UrlQueue"
ROBOTS_LANE = "UrlQueue/RobotsTxt"
TIER_PREFIX = "Tier"
WAIT_DIR = "WaitRobotUrl"
DELAYED_DIR = "CrawlDelayedHosts"
LANE_ROOTS = (URL_QUEUE, WAIT_DIR, DELAYED_DIR)

_STATE_MAGIC = b"YQSTATE1"
_ETAG_MAGIC = b"YQETAG01"
_FORMAT = 1

FLAG_SITEMAP = 1
FLAG_NON_HTML = 2

# A journal item for one discovered url: (url, depth, link_index, source_cld, source_weight,
# source_tier, is_sitemap, is_html, opic_cash, policy code, policy depth, anchor text); items
# of older journals stop after opic_cash.
_Item = tuple[Any, ...]
_DEFAULT = pol.CODE[CrawlPolicy.DEFAULT]
_NEEDY_TOP = 10


@dataclass(slots=True)
class _Host:
    """Politeness state of one origin. ``rules`` is None until robots data arrives."""

    rules: RobotsRules | None = None
    robots_queued: bool = False
    robots_attempts: int = 0
    error_delay: float = 0.0
    busy: str | None = None  # the outstanding schedule holding this delayed host

    def delay(self, follow_robots: bool) -> float:
        robots_delay = self.rules.crawl_delay if (follow_robots and self.rules) else 0.0
        return max(float(robots_delay or 0.0), self.error_delay)


@dataclass(slots=True)
class _Outstanding:
    schedule: Schedule
    delayed_hosts: tuple[str, ...]
    robots_origins: tuple[str, ...]
    requester: str | None


def _day_stamp(t: float) -> str:
    return time.strftime("%Y%m%d", time.gmtime(t))


def _record(url: str, depth: int, weight: float, tier: int, flags: int, incoming: float,
            policy: str = _DEFAULT, policy_depth: int = 0, anchor: str = "") -> str:
    return (f"{url}\t{depth}\t{weight!r}\t{tier}\t{flags}\t{incoming!r}\t{policy}"
            f"\t{policy_depth}\t{anchor}")


def _parse(record: str) -> tuple[str, int, float, int, int, float]:
    url, depth, weight, tier, flags, incoming = record.split("\t")[:6]
    return url, int(depth), float(weight), int(tier), int(flags), float(incoming)


def _parse_policy(record: str) -> tuple[str, int, str]:
    """(policy code, policy depth, anchor text) of a record."""
    fields = record.split("\t")
    if len(fields) < 9:
        return _DEFAULT, 0, ""
    return fields[6], int(fields[7]), fields[8]


def _with_tier(record: str, tier: int) -> str:
    fields = record.split("\t")
    fields[3] = str(tier)
    return "\t".join(fields)


def _clean_anchor(text: str) -> str:
    return " ".join(text.split())[:200]


def _description(record: str) -> list[list[str]]:
    fields = record.split("\t")
    anchors = fields[8].split(" | ") if len(fields) >= 9 and fields[8] else []
    return needy_mod.describe(fields[0], anchors)


def _url_hash(url: str) -> int:
    return int(url_hashes(url_digests([url]))[0])


class CrawlQueue:
    """The crawl queue of one queue server for one crawl. Not thread-safe: one caller at a
    time (the queue-server loop). Open with :meth:`open`; call :meth:`close` (or use ``with``)
    to checkpoint and release the directory lock."""

    # -- opening and closing ----------------------------------------------------------------

    def __init__(self, root: Path, config: SchedulerConfig, clock: Callable[[], float],
                 lock_fd: int) -> None:
        self.root = root
        self._cfg = config
        self._clock = clock
        self._lock_fd = lock_fd
        self._ctx = LaneContext(root, config.url_buffer, config.max_file_bytes)
        self._closed = False
        self._replaying = False
        self._journal: JournalWriter | None = None
        self._gen = 0
        self._garbage: list[str] = []
        self._cld_keys: dict[str, int] = {}
        self._last_call_changed = False
        self._reset_state()

    def _reset_state(self) -> None:
        cfg = self._cfg
        self._token = secrets.token_hex(4)
        self._bloom = BloomFilter.for_capacity(cfg.bloom_expected_urls, cfg.bloom_fp_rate)
        self._cld = CldTable()
        self._hosts: dict[str, _Host] = {}
        self._tiers: dict[int, Lane] = {}
        self._robots_lane = Lane(self._ctx, ROBOTS_LANE)
        self._wait: dict[str, Lane] = {}
        self._delayed: dict[str, Lane] = {}
        self._outstanding: dict[str, _Outstanding] = {}
        self._requesters: dict[str, str] = {}
        self._etag: dict[int, tuple[str | None, float | None]] = {}
        self._pool: opic.CashPool | None = (
            opic.CashPool() if cfg.order is CrawlOrder.OPIC else None)
        self._counters: dict[str, int] = {"seen": 0, "scheduled": 0, "acknowledged": 0}
        self._rr = 0
        self._seq = 0
        self._bloom_epoch: float | None = None
        # needy lane: heap of (-priority, seq, record); the needy queries it is scored against
        self._needy_heap: list[tuple[float, int, str]] = []
        self._needy_seq = 0
        self._needy_queries: tuple[tuple[str, float, float], ...] = ()
        self._needy_index: needy_mod.NeedyIndex | None = None
        self._pending: list[str] = []   # records filed during one call, scored at its end
        # OPIC order: url hash -> (policy code, policy depth) of urls not under default policy
        self._opic_policy: dict[int, tuple[str, int]] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str], config: SchedulerConfig, *,
             clock: Callable[[], float] = time.time) -> CrawlQueue:
        """Open (or create) the queue rooted at ``path``. An existing queue is recovered from
        its last checkpoint and journal, then checkpointed with ``config`` (the crawl order of
        an existing queue cannot change; limits and rules can)."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(root / "LOCK", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise QueueLockedError(f"{root} is open in another process") from None
        try:
            queue = cls(root, config, clock, lock_fd)
            queue._start()
        except BaseException:
            os.close(lock_fd)
            raise
        return queue

    def _start(self) -> None:
        current = self.root / "CURRENT"
        for folder in (STATE_DIR, BLOOM_DIR, CLD_DIR, ETAG_DIR, JOURNAL_DIR, *LANE_ROOTS):
            (self.root / folder).mkdir(exist_ok=True)
        if not current.exists():
            logger.info("crawl queue %s: new (order %s)", self.root, self._cfg.order.value)
            self._checkpoint()
            return
        try:
            gen = int(current.read_text().strip())
        except ValueError:
            raise CorruptQueueError("CURRENT does not hold a generation", str(current)) from None
        wanted = self._cfg
        self._load(gen)
        if self._cfg.order is not wanted.order:
            raise SchedulerConfigError(
                f"queue {self.root} was created for order {self._cfg.order.value}, "
                f"not {wanted.order.value}")
        self._clean_files()
        self._replaying = True
        replayed = 0
        try:
            for record in read_journal(self.root / JOURNAL_DIR / f"journal.{gen}.log"):
                self._dispatch(record)
                replayed += 1
        finally:
            self._replaying = False
        self._cfg = wanted
        self._ctx.buffer_limit = wanted.url_buffer
        self._ctx.max_file_bytes = wanted.max_file_bytes
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
        items = [(url, 0, 0, "", 0.0, 0, False, True, share, policies.get(url, _DEFAULT), 0, "")
                 for url in unique]
        return self._call(("add", self._now(), items))

    def add_discovered(self, batch: Iterable[DiscoveredUrl]) -> int:
        """Queue urls fetchers discovered. Invalid urls, urls past the depth limit, urls the
        site rules refuse and urls already queued are dropped (counted in :meth:`stats`).
        Returns how many urls were newly accepted. Durable when it returns."""
        items: list[_Item] = []
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
            items.append((found.url, int(found.depth), int(found.link_index), source_cld,
                          float(found.source_weight), int(found.source_tier),
                          bool(found.is_sitemap), bool(found.is_html), float(found.opic_cash),
                          code, max(0, int(found.policy_depth)),
                          _clean_anchor(found.anchor_text)))
        return self._call(("add", self._now(), items))

    def set_needy_queries(self, queries: Iterable[needy_mod.NeedyQuery]) -> bool:
        """Score urls against these needy queries from now on (replacing the previous ones;
        an empty list switches needy scoring off). The needy lane is rescored. False (and
        nothing journaled) when the queries did not change."""
        rows = tuple(sorted((str(q.text), float(q.frequency), float(q.relevance))
                            for q in queries))
        needy_mod.NeedyIndex([needy_mod.NeedyQuery(*row) for row in rows])  # validate
        self._check_open()
        if rows == self._needy_queries:
            return False
        self._call(("needy", self._now(), rows))
        return True

    def needy_matches(self, url: str, anchor_text: str = "") -> list[str]:
        """The needy queries a url (with an anchor text) matches now."""
        if self._needy_index is None:
            return []
        return self._needy_index.matches(needy_mod.describe(url, [anchor_text]))

    def add_robots(self, host: str, rules: RobotsRules | str | bytes | None,
                   status: int = 200) -> None:
        """Robots data for ``host`` — an origin ``scheme://host[:port]`` or any url on it (the
        robots.txt url itself will do). ``rules`` is the robots.txt text or parsed rules;
        ``status`` the HTTP status of the robots.txt fetch (0 for a failure without one).
        Waiting urls of the host are filtered by the rules and released into UrlQueue."""
        origin = self._origin(host)
        resolved = rules_for_status(rules, status, user_agent=self._cfg.user_agent,
                                    max_crawl_delay=self._cfg.max_crawl_delay)
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
        if self._pool is not None:
            tiers: tuple[tuple[int, int], ...] = ((0, self._pool.ready_count),)
        else:
            tiers = tuple((k, len(lane)) for k, lane in sorted(self._tiers.items()))
        counters = self._counters
        dropped = tuple(sorted((k[8:], v) for k, v in counters.items()
                               if k.startswith("dropped_")))
        return QueueStats(
            tiers=tiers,
            robots_txt_queued=len(self._robots_lane),
            waiting_robots=sum(len(lane) for lane in self._wait.values()),
            waiting_hosts=sum(1 for lane in self._wait.values() if len(lane)),
            crawl_delayed=sum(len(lane) for lane in self._delayed.values()),
            delayed_hosts=sum(1 for lane in self._delayed.values() if len(lane)),
            seen=counters["seen"],
            scheduled=counters["scheduled"],
            outstanding_schedules=len(self._outstanding),
            acknowledged_schedules=counters["acknowledged"],
            hosts=len(self._hosts),
            company_level_domains=len(self._cld),
            dropped=dropped,
            needy_queries=len(self._needy_index) if self._needy_index is not None else 0,
            needy_queued=len(self._needy_heap),
            needy_top=self._needy_top(),
        )

    def cld_counters(self, host: str) -> tuple[int, float, float]:
        """(SEEN_URLS, WEIGHTED_SEEN_URLS, WEIGHTED_INCOMING_URLS) of ``host``'s CLD."""
        return self._cld.get(cld_hash(company_level_domain(host)))

    def opic_scores(self, url: str) -> tuple[float, float] | None:
        """(cash, history) of ``url`` in OPIC order; None when unknown or another order."""
        if self._pool is None:
            return None
        row = self._pool.lookup(_url_hash(url))
        if row is None:
            return None
        return float(self._pool.cash[row]), float(self._pool.history[row])

    def outstanding(self) -> list[Schedule]:
        """The schedules handed out and not yet acknowledged, oldest first."""
        return [out.schedule for out in self._outstanding.values()]

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
                self._flush_pending()

    def _dispatch_one(self, record: tuple[Any, ...]) -> Any:
        kind, t = record[0], record[1]
        self._ctx.day = _day_stamp(t)
        self._last_call_changed = True
        if kind == "add":
            return self._apply_add(record[2])
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

    # -- adding -----------------------------------------------------------------------------

    def _cld_key(self, host: str) -> int:
        key = self._cld_keys.get(host)
        if key is None:
            if len(self._cld_keys) > 200_000:
                self._cld_keys.clear()
            key = cld_hash(company_level_domain(host))
            self._cld_keys[host] = key
        return key

    def _host(self, origin: str) -> _Host:
        host = self._hosts.get(origin)
        if host is None:
            host = _Host()
            if self._cfg.robots is RobotsBehaviour.IGNORE:
                host.rules = ALLOW_ALL
            self._hosts[origin] = host
        return host

    def _apply_add(self, items: list[_Item]) -> int:
        cfg = self._cfg
        rules = cfg.site_rules
        check_rules = bool(rules.disallowed) or rules.restrict
        max_depth = cfg.max_depth
        pool = self._pool
        extra_cash: dict[str, float] = {}
        # links to one url in one batch merge: the most trusting policy wins (policy rule 1),
        # their anchor texts are kept together, in OPIC each earns its cash
        merged: dict[str, list[Any]] = {}
        for item in items:
            item = tuple(item) + (_DEFAULT, 0, "")[max(0, len(item) - 9):]
            url = item[0]
            cash = item[8] * self._cash_factor(item[9])
            held = merged.get(url)
            if held is None:
                merged[url] = [*item[:8], cash, item[9], item[10], item[11]]
                continue
            extra_cash[url] = extra_cash.get(url, 0.0) + cash
            best = pol.more_trusting((pol.FROM_CODE[held[9]], held[10]),
                                     (pol.FROM_CODE[item[9]], item[10]))
            held[9], held[10] = pol.CODE[best[0]], best[1]
            if item[11] and item[11] not in held[11].split(" | ") and held[11].count("|") < 4:
                held[11] = f"{held[11]} | {item[11]}" if held[11] else item[11]
        kept: list[tuple[_Item, str, str]] = []
        cfg_distrust = cfg.distrust_max_depth
        for item_list in merged.values():
            item = tuple(item_list)
            url = item[0]
            try:
                check_storable(url)
                origin, host = split_origin(url)
            except InvalidUrlError:
                self._count("dropped_invalid")
                continue
            if 0 <= max_depth < item[1]:
                self._count("dropped_depth")
                continue
            if check_rules and not rules.permits(url):
                self._count("dropped_site_rules")
                continue
            if pol.dropped(pol.FROM_CODE[item[9]], item[10], cfg_distrust):
                self._count("dropped_distrust")  # not in the Bloom filter: rule 2
                continue
            kept.append((item, origin, host))
        if not kept:
            return 0
        digests = url_digests([entry[0][0] for entry in kept])
        if pool is not None:
            hashes = url_hashes(digests).tolist()
            fresh_rows = []
            for position, url_hash in enumerate(hashes):
                row = pool.lookup(url_hash)
                if row is None:
                    fresh_rows.append(position)
                    continue
                url = kept[position][0][0]
                cash = kept[position][0][8] + extra_cash.get(url, 0.0)
                if cash:
                    pool.credit(row, cash)
            kept = [kept[p] for p in fresh_rows]
            digests = digests[fresh_rows]
            hashes = [hashes[p] for p in fresh_rows]
        new = self._bloom.add_many(digests)
        accepted = 0
        for position, is_new in enumerate(new.tolist()):
            if not is_new:
                self._count("dropped_duplicate")
                continue
            item, origin, host = kept[position]
            url, depth, link_index, source_cld, source_weight, source_tier = item[:6]
            key = self._cld_key(host)
            incoming = 0.0
            if source_cld and cld_hash(source_cld) != key:
                incoming = incoming_increment(source_weight, source_tier)
            flags = (FLAG_SITEMAP if item[6] else 0) | (0 if item[7] else FLAG_NON_HTML)
            code, policy_depth, anchor = item[9], int(item[10]), str(item[11])
            if pool is not None:
                cash = item[8] + extra_cash.get(url, 0.0)
                pool.insert(hashes[position], url, depth, cash, opic.WAITING)
                if code != _DEFAULT:
                    self._opic_policy[hashes[position]] = (code, policy_depth)
            accepted += 1
            self._route(url, depth, float(link_index), flags, incoming, origin, host,
                        code, policy_depth, anchor)
        self._count("seen", accepted)
        return accepted

    def _cash_factor(self, code: str) -> float:
        """OPIC: a favored link's cash counts double, a distrusted link's half."""
        return 2.0 if code == "f" else 0.5 if code == "x" else 1.0

    def _robots_url(self, origin: str) -> str:
        return origin + "/robots.txt"

    def _route(self, url: str, depth: int, weight: float, flags: int, incoming: float,
               origin: str, host: str, policy: str = _DEFAULT, policy_depth: int = 0,
               anchor: str = "") -> None:
        """A new url: wait for robots, or enter UrlQueue, or be refused."""
        state = self._host(origin)
        if url == self._robots_url(origin):
            if state.rules is None and not state.robots_queued:
                self._queue_robots(origin, state)
            self._drop_opic(url)
            return
        if state.rules is None:
            lane = self._wait.get(origin)
            if lane is None:
                lane = self._wait[origin] = Lane(self._ctx, f"{WAIT_DIR}/{host_hash(origin)}")
            lane.push(_record(url, depth, weight, -1, flags, incoming, policy, policy_depth,
                              anchor))
            if not state.robots_queued:
                self._queue_robots(origin, state)
            return
        if self._allowed(state, url, origin):
            self._enqueue(url, depth, weight, flags, incoming, host, policy, policy_depth,
                          anchor)
        else:
            self._count("dropped_robots")
            self._drop_opic(url)

    def _allowed(self, state: _Host, url: str, origin: str) -> bool:
        assert state.rules is not None
        if state.rules.allowed(url):
            return True
        return (self._cfg.robots is RobotsBehaviour.ALLOW_LANDING_PAGE
                and url == origin + "/")

    def _queue_robots(self, origin: str, state: _Host) -> None:
        state.robots_queued = True
        state.robots_attempts += 1
        robots_url = self._robots_url(origin)
        self._bloom.add(robots_url)
        self._robots_lane.push(_record(robots_url, 0, 0.0, 0, FLAG_NON_HTML, 0.0))

    def _enqueue(self, url: str, depth: int, weight: float, flags: int, incoming: float,
                 host: str, policy: str = _DEFAULT, policy_depth: int = 0,
                 anchor: str = "") -> None:
        """File a url that robots allowed into UrlQueue: update its CLD, pick its tier (shifted
        by its policy); with needy queries active it is scored at the end of the call."""
        wseen, wincoming = self._cld.update(self._cld_key(host),
                                            seen_increment(int(weight)), incoming)
        order = self._cfg.order
        if self._pool is not None:
            row = self._pool.lookup(_url_hash(url))
            if row is not None:
                self._pool.set_state(row, opic.READY)
            return
        if order is CrawlOrder.BREADTH_FIRST:
            tier = max(0, depth)
        else:
            tier = budget_tier(wseen, wincoming, is_sitemap=bool(flags & FLAG_SITEMAP),
                               is_html=not flags & FLAG_NON_HTML)
        cfg = self._cfg
        tier = max(0, tier + pol.tier_adjustment(pol.FROM_CODE[policy], cfg.favor_tier_bonus,
                                                 cfg.distrust_tier_penalty))
        record = _record(url, depth, weight, tier, flags, 0.0, policy, policy_depth, anchor)
        if self._needy_index is not None:
            self._pending.append(record)
        else:
            self._tier_lane(tier).push(record)

    # -- the needy lane ---------------------------------------------------------------------

    def _flush_pending(self) -> None:
        """Score the records filed during this call: a positive need score puts a url in the
        needy lane, otherwise it goes to its tier."""
        records, self._pending = self._pending, []
        index = self._needy_index
        if index is None:
            for record in records:
                self._tier_lane(int(record.split("\t", 4)[3])).push(record)
            return
        need = index.scores([_description(record) for record in records])
        cfg = self._cfg
        for record, score in zip(records, need.tolist(), strict=True):
            fields = record.split("\t")
            if score <= 0:
                self._tier_lane(int(fields[3])).push(record)
                continue
            code, policy_depth, _ = _parse_policy(record)
            value = needy_mod.importance(pol.trust(pol.FROM_CODE[code]), int(float(fields[2])),
                                         0.0)
            priority = needy_mod.combined_priority(value, score, cfg.importance_weight,
                                                   cfg.need_weight)
            self._needy_seq += 1
            heapq.heappush(self._needy_heap, (-priority, self._needy_seq, record))
        limit = cfg.needy_lane_size
        if len(self._needy_heap) > limit:
            keep = heapq.nsmallest(limit, self._needy_heap)
            spill = len(self._needy_heap) - limit
            for entry in heapq.nlargest(spill, self._needy_heap):
                self._tier_lane(int(entry[2].split("\t", 4)[3])).push(entry[2])
            self._needy_heap = keep
            heapq.heapify(self._needy_heap)

    def _apply_needy(self, rows: tuple[tuple[str, float, float], ...]) -> bool:
        self._needy_queries = tuple(tuple(row) for row in rows)  # type: ignore[misc]
        self._build_needy_index()
        old = [entry[2] for entry in self._needy_heap]
        self._needy_heap = []
        self._pending.extend(old)
        if not self._replaying:
            logger.info("crawl queue %s: %d needy queries; needy lane rescored (%d urls)",
                        self.root, len(rows), len(old))
        return True

    def _build_needy_index(self) -> None:
        cfg = self._cfg
        if (not self._needy_queries or cfg.need_weight <= 0 or self._pool is not None):
            self._needy_index = None
            return
        index = needy_mod.NeedyIndex(
            [needy_mod.NeedyQuery(*row) for row in self._needy_queries],
            w=cfg.shingle_width, rho=cfg.shingle_rho)
        self._needy_index = index if len(index) else None

    def _needy_top(self) -> tuple[tuple[str, float, float, tuple[str, ...]], ...]:
        index = self._needy_index
        if index is None or not self._needy_heap:
            return ()
        best = heapq.nsmallest(_NEEDY_TOP, self._needy_heap)
        descriptions = [_description(entry[2]) for entry in best]
        need = index.scores(descriptions)
        return tuple((entry[2].split("\t", 1)[0], -entry[0], float(score),
                      tuple(index.matches(description)[:5]))
                     for entry, score, description in zip(best, need.tolist(), descriptions,
                                                           strict=True))

    def _tier_lane(self, tier: int) -> Lane:
        lane = self._tiers.get(tier)
        if lane is None:
            lane = self._tiers[tier] = Lane(self._ctx, f"{URL_QUEUE}/{TIER_PREFIX}{tier}")
        return lane

    def _drop_opic(self, url: str) -> None:
        if self._pool is not None:
            row = self._pool.lookup(_url_hash(url))
            if row is not None:
                self._pool.set_state(row, opic.DEAD)

    # -- robots, errors, validators ---------------------------------------------------------

    def _apply_robots(self, origin: str, rules: RobotsRules) -> None:
        state = self._host(origin)
        if self._cfg.robots is RobotsBehaviour.IGNORE:
            state.robots_queued = False
            return
        state.rules = rules
        state.robots_queued = False
        self._release_waiting(origin, state)
        host = split_origin(origin + "/")[1]
        sitemaps = [url for url in getattr(rules, "sitemaps", ()) or ()
                    if isinstance(url, str) and url.startswith(origin + "/")]
        if sitemaps:
            self._apply_add([(url, 1, 0, company_level_domain(host), 0.0, 0, True, False, 0.0)
                             for url in sitemaps])

    def _release_waiting(self, origin: str, state: _Host) -> None:
        lane = self._wait.pop(origin, None)
        if lane is None:
            return
        host = split_origin(origin + "/")[1]
        released = refused = 0
        for record in lane.pop_all():
            url, depth, weight, _, flags, incoming = _parse(record)
            if self._allowed(state, url, origin):
                self._enqueue(url, depth, weight, flags, incoming, host,
                              *_parse_policy(record))
                released += 1
            else:
                self._drop_opic(url)
                refused += 1
        self._count("dropped_robots", refused)
        self._garbage.extend(lane.all_files())
        if not self._replaying:
            logger.info("robots %s: released %d waiting urls, refused %d",
                        origin, released, refused)

    def _apply_errors(self, origin: str, count: int) -> None:
        if count >= self._cfg.error_threshold:
            state = self._host(origin)
            if state.error_delay < self._cfg.error_crawl_delay and not self._replaying:
                logger.info("host %s: %d errors, crawl-delayed %.0fs", origin, count,
                            self._cfg.error_crawl_delay)
            state.error_delay = max(state.error_delay, self._cfg.error_crawl_delay)

    def _apply_fetched(self, rows: list[tuple[str, str | None, float | None]]) -> None:
        if not self._cfg.recrawl_enabled:
            return
        digests = url_digests([row[0] for row in rows])
        for url_hash, (_, etag, expires) in zip(url_hashes(digests).tolist(), rows,
                                                strict=True):
            if etag or expires is not None:
                self._etag[url_hash] = (etag or None, expires)
            else:
                self._etag.pop(url_hash, None)

    # -- scheduling -------------------------------------------------------------------------

    def _apply_schedule(self, now: float, requester: str | None) -> Schedule | None:
        self._last_call_changed = False
        if requester is not None:
            held = self._requesters.get(requester)
            if held is not None and held in self._outstanding:
                return self._outstanding[held].schedule
        cfg = self._cfg
        if cfg.recrawl_enabled:
            if self._bloom_epoch is None:
                self._bloom_epoch = now
                self._last_call_changed = True
            elif now - self._bloom_epoch >= cfg.recrawl_days * 86400.0:
                self._bloom.clear()
                self._bloom_epoch = now
                self._last_call_changed = True
        for sid, out in self._outstanding.items():
            if out.schedule.deadline <= now:
                schedule = replace(out.schedule, issued_at=now,
                                   deadline=now + cfg.schedule_timeout,
                                   reissue=out.schedule.reissue + 1)
                del self._outstanding[sid]
                out.schedule = schedule
                out.requester = requester
                self._outstanding[sid] = out
                if requester is not None:
                    self._requesters[requester] = sid
                self._last_call_changed = True
                if not self._replaying:
                    logger.warning("schedule %s timed out; handed out again (%d urls)",
                                   sid, len(schedule.entries))
                return schedule
        if not self._anything_queued():
            return None
        self._last_call_changed = True
        return self._build(now, requester)

    def _anything_queued(self) -> bool:
        if len(self._robots_lane):
            return True
        if self._cfg.max_pages and self._counters["scheduled"] >= self._cfg.max_pages:
            return False
        if self._pool is not None:
            return self._pool.ready_count > 0
        return bool(self._needy_heap) or any(len(lane) for lane in self._tiers.values())

    def _build(self, now: float, requester: str | None) -> Schedule | None:
        cfg = self._cfg
        size = cfg.schedule_size
        sid = f"{self._token}-{self._seq + 1}"
        builder = _Builder(self, sid, now)
        # robots.txt urls first: nothing else of their hosts can be scheduled before them
        while builder.pos < size:
            record = self._robots_lane.pop()
            if record is None:
                break
            url, depth, weight, tier, _, _ = _parse(record)
            builder.place(url, depth, weight, tier, 0.0, None, robots=True)
        if self._pool is not None:
            builder.fill_from_pool(self._pool)
        else:
            builder.fill_from_needy()
            builder.fill_from_tiers()
        if not builder.entries:
            return None
        self._seq += 1
        entries = tuple(sorted(builder.entries, key=lambda entry: entry.slot))
        schedule = Schedule(sid, entries, now, now + cfg.schedule_timeout, cfg.round_size)
        delayed = tuple(builder.delayed_hosts)
        for origin in delayed:
            self._hosts[origin].busy = sid
        self._outstanding[sid] = _Outstanding(schedule, delayed, tuple(builder.robots_origins),
                                              requester)
        if requester is not None:
            self._requesters[requester] = sid
        self._count("scheduled", builder.pages)
        if not self._replaying:
            logger.info("schedule %s: %d urls (%d robots.txt), %d parked, %d delayed hosts",
                        sid, len(entries), len(entries) - builder.pages, builder.parked,
                        len(delayed))
        return schedule

    def _park(self, origin: str, record: str) -> None:
        lane = self._delayed.get(origin)
        if lane is None:
            lane = self._delayed[origin] = Lane(self._ctx,
                                                f"{DELAYED_DIR}/{host_hash(origin)}")
        lane.push(record)

    def _apply_requeue(self, rows: list[tuple[str, int, float, int, str, int]]) -> int:
        for url, depth, weight, tier, code, policy_depth in rows:
            if self._pool is not None:
                row = self._pool.lookup(_url_hash(url))
                if row is not None:
                    self._pool.set_state(row, opic.READY)
                continue
            self._tier_lane(tier).push(_record(url, depth, weight, tier, 0, 0.0, code,
                                               policy_depth))
        self._counters["scheduled"] = max(0, self._counters["scheduled"] - len(rows))
        self._count("requeued", len(rows))
        return len(rows)

    def _apply_ack(self, sid: str) -> bool:
        out = self._outstanding.pop(sid, None)
        if out is None:
            self._last_call_changed = False
            return False
        self._count("acknowledged")
        if out.requester is not None and self._requesters.get(out.requester) == sid:
            del self._requesters[out.requester]
        for origin in out.delayed_hosts:
            state = self._hosts[origin]
            if state.busy == sid:
                state.busy = None
            self._requeue_parked(origin)
        for origin in out.robots_origins:
            state = self._hosts[origin]
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
        lane = self._delayed.pop(origin, None)
        if lane is None:
            return
        for record in lane.pop_all():
            if self._pool is not None:
                row = self._pool.lookup(_url_hash(record.split("\t", 1)[0]))
                if row is not None:
                    self._pool.set_state(row, opic.READY)
            elif self._needy_index is not None:
                self._pending.append(record)
            else:
                tier = int(record.split("\t", 4)[3])
                self._tier_lane(tier).push(record)
        self._garbage.extend(lane.all_files())

    # -- checkpoints ------------------------------------------------------------------------

    def _checkpoint(self) -> None:
        cfg = self._cfg
        sync = cfg.fsync
        gen = self._gen + 1
        lanes: dict[str, Any] = {"tiers": {}, "wait": {}, "delayed": {}}
        garbage = list(self._garbage)
        for tier, lane in self._tiers.items():
            lanes["tiers"][tier], dead = lane.checkpoint()
            garbage.extend(dead)
        lanes["robots"], dead = self._robots_lane.checkpoint()
        garbage.extend(dead)
        for name, group in (("wait", self._wait), ("delayed", self._delayed)):
            for origin, lane in group.items():
                lanes[name][origin], dead = lane.checkpoint()
                garbage.extend(dead)
        if sync:
            for rel in sorted(self._ctx.dirty_files):
                path = self.root / rel
                if path.exists():
                    fsync_file(path)
            parents = {str(Path(rel).parent) for rel in self._ctx.new_dirs}
            parents |= {str(Path(rel).parent) for rel in self._ctx.dirty_files}
            for rel in sorted(parents, key=len, reverse=True):
                if (self.root / rel).is_dir():
                    fsync_dir(self.root / rel)
        self._ctx.dirty_files.clear()
        self._ctx.new_dirs.clear()
        state = {
            "format": _FORMAT,
            "token": self._token,
            "config": cfg,
            "hosts": self._hosts,
            "lanes": lanes,
            "outstanding": self._outstanding,
            "requesters": self._requesters,
            "counters": self._counters,
            "rr": self._rr,
            "seq": self._seq,
            "bloom_epoch": self._bloom_epoch,
            "pool": self._pool.to_state() if self._pool is not None else None,
            "needy_heap": self._needy_heap,
            "needy_seq": self._needy_seq,
            "needy_queries": self._needy_queries,
            "opic_policy": self._opic_policy,
        }
        write_blob(self.root / STATE_DIR / f"state.{gen}.bin", _STATE_MAGIC, _FORMAT,
                   pickle.dumps(state, protocol=5), sync=sync)
        self._bloom.save(self.root / BLOOM_DIR / f"bloom.{gen}.bin", sync=sync)
        self._cld.save(self.root / CLD_DIR / f"cld.{gen}.bin", sync=sync)
        write_blob(self.root / ETAG_DIR / f"etag.{gen}.bin", _ETAG_MAGIC, _FORMAT,
                   pickle.dumps(self._etag, protocol=5), sync=sync)
        journal_path = self.root / JOURNAL_DIR / f"journal.{gen}.log"
        journal_path.unlink(missing_ok=True)
        journal = JournalWriter(journal_path, sync=sync)
        if sync:
            fsync_dir(journal_path.parent)
        atomic_write(self.root / "CURRENT", f"{gen}\n".encode(), sync=sync)
        # committed: generation gen is now the one a restart loads
        if self._journal is not None:
            self._journal.close()
        self._journal = journal
        self._gen = gen
        self._garbage = []
        for rel in garbage:
            (self.root / rel).unlink(missing_ok=True)
            self._prune_dirs((self.root / rel).parent)
        self._remove_other_generations(gen)

    def _prune_dirs(self, folder: Path) -> None:
        stop = {self.root / name for name in LANE_ROOTS} | {self.root}
        while folder not in stop:
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent

    def _remove_other_generations(self, gen: int) -> None:
        for folder, stem in ((STATE_DIR, "state"), (BLOOM_DIR, "bloom"), (CLD_DIR, "cld"),
                             (ETAG_DIR, "etag"), (JOURNAL_DIR, "journal")):
            for path in (self.root / folder).iterdir():
                name = path.name
                keep = name in (f"{stem}.{gen}.bin", f"{stem}.{gen}.log")
                if not keep:
                    path.unlink(missing_ok=True)

    def _load(self, gen: int) -> None:
        _, payload = read_blob(self.root / STATE_DIR / f"state.{gen}.bin", _STATE_MAGIC,
                               _FORMAT)
        try:
            state = pickle.loads(payload)
        except Exception as exc:  # a checksummed payload that does not unpickle
            raise CorruptQueueError(f"state does not load: {exc}",
                                    str(self.root / STATE_DIR)) from exc
        self._gen = gen
        self._cfg = state["config"]
        self._ctx.buffer_limit = self._cfg.url_buffer
        self._ctx.max_file_bytes = self._cfg.max_file_bytes
        self._token = state["token"]
        self._hosts = state["hosts"]
        self._outstanding = state["outstanding"]
        self._requesters = state["requesters"]
        self._counters = state["counters"]
        self._rr = state["rr"]
        self._seq = state["seq"]
        self._bloom_epoch = state["bloom_epoch"]
        lanes = state["lanes"]
        self._tiers = {tier: Lane(self._ctx, s.rel_dir, s) for tier, s in lanes["tiers"].items()}
        self._robots_lane = Lane(self._ctx, lanes["robots"].rel_dir, lanes["robots"])
        self._wait = {o: Lane(self._ctx, s.rel_dir, s) for o, s in lanes["wait"].items()}
        self._delayed = {o: Lane(self._ctx, s.rel_dir, s) for o, s in lanes["delayed"].items()}
        self._pool = opic.CashPool.from_state(state["pool"]) if state["pool"] else None
        self._needy_heap = list(state.get("needy_heap", []))
        self._needy_seq = int(state.get("needy_seq", 0))
        self._needy_queries = tuple(state.get("needy_queries", ()))
        self._opic_policy = dict(state.get("opic_policy", {}))
        self._build_needy_index()
        self._bloom = BloomFilter.load(self.root / BLOOM_DIR / f"bloom.{gen}.bin")
        self._cld = CldTable.load(self.root / CLD_DIR / f"cld.{gen}.bin")
        _, etag = read_blob(self.root / ETAG_DIR / f"etag.{gen}.bin", _ETAG_MAGIC, _FORMAT)
        self._etag = pickle.loads(etag)
        self._garbage = []

    def _lanes(self) -> list[Lane]:
        return [*self._tiers.values(), self._robots_lane, *self._wait.values(),
                *self._delayed.values()]

    def _clean_files(self) -> None:
        """After loading a checkpoint: cut url files back to their committed lengths and delete
        the ones the checkpoint does not reference (written after it, or already read)."""
        committed: dict[str, int] = {}
        for lane in self._lanes():
            committed.update((str(rel), int(length)) for rel, length in lane.files)
        removed = truncated = 0
        for top in LANE_ROOTS:
            base = self.root / top
            for dirpath, _dirnames, filenames in os.walk(base, topdown=False):
                folder = Path(dirpath)
                for name in filenames:
                    path = folder / name
                    rel = str(path.relative_to(self.root))
                    length = committed.get(rel)
                    if length is None or not name.endswith(URL_FILES_EXTENSION):
                        path.unlink()
                        removed += 1
                        continue
                    size = path.stat().st_size
                    if size < length:
                        raise CorruptQueueError(
                            f"url file has {size} bytes, checkpoint committed {length}", rel)
                    if size > length:
                        os.truncate(path, length)
                        truncated += 1
                if folder != base:
                    try:
                        folder.rmdir()
                    except OSError:
                        pass
        missing = [rel for rel in committed if not (self.root / rel).exists()]
        if missing:
            raise CorruptQueueError(f"{len(missing)} committed url files are missing",
                                    missing[0])
        if removed or truncated:
            logger.info("crawl queue %s: removed %d stray url files, truncated %d",
                        self.root, removed, truncated)

    def destroy(self) -> None:
        """Close and delete the whole queue directory (a crawl that is closed for good)."""
        self.close()
        shutil.rmtree(self.root)


class _Builder:
    """Fills one schedule: slot placement, crawl-delayed hosts' shares, limits, recrawl
    checks."""

    def __init__(self, queue: CrawlQueue, sid: str, now: float) -> None:
        cfg = queue._cfg
        self.queue = queue
        self.sid = sid
        self.now = now
        self.size = cfg.schedule_size
        self.follow = cfg.robots is not RobotsBehaviour.IGNORE
        self.recrawl = cfg.recrawl_enabled
        self.budget = (cfg.max_pages - queue._counters["scheduled"]) if cfg.max_pages else math.inf
        self.cld_cap = (max(1, math.floor(cfg.max_cld_share * self.size))
                        if cfg.max_cld_share < 1.0 else 0)
        self.cld_counts: dict[int, int] = {}
        self.pos = 0
        # seconds of a schedule a delayed host's urls may fill (an older checkpoint's
        # configuration, read while replaying its journal, has no such field)
        self.delayed_seconds = getattr(cfg, "delayed_schedule_seconds",
                                       DELAYED_SCHEDULE_SECONDS)
        self.delayed_counts: dict[str, int] = {}
        self.entries: list[ScheduleEntry] = []
        self.delayed_hosts: dict[str, None] = {}
        self.robots_origins: list[str] = []
        self.pages = 0
        self.parked = 0
        self.deferred: list[tuple[int, str]] = []

    def full(self) -> bool:
        return self.pos >= self.size or self.budget <= 0

    def place(self, url: str, depth: int, weight: float, tier: int, delay: float,
              etag: str | None, *, robots: bool = False, origin: str = "",
              policy: str = CrawlPolicy.DEFAULT.value, policy_depth: int = 0) -> bool:
        """Put a url in the next slot. False when there is none for it: the schedule is full,
        or the url's host is crawl-delayed and already has its share of the schedule,
        ``ceil(delayed_schedule_seconds / delay)`` urls (the fetcher paces them by time)."""
        if self.pos >= self.size:
            return False
        if delay > 0:
            count = self.delayed_counts.get(origin, 0)
            if count >= max(1, math.ceil(self.delayed_seconds / delay)):
                return False
            self.delayed_counts[origin] = count + 1
            self.delayed_hosts[origin] = None
        slot = self.pos
        self.pos += 1
        self.entries.append(ScheduleEntry(url, depth, weight, tier, delay, etag, slot, policy,
                                          policy_depth))
        if robots:
            self.robots_origins.append(url[: -len("/robots.txt")])
        else:
            self.pages += 1
            self.budget -= 1
        return True

    def consider(self, record: str, url: str, depth: int, weight: float, tier: int) -> str:
        """Try to schedule one queued url: 'placed', 'parked', 'dropped' or 'deferred'."""
        queue = self.queue
        origin, host = split_origin(url)
        state = queue._host(origin)
        etag = None
        if self.recrawl:
            validators = queue._etag.get(_url_hash(url))
            if validators is not None:
                etag, expires = validators
                if expires is not None and expires > self.now:
                    queue._count("dropped_fresh")
                    return "dropped"
        key = 0
        if self.cld_cap:
            key = queue._cld_key(host)
            if self.cld_counts.get(key, 0) >= self.cld_cap:
                self.deferred.append((tier, record))
                return "deferred"
        delay = state.delay(self.follow)
        if delay > 0 and state.busy is not None and state.busy != self.sid:
            queue._park(origin, record)
            self.parked += 1
            return "parked"
        code, policy_depth, _ = _parse_policy(record)
        if not self.place(url, depth, weight, tier, delay, etag, origin=origin,
                          policy=pol.FROM_CODE[code].value, policy_depth=policy_depth):
            queue._park(origin, record)
            self.delayed_hosts[origin] = None  # released when this schedule is acknowledged
            self.parked += 1
            return "parked"
        if self.cld_cap:
            self.cld_counts[key] = self.cld_counts.get(key, 0) + 1
        return "placed"

    def fill_from_needy(self) -> None:
        """The needy lane first, best priority first; urls over the domain cap wait there."""
        queue = self.queue
        heap = queue._needy_heap
        held: list[tuple[float, int, str]] = []
        while heap and not self.full():
            entry = heapq.heappop(heap)
            record = entry[2]
            url, depth, weight, tier, _, _ = _parse(record)
            if self.consider(record, url, depth, weight, tier) == "deferred":
                self.deferred.pop()
                held.append(entry)
        for entry in held:
            heapq.heappush(heap, entry)

    def fill_from_tiers(self) -> None:
        queue = self.queue
        tiers = sorted(tier for tier, lane in queue._tiers.items() if len(lane))
        if not tiers:
            return
        if queue._cfg.order is CrawlOrder.BREADTH_FIRST:
            order = tiers
        else:
            start = next((i for i, tier in enumerate(tiers) if tier >= queue._rr), 0)
            order = tiers[start:] + tiers[:start]
            queue._rr = order[0] + 1
        scan_limit = 4 * self.size + 1000
        scanned = 0
        for tier in order:
            lane = queue._tiers[tier]
            while not self.full() and scanned < scan_limit:
                record = lane.pop()
                if record is None:
                    break
                scanned += 1
                url, depth, weight, _, _, _ = _parse(record)
                self.consider(record, url, depth, weight, tier)
            if self.full() or scanned >= scan_limit:
                break
        for tier, record in self.deferred:
            queue._tier_lane(tier).push(record)

    def fill_from_pool(self, pool: opic.CashPool) -> None:
        queue_consider = self.consider
        opic_policy = self.queue._opic_policy
        deferred: list[int] = []
        while not self.full() and pool.ready_count:
            want = int(min(self.size - self.pos, self.budget))
            rows = pool.take(2 * want + 16)
            if not rows:
                break
            used = 0
            for row in rows:
                if self.full():
                    break
                used += 1
                url = pool.urls[row]
                depth = int(pool.depth[row])
                code, policy_depth = (opic_policy.get(_url_hash(url), (_DEFAULT, 0))
                                      if opic_policy else (_DEFAULT, 0))
                record = _record(url, depth, 0.0, 0, 0, 0.0, code, policy_depth)
                outcome = queue_consider(record, url, depth, float(pool.cash[row]), 0)
                if outcome == "placed":
                    cash = pool.schedule(row)
                    last = self.entries[-1]
                    self.entries[-1] = replace(last, weight=cash)
                elif outcome == "parked":
                    pool.state[row] = opic.PARKED
                elif outcome == "dropped":
                    pool.state[row] = opic.DONE
                else:
                    deferred.append(row)
            pool.untake(rows[used:])
        pool.untake(deferred)
        self.deferred.clear()
