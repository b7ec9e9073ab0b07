"""Crawl orders as strategies: which of the queued urls a schedule takes next.

Layer: ``crawler.core.scheduler``. The queue holds one :class:`CrawlOrderStrategy` (made by
:func:`make_order` from :class:`~crawler.core.definition.crawl.CrawlOrder`) and hands it every url
that robots allowed (:meth:`~CrawlOrderStrategy.push`); the schedule builder (:mod:`..builder`) asks
it to fill a schedule after robots.txt urls and the needy lane. Adding an order is adding one
class here and one entry in :data:`ORDERS`.

* :class:`HostBudgetingOrder` (the seed's host budgeting): urls are filed in tiers by their
  company-level domain's counters (:func:`.formulas.budget_tier`), FIFO within a tier; a
  schedule visits the tiers round-robin, starting after the tier the previous one started at.
* :class:`BreadthFirstOrder`: the tier is the depth; a schedule visits tiers lowest first.
* :class:`OpicOrder` (OPIC page importance): no tiers; the urls with the most cash go first
  (:mod:`.opic`). It keeps no needy lane.

Tier files are ``UrlQueue/Tier<k>/`` url files (:mod:`.lanes`). A policy shifts a tiered url's
tier (favor sooner, distrust later; :func:`crawler.core.definition.policy.tier_adjustment`).

Urls a crawl-delayed host had parked come back with :meth:`CrawlOrderStrategy.push_front`
when its schedule is acknowledged. A tiered order takes them before its tiers (from
``UrlQueue/Unparked/``): their host's delay, not their place in a FIFO tier, is what limits
them, and a delayed host that waits behind thousands of faster hosts' urls ends the crawl
alone at one request per delay (the local web's ``requests.readthedocs.io``, ``Crawl-delay: 1``,
waited 70 s for a schedule while other hosts were crawled, then took its last 20 pages at the
end). Only the host's share of a schedule is placed; the rest is parked again. Those urls can
also go out in a schedule of their own, beyond the fetchers' usual number of schedules
(:meth:`CrawlOrderStrategy.fill_unparked`, asked for by
:meth:`crawler.core.queue_server.server.QueueServerCore.take_schedules`): a freed delayed host
otherwise idles until one of the long schedules out ends (22 s of the same host's 37 in a
default-tier crawl).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from crawler.core.definition.crawl import CrawlOrder
from crawler.core.scheduler.lanes import Lane, LaneContext
from crawler.core.scheduler.ordering.formulas import budget_tier
from crawler.core.scheduler.ordering.opic import OpicOrder
from crawler.core.scheduler.record import FLAG_NON_HTML, FLAG_SITEMAP, LinkItem, QueuedUrl

if TYPE_CHECKING:
    from crawler.core.scheduler.builder import ScheduleBuilder

TIER_DIR = "UrlQueue/Tier"
UNPARKED_DIR = "UrlQueue/Unparked"


class CrawlOrderStrategy(Protocol):
    """What the queue needs from a crawl order. Call order per ``add``: :meth:`fresh` (links
    to urls the order already tracks), then :meth:`accepted` per new url, then, once robots
    allowed it, :meth:`tier` and :meth:`push`; :meth:`forget` when robots refused it."""

    order: ClassVar[CrawlOrder]
    has_needy_lane: ClassVar[bool]
    # whether :meth:`push_front`'s urls wait apart (:meth:`fill_unparked` can take just them)
    unparked_apart: ClassVar[bool]

    def link_cash(self, cash: float, policy: str) -> float:
        """What a link's cash share is worth under its policy (0 when the order has none)."""
        ...

    def fresh(self, url_hashes: list[int], items: Sequence[LinkItem],
              cash: dict[str, float]) -> list[int]:
        """Positions of the urls new to the order; the others are credited their links'
        ``cash`` (by url), if the order keeps any."""
        ...

    def accepted(self, url_hash: int, item: LinkItem, cash: float) -> None:
        """A url passed the Bloom filter (it may still wait for robots)."""
        ...

    def tier(self, depth: int, weighted_seen: float, weighted_incoming: float,
             flags: int) -> int:
        """The tier of a url robots allowed, before its policy's shift."""
        ...

    def push(self, record: QueuedUrl) -> None:
        """A url ready to be scheduled (new, requeued, or out of the needy lane)."""
        ...

    def push_front(self, record: QueuedUrl) -> None:
        """A url its crawl-delayed host had parked, ready again: taken before the urls
        :meth:`push` gave, where the order has a FIFO (see the module)."""
        ...

    def forget(self, url: str) -> None:
        """A url robots refused."""
        ...

    def ready(self) -> int:
        """How many urls are ready to be scheduled."""
        ...

    def tier_counts(self) -> tuple[tuple[int, int], ...]:
        ...

    def fill(self, builder: ScheduleBuilder) -> None:
        """Put urls into the schedule ``builder`` is making until it is full."""
        ...

    def unparked_ready(self) -> int:
        """How many urls of :meth:`push_front` wait apart from the others (0 in an order
        that files them with the rest)."""
        ...

    def fill_unparked(self, builder: ScheduleBuilder) -> None:
        """Put only the urls :meth:`unparked_ready` counts into the schedule ``builder`` is
        making (a schedule of freed crawl-delayed hosts, see the module)."""
        ...

    def scores(self, url: str) -> tuple[float, float] | None:
        """(cash, history) of a url in OPIC order; None in other orders."""
        ...

    def take_for_rescore(self, limit: int) -> list[str]:
        """Take queued urls out to be filed again (new needy queries rescore them): whole
        tiers, lowest first, while they hold at most ``limit`` urls in all, each tier's lines
        in its FIFO order (filed again in that order, a tier keeps it). None in an order
        without a needy lane."""
        ...

    def lanes(self) -> list[Lane]:
        ...

    def checkpoint(self) -> tuple[dict[str, Any], list[str]]:
        """The order's state (JSON-able apart from lane states) and the url files read."""
        ...

    def restore(self, state: dict[str, Any]) -> None:
        ...


class TieredOrder:
    """Orders that file urls in FIFO tiers; subclasses say how a tier is chosen and in which
    order a schedule visits the tiers."""

    order: ClassVar[CrawlOrder]
    has_needy_lane: ClassVar[bool] = True
    unparked_apart: ClassVar[bool] = True

    def __init__(self, ctx: LaneContext) -> None:
        self._ctx = ctx
        self.tiers: dict[int, Lane] = {}
        self.unparked = Lane(ctx, UNPARKED_DIR)  # lines of :meth:`push_front`, tier in each

    def link_cash(self, cash: float, policy: str) -> float:
        return 0.0

    def fresh(self, url_hashes: list[int], items: Sequence[LinkItem],
              cash: dict[str, float]) -> list[int]:
        return list(range(len(items)))

    def accepted(self, url_hash: int, item: LinkItem, cash: float) -> None:
        return None

    def tier(self, depth: int, weighted_seen: float, weighted_incoming: float,
             flags: int) -> int:
        raise NotImplementedError

    def visit_order(self, tiers: list[int]) -> list[int]:
        """The non-empty ``tiers`` (ascending) in the order a schedule takes from them."""
        raise NotImplementedError

    def push(self, record: QueuedUrl) -> None:
        self.push_line(record.tier, record.to_line())

    def push_front(self, record: QueuedUrl) -> None:
        self.unparked.push(record.to_line())

    def push_line(self, tier: int, line: str) -> None:
        lane = self.tiers.get(tier)
        if lane is None:
            lane = self.tiers[tier] = Lane(self._ctx, f"{TIER_DIR}{tier}")
        lane.push(line)

    def forget(self, url: str) -> None:
        return None

    def ready(self) -> int:
        return sum(len(lane) for lane in self.tiers.values()) + len(self.unparked)

    def tier_counts(self) -> tuple[tuple[int, int], ...]:
        return tuple((k, len(lane)) for k, lane in sorted(self.tiers.items()))

    def fill(self, builder: ScheduleBuilder) -> None:
        """Take the unparked urls first (see the module), then urls tier by tier in
        :meth:`visit_order`, FIFO within a tier, reading at most ``4 * schedule size + 1000``
        of them; urls the builder deferred go to the back of their tier."""
        self._take_unparked(builder)
        tiers = sorted(tier for tier, lane in self.tiers.items() if len(lane))
        if not tiers:
            self._put_back(builder)
            return
        scan_limit = 4 * builder.size + 1000
        scanned = 0
        for tier in self.visit_order(tiers):
            lane = self.tiers[tier]
            while not builder.full() and scanned < scan_limit:
                line = lane.pop()
                if line is None:
                    break
                scanned += 1
                builder.consider(tier, line)
            if builder.full() or scanned >= scan_limit:
                break
        self._put_back(builder)

    def _put_back(self, builder: ScheduleBuilder) -> None:
        """Urls the builder deferred (domain cap) go to the back of their tier."""
        for tier, line in builder.deferred:
            self.push_line(tier, line)

    def unparked_ready(self) -> int:
        return len(self.unparked)

    def fill_unparked(self, builder: ScheduleBuilder) -> None:
        self._take_unparked(builder)
        self._put_back(builder)

    def _take_unparked(self, builder: ScheduleBuilder) -> None:
        while not builder.full() and (line := self.unparked.pop()) is not None:
            builder.consider(QueuedUrl.from_line(line).tier, line)

    def scores(self, url: str) -> tuple[float, float] | None:
        return None

    def take_for_rescore(self, limit: int) -> list[str]:
        out: list[str] = []
        for tier in sorted(tier for tier, lane in self.tiers.items() if len(lane)):
            lane = self.tiers[tier]
            if len(out) + len(lane) > limit:
                break
            while (line := lane.pop()) is not None:
                out.append(line)
        return out

    def lanes(self) -> list[Lane]:
        return [*self.tiers.values(), self.unparked]

    def checkpoint(self) -> tuple[dict[str, Any], list[str]]:
        garbage: list[str] = []
        states = {}
        for tier, lane in self.tiers.items():
            states[tier], dead = lane.checkpoint()
            garbage.extend(dead)
        unparked, dead = self.unparked.checkpoint()
        garbage.extend(dead)
        return {"tiers": states, "unparked": unparked}, garbage

    def restore(self, state: dict[str, Any]) -> None:
        """The state :meth:`checkpoint` gave (one saved before the unparked lane existed
        has none: it starts empty)."""
        self.tiers = {int(tier): Lane(self._ctx, s.rel_dir, s)
                      for tier, s in state["tiers"].items()}
        unparked = state.get("unparked")
        self.unparked = Lane(self._ctx, UNPARKED_DIR, unparked) if unparked is not None \
            else Lane(self._ctx, UNPARKED_DIR)


class BreadthFirstOrder(TieredOrder):
    """Tier = depth; lower tiers first."""

    order = CrawlOrder.BREADTH_FIRST

    def tier(self, depth: int, weighted_seen: float, weighted_incoming: float,
             flags: int) -> int:
        return max(0, depth)

    def visit_order(self, tiers: list[int]) -> list[int]:
        return tiers


class HostBudgetingOrder(TieredOrder):
    """Tier = the seed's budget tier; tiers visited round-robin (``next_tier`` is where the
    next schedule starts)."""

    order = CrawlOrder.HOST_BUDGETING

    def __init__(self, ctx: LaneContext) -> None:
        super().__init__(ctx)
        self.next_tier = 0

    def tier(self, depth: int, weighted_seen: float, weighted_incoming: float,
             flags: int) -> int:
        return budget_tier(weighted_seen, weighted_incoming,
                           is_sitemap=bool(flags & FLAG_SITEMAP),
                           is_html=not flags & FLAG_NON_HTML)

    def visit_order(self, tiers: list[int]) -> list[int]:
        start = next((i for i, tier in enumerate(tiers) if tier >= self.next_tier), 0)
        order = tiers[start:] + tiers[:start]
        self.next_tier = order[0] + 1
        return order

    def checkpoint(self) -> tuple[dict[str, Any], list[str]]:
        state, garbage = super().checkpoint()
        state["next_tier"] = self.next_tier
        return state, garbage

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        self.next_tier = int(state.get("next_tier", 0))


ORDERS: dict[CrawlOrder, type[CrawlOrderStrategy]] = {
    CrawlOrder.BREADTH_FIRST: BreadthFirstOrder,
    CrawlOrder.HOST_BUDGETING: HostBudgetingOrder,
    CrawlOrder.OPIC: OpicOrder,
}


def make_order(order: CrawlOrder, ctx: LaneContext) -> CrawlOrderStrategy:
    return ORDERS[order](ctx)  # type: ignore[call-arg]
