"""The schedule builder: fills one schedule's slots from the queue's lanes.

Layer: ``crawler.core.scheduler``. :class:`CrawlQueue` makes one :class:`ScheduleBuilder` per
schedule and fills it in this order: robots.txt urls (:meth:`ScheduleBuilder.place` with
``robots=True``; nothing else of their hosts can go before them), the needy lane
(:meth:`ScheduleBuilder.fill_from_needy`), then the crawl order
(:meth:`.orders.CrawlOrderStrategy.fill`), which offers urls one at a time to
:meth:`ScheduleBuilder.consider`.

Crawl-delayed hosts. The seed spaces a delayed host's urls a request round (100 slots) apart;
here the pacing is by time instead: a schedule holds at most
``ceil(delayed_schedule_seconds / delay)`` urls of a delayed host (at least one, in any slots),
and the fetcher requests them one at a time, each once the delay since the host's previous
request has passed. Further urls of such a host are parked (:mod:`.politeness`) until the
schedule is acknowledged. ``max_cld_share`` caps the slots one company-level domain may fill;
urls over the cap are *deferred* (back to their lane for a later schedule), and so are the
urls of a site past its hourly quota (:class:`HourlyQuotas`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from crawler.core.definition.siterules import SiteRules
from crawler.core.scheduler.config import SchedulerConfig
from crawler.core.scheduler.needy_lane import HeapEntry, NeedyLane
from crawler.core.scheduler.ordering.formulas import split_origin
from crawler.core.scheduler.politeness import Politeness
from crawler.core.scheduler.record import QueuedUrl
from crawler.core.scheduler.revisits import UrlVisit, Validators
from crawler.core.scheduler.values import ScheduleEntry
from indexer.core.urls import url_hash


class HourlyQuotas:
    """Urls scheduled in the current hour under each quota of the crawl's disallowed sites
    (Yioop's ``site#quota``: :attr:`crawler.core.definition.siterules.SiteRules.quotas`), by
    the quota's rule text. Part of the queue's deterministic state (checkpointed: a replayed
    schedule decides as the live one did). A url over its quota stays queued for a later
    hour (Yioop drops it unseen; kept, nothing is lost)."""

    __slots__ = ("hour", "used")

    def __init__(self, hour: int = -1, used: dict[str, int] | None = None) -> None:
        self.hour = hour
        self.used: dict[str, int] = dict(used or {})

    def to_json(self) -> dict[str, Any]:
        return {"hour": self.hour, "used": dict(self.used)}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> HourlyQuotas:
        if not data:
            return cls()
        return cls(int(data["hour"]), {str(k): int(v) for k, v in data["used"].items()})

    def room(self, rules: SiteRules, url: str, host: str, now: float) -> str | None:
        """The quota ``url`` counts against ("" for none), or None when it is used up for
        this hour."""
        quota = rules.quota_of(url, host)
        if quota is None:
            return ""
        hour = int(now // 3600)
        if hour != self.hour:
            self.hour, self.used = hour, {}
        source, limit = quota
        return source if self.used.get(source, 0) < limit else None

    def use(self, source: str) -> None:
        if source:
            self.used[source] = self.used.get(source, 0) + 1


class ScheduleBuilder:
    """One schedule being filled: slot placement, crawl-delayed hosts' shares, the page
    budget (``max_pages``), the domain cap and recrawl checks. After filling, ``entries``,
    ``delayed_hosts`` (origins this schedule now holds busy), ``robots_origins``, ``pages``
    and ``parked`` describe what was done."""

    def __init__(self, cfg: SchedulerConfig, sid: str, now: float, scheduled: int,
                 politeness: Politeness, validators: Validators,
                 cld_key: Callable[[str], int], count: Callable[[str], None],
                 refuse: Callable[[str, str], None] | None = None,
                 quotas: HourlyQuotas | None = None) -> None:
        self.sid = sid
        self.now = now
        self.size = cfg.schedule_size
        self.follow = politeness.follow
        self.recrawl = cfg.recrawl_enabled
        self.budget = (cfg.max_pages - scheduled) if cfg.max_pages else math.inf
        self.cld_cap = (max(1, math.floor(cfg.max_cld_share * self.size))
                        if cfg.max_cld_share < 1.0 else 0)
        self.delayed_seconds = cfg.delayed_schedule_seconds
        self._politeness = politeness
        self._validators = validators
        self._cld_key = cld_key
        self._count = count
        self._refuse = refuse
        self._rules = cfg.site_rules
        self._quotas = quotas if cfg.site_rules.quotas else None
        self.cld_counts: dict[int, int] = {}
        self.delayed_counts: dict[str, int] = {}
        self.pos = 0
        self.entries: list[ScheduleEntry] = []
        self.delayed_hosts: dict[str, None] = {}
        self.robots_origins: list[str] = []
        self.pages = 0
        self.parked = 0
        self.deferred: list[tuple[int, str]] = []   # (tier, url-file line)

    def full(self) -> bool:
        return self.pos >= self.size or self.budget <= 0

    def place(self, record: QueuedUrl, delay: float, visit: UrlVisit | None, *,
              robots: bool = False, origin: str = "") -> bool:
        """Put a url in the next slot (with the validators and text hash of its last
        ``visit``, for a conditional re-fetch). False when there is none for it: the schedule
        is full, or the url's host is crawl-delayed and already has its share of the
        schedule."""
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
        if visit is None:
            entry = ScheduleEntry(record.url, record.depth, record.weight, record.tier, delay,
                                  None, slot, record.policy_name, record.policy_depth)
        else:
            entry = ScheduleEntry(record.url, record.depth, record.weight, record.tier, delay,
                                  visit.etag, slot, record.policy_name, record.policy_depth,
                                  visit.last_modified, visit.text_hash)
        self.entries.append(entry)
        if robots:
            self.robots_origins.append(record.url[: -len("/robots.txt")])
        else:
            self.pages += 1
            self.budget -= 1
        return True

    def set_last_weight(self, weight: float) -> None:
        """Change the weight of the entry placed last (OPIC: the cash it was scheduled with)."""
        self.entries[-1] = replace(self.entries[-1], weight=weight)

    def consider(self, tier: int, line: str | None = None,
                 record: QueuedUrl | None = None) -> str:
        """Try to schedule one queued url, given as its url-file ``line`` or its ``record``
        (the line is parsed only if the url is placed): 'placed', 'parked', 'dropped' (fresh
        by its Expires, or of a host the operator excluded: refused) or 'deferred' (domain
        cap, or the url's site used its quota for this hour)."""
        if record is not None:
            url = record.url
        else:
            assert line is not None
            url = line[:line.find("\t")]
        origin, host = split_origin(url)
        state = self._politeness.host(origin)
        if state.excluded:
            if self._refuse is not None:
                self._refuse("excluded", url)
            return "dropped"
        visit = None
        if self.recrawl:
            visit = self._validators.get(url_hash(url))
            if visit is not None and visit.copy_at is None and visit.expires is not None \
                    and visit.expires > self.now:
                self._count("dropped_fresh")
                return "dropped"
        quota = ""
        if self._quotas is not None:
            room = self._quotas.room(self._rules, url, host, self.now)
            if room is None:
                self.deferred.append((tier, line if line is not None else record.to_line()))
                return "deferred"
            quota = room
        key = 0
        if self.cld_cap:
            key = self._cld_key(host)
            if self.cld_counts.get(key, 0) >= self.cld_cap:
                self.deferred.append((tier, line if line is not None else record.to_line()))
                return "deferred"
        delay = state.delay(self.follow)
        if delay > 0 and state.busy is not None and state.busy != self.sid:
            self._park(origin, record, line)
            return "parked"
        if record is None:
            record = QueuedUrl.from_line(line)
        if record.tier != tier:
            record = replace(record, tier=tier)
        if not self.place(record, delay, visit, origin=origin):
            self._park(origin, record, line)
            self.delayed_hosts[origin] = None  # released when this schedule is acknowledged
            return "parked"
        if self.cld_cap:
            self.cld_counts[key] = self.cld_counts.get(key, 0) + 1
        if quota:
            self._quotas.use(quota)  # type: ignore[union-attr]
        return "placed"

    def _park(self, origin: str, record: QueuedUrl | None, line: str | None) -> None:
        if line is None:
            assert record is not None
            line = record.to_line()
        self._politeness.park(origin, line)
        self.parked += 1

    def fill_from_needy(self, lane: NeedyLane) -> None:
        """The needy lane first, best priority first; urls over the domain cap wait there."""
        held: list[HeapEntry] = []
        while len(lane) and not self.full():
            entry = lane.pop()
            tier = QueuedUrl.from_line(entry[2]).tier
            if self.consider(tier, entry[2]) == "deferred":
                self.deferred.pop()
                held.append(entry)
        lane.push_back(held)
