"""How old the indexed copies of a crawl's pages are, and what their last visits found.

Layer: ``crawler.core`` (pure Python, numpy). The crawl queue keeps one :class:`CopyTimes` and
the outcome counts of its urls (:mod:`crawler.core.scheduler.revisits`); each queue server
reports them in its heartbeat (:func:`freshness_report`); the glue sums the reports of a
crawl's queue servers (:func:`merge_reports`) onto the crawl's row, and the crawl page turns
them into ages as it is shown (:func:`freshness_figures`): the age of a copy is *now minus
the time the copy in the index was fetched*, so a page revisited unchanged (or answered 304)
keeps the age of its copy.

:class:`CopyTimes` is a histogram of fetch times (Unix seconds) over buckets
``[k * width, (k + 1) * width)``. ``width`` starts at one second and doubles (buckets merging
pairwise) whenever more than :data:`MAX_BUCKETS` buckets are used, so a crawl of days keeps a
thousand buckets at most and a quantile is off by at most one bucket width (at most about
a five-hundredth of the time between the oldest and the newest copy). Histograms of several
queue servers merge by re-bucketing to the widest width. A quantile is read at the middle of
its bucket.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

MAX_BUCKETS = 1024  # ~20 KB of JSON in a heartbeat
# the outcomes a report counts, in the order the crawl page lists them
# (crawler.core.transport.visits)
OUTCOMES = ("new", "changed", "unchanged", "not_modified", "gone", "noindex", "error")


class CopyTimes:
    """A histogram of the fetch times of the copies in an index (see the module)."""

    __slots__ = ("buckets", "width")

    def __init__(self, width: int = 1, buckets: Mapping[int, int] | None = None) -> None:
        if width < 1:
            raise ValueError("a bucket width is at least one second")
        self.width = int(width)
        self.buckets: dict[int, int] = {int(k): int(v) for k, v in (buckets or {}).items()
                                        if int(v) > 0}

    def __len__(self) -> int:
        """The number of copies counted."""
        return sum(self.buckets.values())

    def add(self, fetched_at: float) -> None:
        key = int(fetched_at // self.width)
        self.buckets[key] = self.buckets.get(key, 0) + 1
        if len(self.buckets) > MAX_BUCKETS:
            self._coarsen()

    def remove(self, fetched_at: float) -> None:
        """Forget one copy fetched at ``fetched_at`` (its bucket may have merged since: the
        key is taken at the current width)."""
        key = int(fetched_at // self.width)
        count = self.buckets.get(key, 0)
        if count <= 1:
            self.buckets.pop(key, None)
        else:
            self.buckets[key] = count - 1

    def _coarsen(self) -> None:
        while len(self.buckets) > MAX_BUCKETS:
            self.rebucket(self.width * 2)

    def rebucket(self, width: int) -> None:
        """Use buckets ``width`` seconds wide (a multiple of the current width)."""
        if width == self.width:
            return
        if width % self.width:
            raise ValueError(f"width {width} is not a multiple of {self.width}")
        factor = width // self.width
        merged: dict[int, int] = {}
        for key, count in self.buckets.items():
            merged[key // factor] = merged.get(key // factor, 0) + count
        self.width, self.buckets = width, merged

    def quantile(self, q: float) -> float | None:
        """The fetch time below which a share ``q`` (0..1) of the copies were fetched (the
        middle of the bucket holding that copy); None without copies."""
        if not self.buckets:
            return None
        keys = np.array(sorted(self.buckets), dtype=np.int64)
        counts = np.array([self.buckets[k] for k in keys.tolist()], dtype=np.int64)
        total = int(counts.sum())
        rank = min(total - 1, max(0, int(np.ceil(q * total)) - 1))
        at = int(np.searchsorted(np.cumsum(counts), rank + 1))
        return float(keys[at] * self.width + self.width / 2)

    def to_json(self) -> dict[str, Any]:
        return {"width": self.width, "buckets": {str(k): v for k, v in self.buckets.items()}}

    @classmethod
    def from_json(cls, data: Any) -> CopyTimes:
        if not isinstance(data, dict):
            return cls()
        return cls(int(data.get("width", 1)), {int(k): int(v)
                                               for k, v in (data.get("buckets") or {}).items()})

    @classmethod
    def merged(cls, parts: Iterable[CopyTimes]) -> CopyTimes:
        """One histogram of ``parts`` (re-bucketed to the widest width, a power of two)."""
        parts = list(parts)
        width = 1
        for part in parts:
            width = max(width, part.width)
        out = cls(width)
        for part in parts:
            copy = cls(part.width, part.buckets)
            copy.rebucket(width)
            for key, count in copy.buckets.items():
                out.buckets[key] = out.buckets.get(key, 0) + count
        out._coarsen()
        return out


def freshness_report(copies: CopyTimes, outcomes: Mapping[str, int], revisits: int,
                     waiting: int) -> dict[str, Any]:
    """What a queue server reports about the copies of its shard: the histogram, the urls by
    the outcome of their last visit, the revisits scheduled so far and the urls waiting to be
    due again."""
    return {"copies": copies.to_json(),
            "outcomes": {name: int(outcomes.get(name, 0)) for name in OUTCOMES},
            "revisits": int(revisits), "revisits_waiting": int(waiting)}


def merge_reports(reports: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """The reports of a crawl's queue servers as one (counts summed, histograms merged)."""
    reports = [r for r in reports if isinstance(r, Mapping)]
    outcomes = dict.fromkeys(OUTCOMES, 0)
    for report in reports:
        for name in OUTCOMES:
            outcomes[name] += int((report.get("outcomes") or {}).get(name, 0))
    copies = CopyTimes.merged(CopyTimes.from_json(r.get("copies")) for r in reports)
    return freshness_report(copies, outcomes, sum(int(r.get("revisits", 0)) for r in reports),
                            sum(int(r.get("revisits_waiting", 0)) for r in reports))


def freshness_figures(report: Mapping[str, Any] | None, now: float) -> dict[str, Any]:
    """What the crawl page shows at ``now``: the number of copies, their median and
    90th-percentile ages in seconds (None without copies; the 90th percentile of the ages
    is ``now`` minus the 10th percentile of the fetch times), the outcome counts, with
    ``removed`` (404/410 and noindex) and ``unchanged_total`` (unchanged and 304) added."""
    report = report or {}
    copies = CopyTimes.from_json(report.get("copies"))
    median, oldest_tenth = copies.quantile(0.5), copies.quantile(0.1)
    outcomes = {name: int((report.get("outcomes") or {}).get(name, 0)) for name in OUTCOMES}
    return {
        "copies": len(copies),
        "median_age": None if median is None else round(max(0.0, now - median), 1),
        "p90_age": None if oldest_tenth is None else round(max(0.0, now - oldest_tenth), 1),
        "bucket_seconds": copies.width,
        **outcomes,
        "unchanged_total": outcomes["unchanged"] + outcomes["not_modified"],
        "removed": outcomes["gone"] + outcomes["noindex"],
        "revisits": int(report.get("revisits", 0)),
        "revisits_waiting": int(report.get("revisits_waiting", 0)),
    }
