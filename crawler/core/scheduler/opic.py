"""OPIC cash and history for the page-importance crawl order (seed 000, after Abiteboul et al.).

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
a url resets its cash to 0.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

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
        from .bloom import url_digests, url_hashes

        pool = cls()
        pool.urls = list(data["urls"])
        pool.depth = array("i", data["depth"])
        n = len(pool.urls)
        size = max(1024, n * 2)
        for name in ("cash", "history", "state"):
            column = np.zeros(size, dtype=getattr(pool, name).dtype)
            column[:n] = data[name]
            setattr(pool, name, column)
        if n:
            hashes = url_hashes(url_digests(pool.urls))
            pool.index = {int(h): row for row, h in enumerate(hashes.tolist())}
        pool.ready_count = int(np.count_nonzero(pool.state[:n] == READY))
        return pool
