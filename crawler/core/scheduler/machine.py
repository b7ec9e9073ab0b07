"""The crawl queue's calls applied to its in-memory state: what :class:`.queue.CrawlQueue`
journals, this module does.

Layer: ``crawler.core.scheduler``. A :class:`QueueMachine` takes one journal record at a time
(:meth:`QueueMachine.dispatch`: ``(kind, time, *arguments)`` with kind ``add``, ``robots``,
``errors``, ``fetched``, ``schedule``, ``ack``, ``needy``, ``requeue``, ``release`` or
``host``, the operator's override of one host) and
changes the queue's state deterministically: times come from the record, hashes are md5, url
files are appended with gzip mtime 0. So replaying a journal on the checkpoint it follows
reproduces the queue exactly. It writes no checkpoint and no journal itself (that is
:class:`.queue.CrawlQueue` and :mod:`.durable.checkpoints`).

A new url passes, in order: validity, the depth limit, the site rules, its policy (distrusted
urls past ``distrust_max_depth`` are dropped before they reach the Bloom filter, so a later
trusted link still queues them), the crawl order (OPIC credits urls it already has), the Bloom
filter; then it waits for its host's robots.txt (:mod:`.politeness`), and once robots allow it
its company-level domain's counters are updated and the order files it, its tier shifted by its
policy (favor sooner, distrust later), unless the needy lane (:mod:`.needy_lane`) takes it at
the end of the call.

Refused urls. Each url refused on the way (invalid, past the depth limit, refused by the site
rules, by its policy, by robots.txt, or of a host the operator excluded) is counted as
``dropped_<reason>`` and, outside a replay, kept in :attr:`QueueMachine.refused` as
``(reason, url)`` for the admin's refused-urls list, until the caller takes them (at most
:data:`REFUSED_KEPT` wait; more are only counted). An excluded host's waiting and parked urls
are refused when it is excluded, its queued urls when the crawl order offers them.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any

from crawler.core.definition import policy as pol
from crawler.core.scheduler.builder import HourlyQuotas, ScheduleBuilder
from crawler.core.scheduler.cldtable import CldTable
from crawler.core.scheduler.config import SchedulerConfig
from crawler.core.scheduler.durable.state import QueueSnapshot
from crawler.core.scheduler.errors import CorruptQueueError, InvalidUrlError
from crawler.core.scheduler.filters.scalable_bloom import ScalableBloomFilter
from crawler.core.scheduler.lanes import Lane, LaneContext
from crawler.core.scheduler.needy_lane import NeedyLane
from crawler.core.scheduler.ordering.formulas import (
    check_storable,
    cld_hash,
    incoming_increment,
    seen_increment,
    split_origin,
)
from crawler.core.scheduler.ordering.orders import CrawlOrderStrategy, make_order
from crawler.core.scheduler.outstanding import Outstanding, ScheduleBook
from crawler.core.scheduler.politeness import HostState, Politeness, robots_url
from crawler.core.scheduler.record import LinkItem, QueuedUrl
from crawler.core.scheduler.revisits import Revisits, UrlVisit, Validators, VisitRow
from crawler.core.scheduler.robots import DISALLOW_ALL, RobotsRules
from crawler.core.scheduler.values import Schedule
from indexer.core.urls import company_level_domain, hashes_from_halves, md5_halves

logger = logging.getLogger(__name__)

REFUSED_KEPT = 50_000  # refused urls kept between two takes (the rest are only counted)


def day_stamp(t: float) -> str:
    """The UTC ``YYYYMMDD`` of a Unix time (url files are started per day)."""
    return time.strftime("%Y%m%d", time.gmtime(t))


class QueueMachine:
    """The state of one crawl queue and the calls that change it (see the module docstring).
    ``replaying`` silences the log while a journal is replayed; ``last_call_changed`` tells
    the caller whether the last call changed anything (a schedule request that found nothing
    is not journaled); ``garbage`` lists url files read since the last checkpoint."""

    def __init__(self, ctx: LaneContext, config: SchedulerConfig) -> None:
        self.ctx = ctx
        self.cfg = config
        self.replaying = False
        self.last_call_changed = False
        self.garbage: list[str] = []
        self.cld_keys: dict[str, int] = {}
        self.pending: list[str] = []   # lines filed during one call, scored at its end
        self.token = secrets.token_hex(4)
        self.bloom = ScalableBloomFilter(config.bloom_expected_urls, config.bloom_fp_rate)
        self.cld = CldTable()
        self.politeness = Politeness(ctx, config.robots)
        self.order: CrawlOrderStrategy = make_order(config.order, ctx)
        self.needy = NeedyLane()
        self.book = ScheduleBook()
        self.validators: Validators = {}   # the visit table (.revisits)
        self.revisits = Revisits(ctx)
        self.counters: dict[str, int] = {"seen": 0, "scheduled": 0, "acknowledged": 0}
        self.seq = 0
        self.bloom_epoch: float | None = None
        self.refused: list[tuple[str, str]] = []   # (reason, url), see the module
        self.quotas = HourlyQuotas()  # urls scheduled this hour per site#quota

    def set_config(self, cfg: SchedulerConfig) -> None:
        self.cfg = cfg
        self.ctx.buffer_limit = cfg.url_buffer
        self.ctx.max_file_bytes = cfg.max_file_bytes
        self.politeness.behaviour = cfg.robots

    def lanes(self) -> list[Lane]:
        return [*self.order.lanes(), *self.politeness.lanes(), self.revisits.lane]

    def snapshot(self) -> tuple[QueueSnapshot, list[str]]:
        """Flush the url files (no fsync) and return the state a checkpoint records, with the
        url files it no longer needs; ``garbage`` starts over."""
        order_state, garbage = self.order.checkpoint()
        host_lanes, dead = self.politeness.checkpoint()
        revisits, read = self.revisits.checkpoint()
        garbage = [*self.garbage, *garbage, *dead, *read]
        self.garbage = []
        snapshot = QueueSnapshot(
            token=self.token, config=self.cfg, hosts=self.politeness.hosts,
            host_lanes=host_lanes, order=order_state,
            outstanding=list(self.book.schedules.values()), requesters=self.book.requesters,
            counters=self.counters, seq=self.seq, bloom_epoch=self.bloom_epoch,
            needy_heap=self.needy.heap, needy_seq=self.needy.seq,
            needy_queries=self.needy.queries, revisits=revisits, quotas=self.quotas.to_json())
        return snapshot, garbage

    def restore(self, snap: QueueSnapshot, bloom: ScalableBloomFilter, cld: CldTable,
                validators: Validators) -> None:
        """Take back a checkpoint's state (its configuration too, until replay is done)."""
        self.set_config(snap.config)
        self.token = snap.token
        self.politeness.restore(snap.hosts, snap.host_lanes)
        self.order = make_order(snap.config.order, self.ctx)
        self.order.restore(snap.order)
        self.book.restore(snap.outstanding, snap.requesters)
        self.needy.heap = list(snap.needy_heap)
        self.needy.seq = snap.needy_seq
        self.needy.queries = snap.needy_queries
        self.needy.build_index(snap.config, self.order.has_needy_lane)
        self.counters = snap.counters
        self.seq = snap.seq
        self.bloom_epoch = snap.bloom_epoch
        self.bloom, self.cld = bloom, cld
        self.validators = {h: v if isinstance(v, UrlVisit) else UrlVisit(*v)
                           for h, v in validators.items()}
        self.revisits.restore(self.ctx, snap.revisits)
        self.quotas = HourlyQuotas.from_json(snap.quotas)
        self.garbage = []

    # -- dispatch ---------------------------------------------------------------------------

    def dispatch(self, record: tuple[Any, ...]) -> Any:
        try:
            return self._dispatch_one(record)
        finally:
            if self.pending:
                lines, self.pending = self.pending, []
                self.needy.file(lines, self.cfg, self.order.push)

    def _dispatch_one(self, record: tuple[Any, ...]) -> Any:
        """Apply one journal record: ``(kind, time, *arguments)``."""
        kind, t = record[0], record[1]
        self.ctx.day = day_stamp(t)
        self.last_call_changed = True
        if kind == "add":
            return self._apply_add([LinkItem.from_journal(item) for item in record[2]])
        if kind == "robots":
            return self._apply_robots(record[2], record[3])
        if kind == "errors":
            return self._apply_errors(record[2], record[3])
        if kind == "fetched":
            return self._apply_fetched(record[2])
        if kind == "schedule":  # a 5th item, True: freed delayed hosts only (older: none)
            return self._apply_schedule(record[2], record[3], len(record) > 4 and record[4])
        if kind == "ack":
            return self._apply_ack(record[2])
        if kind == "needy":
            return self._apply_needy(record[2])
        if kind == "requeue":
            return self._apply_requeue(record[2])
        if kind == "release":
            return self._apply_release(record[1], record[2])
        if kind == "host":
            return self._apply_host(record[2], record[3], record[4])
        if kind == "free":
            return self._apply_free(record[2], record[3])
        raise CorruptQueueError(f"unknown journal record {kind!r}")

    def _count(self, name: str, amount: int = 1) -> None:
        if amount:
            self.counters[name] = self.counters.get(name, 0) + amount

    def refuse(self, reason: str, url: str) -> None:
        """Count a refused url as ``dropped_<reason>`` and keep it for the admin."""
        self._count("dropped_" + reason)
        if not self.replaying and len(self.refused) < REFUSED_KEPT:
            self.refused.append((reason, url))

    def _cld_key(self, host: str) -> int:
        key = self.cld_keys.get(host)
        if key is None:
            if len(self.cld_keys) > 200_000:
                self.cld_keys.clear()
            key = cld_hash(company_level_domain(host))
            self.cld_keys[host] = key
        return key

    # -- adding -----------------------------------------------------------------------------

    def _apply_add(self, items: list[LinkItem]) -> int:
        merged, cash = self._merge_links(items)
        kept = self._admissible(merged)
        if not kept:
            return 0
        digests = md5_halves([item.url for item, _, _ in kept])
        hashes = hashes_from_halves(digests).tolist()
        fresh = self.order.fresh(hashes, [item for item, _, _ in kept], cash)
        if len(fresh) != len(kept):
            kept = [kept[p] for p in fresh]
            digests = digests[fresh]
            hashes = [hashes[p] for p in fresh]
        accepted = 0
        for position, is_new in enumerate(self.bloom.add_many(digests).tolist()):
            if not is_new:
                self._count("dropped_duplicate")
                continue
            item, origin, host = kept[position]
            self.order.accepted(hashes[position], item, cash[item.url])
            accepted += 1
            incoming = 0.0
            if item.source_cld and cld_hash(item.source_cld) != self._cld_key(host):
                incoming = incoming_increment(item.source_weight, item.source_tier)
            self._route(item, incoming, origin, host)
        self._count("seen", accepted)
        return accepted

    def _merge_links(self, items: list[LinkItem]) -> tuple[list[LinkItem], dict[str, float]]:
        """Links to one url in one call become one: the most trusting policy, their anchor
        texts together (:meth:`LinkItem.merged`); each earns its cash (OPIC)."""
        link_cash = self.order.link_cash
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
        cfg = self.cfg
        rules = cfg.site_rules
        check_rules = bool(rules.disallowed) or rules.restrict
        kept = []
        for item in items:
            try:
                check_storable(item.url)
                origin, host = split_origin(item.url)
            except InvalidUrlError:
                self.refuse("invalid", item.url)
                continue
            if 0 <= cfg.max_depth < item.depth:
                self.refuse("depth", item.url)
                continue
            refusal = rules.refusal(item.url) if check_rules else ""
            if refusal:
                self.refuse(refusal, item.url)
                continue
            if pol.dropped(pol.FROM_CODE[item.policy], item.policy_depth,
                           cfg.distrust_max_depth):
                self.refuse("distrust", item.url)  # not in the Bloom filter: rule 2
                continue
            kept.append((item, origin, host))
        return kept

    def _route(self, item: LinkItem, incoming: float, origin: str, host: str) -> None:
        """A new url: wait for robots, or be filed, or be refused."""
        politeness = self.politeness
        state = politeness.host(origin)
        url = item.url
        if state.excluded:
            if url != robots_url(origin):
                self.refuse("excluded", url)
            self.order.forget(url)
            return
        if url == robots_url(origin):
            if state.rules is None and not state.robots_queued:
                self._queue_robots(origin, state)
            self.order.forget(url)
            return
        if state.rules is None:
            politeness.wait(origin, QueuedUrl(url, item.depth, float(item.link_index), -1,
                                              item.flags, incoming, item.policy,
                                              item.policy_depth, item.anchor))
            if not state.robots_queued:
                self._queue_robots(origin, state)
            return
        if politeness.allowed(state, url, origin):
            self._enqueue(url, item.depth, float(item.link_index), item.flags, incoming,
                          item.policy, item.policy_depth, item.anchor, host, origin)
        else:
            self.refuse("robots", url)
            self.order.forget(url)

    def _queue_robots(self, origin: str, state: HostState) -> None:
        self.bloom.add(self.politeness.queue_robots(origin, state))

    def _enqueue(self, url: str, depth: int, weight: float, flags: int, incoming: float,
                 policy: str, policy_depth: int, anchor: str, host: str, origin: str) -> None:
        """File a url that robots allowed: update its CLD, pick its tier (shifted by its
        policy); with needy queries active it is scored at the end of the call. A delayed
        host's url goes where its own schedule finds it (:meth:`Politeness.delayed_lane`).
        (Fields, not a record: the hot path of every new url makes its one record here.)"""
        wseen, wincoming = self.cld.update(self._cld_key(host), seen_increment(int(weight)),
                                           incoming)
        cfg = self.cfg
        tier = self.order.tier(depth, wseen, wincoming, flags)
        tier = max(0, tier + pol.tier_adjustment(pol.FROM_CODE[policy], cfg.favor_tier_bonus,
                                                 cfg.distrust_tier_penalty))
        filed = QueuedUrl(url, depth, weight, tier, flags, 0.0, policy, policy_depth, anchor)
        if self.needy.active:
            self.pending.append(filed.to_line())
        elif self.order.unparked_apart and (lane := self.politeness.delayed_lane(origin)):
            if lane == "parked":
                self.politeness.park(origin, filed.to_line())
            else:
                self.order.push_front(filed)
        else:
            self.order.push(filed)

    def _apply_needy(self, rows: tuple[tuple[str, float, float], ...]) -> bool:
        """New needy queries: the lane is rescored and, when a query is new (urls queued
        before it was needy were never matched to it), so are the queued urls of whole tiers
        up to ``needy_rescore_limit`` (:meth:`CrawlOrderStrategy.take_for_rescore`); those
        that match go to the lane, the others back to their tier in their order."""
        known = {row[0] for row in self.needy.queries}
        old = self.needy.set_queries(rows, self.cfg, self.order.has_needy_lane)
        queued: list[str] = []
        if self.needy.active and {row[0] for row in rows} - known:
            queued = self.order.take_for_rescore(self.cfg.needy_rescore_limit)
        # the tiers' own urls first, so those given back keep their order at a tier's head
        self.pending.extend(queued)
        self.pending.extend(old)
        if not self.replaying:
            logger.info("crawl queue %s: %d needy queries; needy lane (%d urls) and %d queued "
                        "urls rescored", self.ctx.root, len(rows), len(old), len(queued))
        return True

    # -- robots, errors, validators ---------------------------------------------------------

    def _apply_robots(self, origin: str, rules: RobotsRules) -> None:
        state = self.politeness.host(origin)
        state.robots_queued = False
        if not self.politeness.follow:
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
        taken = self.politeness.take_waiting(origin)
        if taken is None:
            return
        lines, files = taken
        host = split_origin(origin + "/")[1]
        released = refused = 0
        for line in lines:
            record = QueuedUrl.from_line(line)
            if state.excluded:
                self.refuse("excluded", record.url)
                self.order.forget(record.url)
            elif self.politeness.allowed(state, record.url, origin):
                self._enqueue(record.url, record.depth, record.weight, record.flags,
                              record.incoming, record.policy, record.policy_depth,
                              record.anchor, host, origin)
                released += 1
            else:
                self.order.forget(record.url)
                self.refuse("robots", record.url)
                refused += 1
        self.garbage.extend(files)
        if not self.replaying:
            logger.info("robots %s: released %d waiting urls, refused %d",
                        origin, released, refused)

    def _apply_errors(self, origin: str, count: int) -> None:
        cfg = self.cfg
        if count >= cfg.error_threshold:
            state = self.politeness.host(origin)
            if state.error_delay < cfg.error_crawl_delay and not self.replaying:
                logger.info("host %s: %d errors, crawl-delayed %.0fs", origin, count,
                            cfg.error_crawl_delay)
            state.error_delay = max(state.error_delay, cfg.error_crawl_delay)

    def _apply_fetched(self, rows: list[tuple[Any, ...]]) -> None:
        """Visits of urls (:class:`.revisits.VisitRow`): the copy times and outcome counts
        always, the visit table, retired set and revisit lane with page recrawl on."""
        self.revisits.record([VisitRow.from_journal(row) for row in rows], self.validators,
                             self.cfg.recrawl_enabled)

    # -- scheduling -------------------------------------------------------------------------

    def _apply_schedule(self, now: float, requester: str | None,
                        unparked_only: bool = False) -> Schedule | None:
        self.last_call_changed = False
        held = self.book.held_by(requester)
        if held is not None:
            return held
        if unparked_only:
            if not self.order.unparked_ready():
                return None
            self.last_call_changed = True
            return self._build(now, requester, unparked_only=True)
        cfg = self.cfg
        if cfg.recrawl_enabled and self._release_due(now):
            self.last_call_changed = True
        schedule = self.book.reissue_expired(now, cfg.schedule_timeout, requester)
        if schedule is not None:
            self.last_call_changed = True
            if not self.replaying:
                logger.warning("schedule %s handed out again (copy %d: it timed out, or no "
                               "fetcher held it; %d urls)", schedule.id, schedule.reissue,
                               len(schedule.entries))
            return schedule
        if not self._anything_queued():
            return None
        self.last_call_changed = True
        return self._build(now, requester)

    def _release_due(self, now: float) -> int:
        """Urls due for a revisit at ``now`` go to the crawl order (:mod:`.revisits`); they
        do not count against ``max_pages``. Returns how many."""
        head = self.revisits.head
        released = self.revisits.release(now, self.cfg.recrawl_interval, self.validators,
                                         self.order.push, lambda: self._count("dropped_fresh"))
        if released:
            self.counters["scheduled"] = max(0, self.counters["scheduled"] - released)
        return released or int(head != self.revisits.head)

    def _anything_queued(self) -> bool:
        if len(self.politeness.robots_lane):
            return True
        if self.cfg.max_pages and self.counters["scheduled"] >= self.cfg.max_pages:
            return False
        return bool(len(self.needy)) or self.order.ready() > 0

    def _build(self, now: float, requester: str | None,
               unparked_only: bool = False) -> Schedule | None:
        """robots.txt urls first (nothing else of their hosts can go before them), then the
        needy lane, then the crawl order; ``unparked_only``: just the unparked urls."""
        cfg = self.cfg
        sid = f"{self.token}-{self.seq + 1}"
        politeness = self.politeness
        builder = ScheduleBuilder(cfg, sid, now, self.counters["scheduled"], politeness,
                                  self.validators, self._cld_key, self._count, self.refuse,
                                  self.quotas)
        while not unparked_only and builder.pos < builder.size:
            line = politeness.robots_lane.pop()
            if line is None:
                break
            robots_origin = line[:line.find("\t")][: -len("/robots.txt")]
            if politeness.host(robots_origin).excluded:
                politeness.hosts[robots_origin].robots_queued = False
                continue
            builder.place(QueuedUrl.from_line(line), 0.0, None, robots=True)
        if unparked_only:
            self.order.fill_unparked(builder)
        else:
            builder.fill_from_needy(self.needy)
            self.order.fill(builder)
        if not builder.entries:
            return None
        self.seq += 1
        entries = tuple(sorted(builder.entries, key=lambda entry: entry.slot))
        schedule = Schedule(sid, entries, now, now + cfg.schedule_timeout, cfg.round_size)
        delayed = tuple(builder.delayed_hosts)
        for origin in delayed:
            politeness.hosts[origin].busy = sid
        self.book.add(Outstanding(schedule, delayed, tuple(builder.robots_origins),
                                   requester))
        self._count("scheduled", builder.pages)
        if not self.replaying:
            logger.info("schedule %s: %d urls (%d robots.txt), %d parked, %d delayed hosts",
                        sid, len(entries), len(entries) - builder.pages, builder.parked,
                        len(delayed))
        return schedule

    def _apply_requeue(self, rows: list[tuple[str, int, float, int, str, int]]) -> int:
        for url, depth, weight, tier, code, policy_depth in rows:
            self.order.push(QueuedUrl(url, depth, weight, tier, 0, 0.0, code, policy_depth))
        self.counters["scheduled"] = max(0, self.counters["scheduled"] - len(rows))
        self._count("requeued", len(rows))
        return len(rows)

    def _apply_release(self, now: float, sids: tuple[str, ...]) -> int:
        released = self.book.release(list(sids), now)
        if released and not self.replaying:
            logger.warning("schedules %s: no fetcher holds them; handed out again",
                           ", ".join(released))
        return len(released)

    def _apply_ack(self, sid: str) -> bool:
        out = self.book.pop(sid)
        if out is None:
            self.last_call_changed = False
            return False
        self._count("acknowledged")
        hosts = self.politeness.hosts
        for origin in out.delayed_hosts:
            state = hosts[origin]
            if state.busy == sid:
                state.busy = None
            if state.busy is None:  # (else a later schedule holds it: its urls wait for it)
                self._requeue_parked(origin)
        for origin in out.robots_origins:
            state = hosts[origin]
            if state.rules is not None:
                continue
            state.robots_queued = False     # fetched, but no robots data came back
            if state.robots_attempts >= self.cfg.robots_retries:
                if not self.replaying:
                    logger.warning("robots %s: no answer after %d attempts; host disallowed",
                                   origin, state.robots_attempts)
                state.rules = DISALLOW_ALL
                self._release_waiting(origin, state)
            else:
                self._queue_robots(origin, state)
        return True

    def _apply_free(self, sid: str, origins: list[str]) -> int:
        """The fetcher of schedule ``sid`` is done with these crawl-delayed hosts before the
        rest of the schedule: each is free for the next schedule, its parked urls first in
        it (:meth:`.ordering.orders.CrawlOrderStrategy.push_front`), so a delayed host is
        not idle while the schedule that held it finishes its other hosts' urls. Returns how
        many were freed (hosts the schedule does not hold are ignored)."""
        freed = 0
        for origin in origins:
            state = self.politeness.hosts.get(origin)
            if state is None or state.busy != sid or \
                    not self.book.free_host(sid, origin, lambda url: split_origin(url)[0]):
                continue
            state.busy = None
            self._requeue_parked(origin)
            freed += 1
        return freed

    def _apply_host(self, origin: str, min_delay: float, excluded: bool) -> bool:
        """The operator's override of one host: a minimum delay between its requests, and
        exclusion (its waiting and parked urls are refused now, its queued ones when they
        come up, new ones as they come)."""
        state = self.politeness.host(origin)
        state.min_delay = max(0.0, float(min_delay))
        state.excluded = bool(excluded)
        if state.excluded:
            for take in (self.politeness.take_waiting, self.politeness.take_parked):
                taken = take(origin)
                if taken is None:
                    continue
                lines, files = taken
                for line in lines:
                    url = line[:line.find("\t")]
                    self.order.forget(url)
                    self.refuse("excluded", url)
                self.garbage.extend(files)
        if not self.replaying:
            logger.info("host %s: operator's override: minimum delay %.1fs%s", origin,
                        state.min_delay, ", excluded" if state.excluded else "")
        return True

    def _requeue_parked(self, origin: str) -> None:
        taken = self.politeness.take_parked(origin)
        if taken is None:
            return
        lines, files = taken
        if self.needy.active:
            self.pending.extend(lines)
        else:
            for line in lines:
                self.order.push_front(QueuedUrl.from_line(line))
        self.garbage.extend(files)

