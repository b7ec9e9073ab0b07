"""OPIC cash and history for the page-importance crawl order (the seed, *Yioop Search Engine
Ranking Mechanisms*, after Abiteboul et al.).

Layer: ``crawler.core.scheduler``. Every url the queue has accepted in OPIC order has a row:
url, depth, cash, history (total earnings) and a state. Rows live in growable numpy arrays and
are picked for a schedule with ``argpartition`` over the cash of the ready rows, so choosing the
top ``k`` of ``n`` queued urls costs O(n) vectorised work — fine for a few 10^5 to 10^6 urls per
queue server. The pool is saved whole in the queue's checkpoint (``QueueState``) and rebuilt
from the journal after a crash.

Rules: the seeds share one unit of cash; a crawled page's cash is split equally among its
outlinks (the fetcher computes the share from the schedule entry's weight and sends it as
``DiscoveredUrl.opic_cash``); a url that already has a row is credited (cash and history);
the next urls to crawl are those with the most cash (ties: earlier rows first); scheduling
a url resets its cash to 0. A favored link's cash counts double, a distrusted link's half.

:class:`OpicOrder` is the crawl-order strategy (see :mod:`.orders`) built on the pool; it also
remembers the policy of every url not under the default policy (url files are not kept for
this order, so the policy lives here).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from crawler.core.definition.crawl import CrawlOrder
from crawler.core.scheduler.lanes import Lane, LaneContext
from crawler.core.scheduler.record import DEFAULT_POLICY, LinkItem, QueuedUrl
from indexer.core.urls import hashes_from_halves, md5_halves, url_hash

if TYPE_CHECKING:
    from crawler.core.scheduler.builder import ScheduleBuilder

WAITING = 0   # waiting for robots.txt
READY = 1     # may be scheduled
PARKED = 2    # crawl-delayed, in CrawlDelayedHosts
DONE = 3      # handed out in a schedule
DEAD = 4      # refused by robots.txt
TAKEN = 5     # transient: a candidate of the schedule being built


class CashPool:
    """Rows of OPIC state, keyed by the url's 64-bit hash."""

    def __init__(self) -> None:
        self.index: dict[int, int] = {}
        self.urls: list[str] = []
        self.depth = array("i")
        self.cash = np.zeros(1024, dtype=np.float64)
        self.history = np.zeros(1024, dtype=np.float64)
        self.state = np.zeros(1024, dtype=np.uint8)
        self.ready_count = 0

    def __len__(self) -> int:
        return len(self.urls)

    def lookup(self, url_hash: int) -> int | None:
        return self.index.get(url_hash)

    def credit(self, row: int, amount: float) -> None:
        self.cash[row] += amount
        self.history[row] += amount

    def insert(self, url_hash: int, url: str, depth: int, amount: float, state: int) -> int:
        row = len(self.urls)
        if row >= len(self.cash):
            grow = len(self.cash) * 2
            self.cash = np.resize(self.cash, grow)
            self.history = np.resize(self.history, grow)
            self.state = np.resize(self.state, grow)
            self.cash[row:] = 0.0
            self.history[row:] = 0.0
            self.state[row:] = WAITING
        self.index[url_hash] = row
        self.urls.append(url)
        self.depth.append(depth)
        self.cash[row] = amount
        self.history[row] = amount
        self.state[row] = WAITING
        self.set_state(row, state)
        return row

    def set_state(self, row: int, state: int) -> None:
        old = int(self.state[row])
        if old == READY:
            self.ready_count -= 1
        if state == READY:
            self.ready_count += 1
        self.state[row] = state

    def take(self, k: int) -> list[int]:
        """Up to ``k`` ready rows with the most cash, best first; they become TAKEN."""
        n = len(self.urls)
        ready = np.flatnonzero(self.state[:n] == READY)
        if len(ready) == 0 or k <= 0:
            return []
        if len(ready) > k:
            part = np.argpartition(-self.cash[ready], k - 1)[:k]
            ready = ready[part]
        order = ready[np.lexsort((ready, -self.cash[ready]))]
        self.state[order] = TAKEN
        self.ready_count -= len(order)
        return [int(row) for row in order]

    def untake(self, rows: list[int]) -> None:
        for row in rows:
            self.state[row] = READY
        self.ready_count += len(rows)

    def schedule(self, row: int) -> float:
        """Mark a TAKEN row handed out; returns its cash, which is reset to 0."""
        cash = float(self.cash[row])
        self.cash[row] = 0.0
        self.state[row] = DONE
        return cash

    def to_state(self) -> dict[str, Any]:
        n = len(self.urls)
        return {"urls": self.urls, "depth": self.depth, "cash": self.cash[:n].copy(),
                "history": self.history[:n].copy(), "state": self.state[:n].copy()}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> CashPool:
        pool = cls()
        pool.urls = list(data["urls"])
        pool.depth = array("i")
        pool.depth.frombytes(np.asarray(data["depth"], dtype=np.intc).tobytes())
        n = len(pool.urls)
        size = max(1024, n * 2)
        for name in ("cash", "history", "state"):
            column = np.zeros(size, dtype=getattr(pool, name).dtype)
            column[:n] = data[name]
            setattr(pool, name, column)
        if n:
            hashes = hashes_from_halves(md5_halves(pool.urls))
            pool.index = {int(h): row for row, h in enumerate(hashes.tolist())}
        pool.ready_count = int(np.count_nonzero(pool.state[:n] == READY))
        return pool


_CASH_FACTOR = {"f": 2.0, "x": 0.5}


class OpicOrder:
    """The OPIC crawl order (see the module docstring and :class:`.orders.CrawlOrderStrategy`).
    ``policies`` maps a url hash to ``(policy code, policy depth)`` for urls not under the
    default policy."""

    order: ClassVar[CrawlOrder] = CrawlOrder.OPIC
    has_needy_lane: ClassVar[bool] = False
    unparked_apart: ClassVar[bool] = False

    def __init__(self, ctx: LaneContext) -> None:
        self.pool = CashPool()
        self.policies: dict[int, tuple[str, int]] = {}

    def link_cash(self, cash: float, policy: str) -> float:
        return cash * _CASH_FACTOR.get(policy, 1.0)

    def fresh(self, url_hashes: list[int], items: Sequence[LinkItem],
              cash: dict[str, float]) -> list[int]:
        """Urls that already have a row are credited their links' cash and are not new."""
        pool = self.pool
        fresh = []
        for position, hashed in enumerate(url_hashes):
            row = pool.lookup(hashed)
            if row is None:
                fresh.append(position)
                continue
            amount = cash[items[position].url]
            if amount:
                pool.credit(row, amount)
        return fresh

    def accepted(self, url_hash: int, item: LinkItem, cash: float) -> None:
        self.pool.insert(url_hash, item.url, item.depth, cash, WAITING)
        if item.policy != DEFAULT_POLICY:
            self.policies[url_hash] = (item.policy, int(item.policy_depth))

    def tier(self, depth: int, weighted_seen: float, weighted_incoming: float,
             flags: int) -> int:
        return 0

    def push(self, record: QueuedUrl) -> None:
        self._set(record.url, READY)

    def push_front(self, record: QueuedUrl) -> None:
        """An unparked url is ready again with the cash it kept: the richest go first in
        this order already, whatever their arrival."""
        self._set(record.url, READY)

    def forget(self, url: str) -> None:
        self._set(url, DEAD)

    def unparked_ready(self) -> int:
        """Unparked urls are ready with the rest here (cash decides): never apart."""
        return 0

    def fill_unparked(self, builder: ScheduleBuilder) -> None:
        """Nothing is kept apart (see :meth:`unparked_ready`): places no url."""
        return None

    def _set(self, url: str, state: int) -> None:
        row = self.pool.lookup(url_hash(url))
        if row is not None:
            self.pool.set_state(row, state)

    def ready(self) -> int:
        return self.pool.ready_count

    def tier_counts(self) -> tuple[tuple[int, int], ...]:
        return ((0, self.pool.ready_count),)

    def fill(self, builder: ScheduleBuilder) -> None:
        """Take the richest ready urls (twice what is missing, plus 16, at a time) until the
        schedule is full; each placed url's cash is spent, parked and dropped rows leave the
        ready set, deferred ones (domain cap) stay ready."""
        pool = self.pool
        deferred: list[int] = []
        while not builder.full() and pool.ready_count:
            want = int(min(builder.size - builder.pos, builder.budget))
            rows = pool.take(2 * want + 16)
            if not rows:
                break
            used = 0
            for row in rows:
                if builder.full():
                    break
                used += 1
                outcome = builder.consider(0, record=self._record(row))
                if outcome == "placed":
                    builder.set_last_weight(pool.schedule(row))
                elif outcome == "parked":
                    pool.state[row] = PARKED
                elif outcome == "dropped":
                    pool.state[row] = DONE
                else:
                    deferred.append(row)
            pool.untake(rows[used:])
        pool.untake(deferred)
        builder.deferred.clear()

    def _record(self, row: int) -> QueuedUrl:
        pool = self.pool
        url = pool.urls[row]
        code, policy_depth = (self.policies.get(url_hash(url), (DEFAULT_POLICY, 0))
                              if self.policies else (DEFAULT_POLICY, 0))
        return QueuedUrl(url, int(pool.depth[row]), float(pool.cash[row]), 0, 0, 0.0, code,
                         policy_depth)

    def scores(self, url: str) -> tuple[float, float] | None:
        row = self.pool.lookup(url_hash(url))
        if row is None:
            return None
        return float(self.pool.cash[row]), float(self.pool.history[row])

    def take_for_rescore(self, limit: int) -> list[str]:
        return []  # no needy lane in this order

    def lanes(self) -> list[Lane]:
        return []

    def checkpoint(self) -> tuple[dict[str, Any], list[str]]:
        return {"pool": self.pool.to_state(), "policies": self.policies}, []

    def restore(self, state: dict[str, Any]) -> None:
        self.pool = CashPool.from_state(state["pool"])
        self.policies = dict(state["policies"])
