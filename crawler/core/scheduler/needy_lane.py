"""The needy lane: queued urls that match the crawl's needy queries, best first.

Layer: ``crawler.core.scheduler``; scoring is :mod:`crawler.core.definition.needy` (the seed's needy
queries). With needy queries set and ``need_weight`` > 0, the urls filed during one queue call
are scored together at its end (:meth:`NeedyLane.file`): a url whose need score is positive
enters the lane, an in-memory heap ordered by
:func:`crawler.core.definition.needy.combined_priority` (ties: first filed first), which every
schedule drains before the crawl order's own urls; the others go back to the order. The lane holds
at most ``needy_lane_size`` urls; the lowest spill back to the order. New needy queries rescore
the lane (urls no longer needed return to the order); urls already with the order are not
rescored. The heap is saved whole in the queue's checkpoint.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from crawler.core.definition import needy as needy_mod
from crawler.core.definition import policy as pol
from crawler.core.scheduler.config import SchedulerConfig
from crawler.core.scheduler.record import QueuedUrl

NeedyRow = tuple[str, float, float]          # (query text, frequency, relevance)
HeapEntry = tuple[float, int, str]           # (-priority, sequence, url-file line)
_TOP = 10


def _description(record: QueuedUrl) -> list[list[str]]:
    return needy_mod.describe(record.url, record.anchors)


class NeedyLane:
    """The lane and the needy queries it scores against. ``active`` is False when nothing is
    scored (no queries, ``need_weight`` 0, or an order without a needy lane)."""

    def __init__(self) -> None:
        self.heap: list[HeapEntry] = []
        self.seq = 0
        self.queries: tuple[NeedyRow, ...] = ()
        self.index: needy_mod.NeedyIndex | None = None

    def __len__(self) -> int:
        return len(self.heap)

    @property
    def active(self) -> bool:
        return self.index is not None

    def set_queries(self, rows: tuple[NeedyRow, ...], cfg: SchedulerConfig,
                    enabled: bool) -> list[str]:
        """Score against ``rows`` from now on; returns the lines of the lane, which the caller
        files again (so they are rescored). ``enabled`` is False for orders without a lane."""
        self.queries = tuple(tuple(row) for row in rows)  # type: ignore[misc]
        self.build_index(cfg, enabled)
        old = [entry[2] for entry in self.heap]
        self.heap = []
        return old

    def build_index(self, cfg: SchedulerConfig, enabled: bool) -> None:
        if not self.queries or cfg.need_weight <= 0 or not enabled:
            self.index = None
            return
        index = needy_mod.NeedyIndex([needy_mod.NeedyQuery(*row) for row in self.queries],
                                     w=cfg.shingle_width, rho=cfg.shingle_rho)
        self.index = index if len(index) else None

    def file(self, lines: list[str], cfg: SchedulerConfig,
             elsewhere: Callable[[QueuedUrl], None]) -> None:
        """Score the urls filed during one call: a positive need score puts a url in the lane,
        the others (and any spill past ``needy_lane_size``) go to ``elsewhere``."""
        index = self.index
        records = [QueuedUrl.from_line(line) for line in lines]
        if index is None:
            for record in records:
                elsewhere(record)
            return
        need = index.scores([_description(record) for record in records])
        for line, record, score in zip(lines, records, need.tolist(), strict=True):
            if score <= 0:
                elsewhere(record)
                continue
            value = needy_mod.importance(pol.trust(pol.FROM_CODE[record.policy]),
                                         int(record.weight))
            priority = needy_mod.combined_priority(value, score, cfg.importance_weight,
                                                   cfg.need_weight)
            self.seq += 1
            heapq.heappush(self.heap, (-priority, self.seq, line))
        limit = cfg.needy_lane_size
        if len(self.heap) > limit:
            keep = heapq.nsmallest(limit, self.heap)
            for entry in heapq.nlargest(len(self.heap) - limit, self.heap):
                elsewhere(QueuedUrl.from_line(entry[2]))
            self.heap = keep
            heapq.heapify(self.heap)

    def pop(self) -> HeapEntry:
        return heapq.heappop(self.heap)

    def push_back(self, entries: list[HeapEntry]) -> None:
        """Return entries taken with :meth:`pop` that could not be scheduled."""
        for entry in entries:
            heapq.heappush(self.heap, entry)

    def matches(self, url: str, anchor_text: str) -> list[str]:
        if self.index is None:
            return []
        return self.index.matches(needy_mod.describe(url, [anchor_text]))

    def top(self) -> tuple[tuple[str, float, float, tuple[str, ...]], ...]:
        """The best urls: (url, priority, need score, the needy queries it matched)."""
        index = self.index
        if index is None or not self.heap:
            return ()
        best = heapq.nsmallest(_TOP, self.heap)
        records = [QueuedUrl.from_line(entry[2]) for entry in best]
        descriptions = [_description(record) for record in records]
        need = index.scores(descriptions)
        return tuple((record.url, -entry[0], float(score),
                      tuple(index.matches(description)[:5]))
                     for entry, record, score, description
                     in zip(best, records, need.tolist(), descriptions, strict=True))
