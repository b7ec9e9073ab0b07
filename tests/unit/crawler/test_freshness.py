"""The copies' fetch-time histogram and the freshness figures (issue 21, item 3): quantiles
against numpy's on the same times, within one bucket width, as buckets coarsen and as the
histograms of several queue servers merge; what a visit's outcome is."""

from __future__ import annotations

import numpy as np

from crawler.core.queue_server.freshness import (
    MAX_BUCKETS,
    CopyTimes,
    freshness_figures,
    freshness_report,
    merge_reports,
)
from crawler.core.transport.visits import Outcome, Visit, outcome_of

T0 = 1_700_000_000.0


def lower_quantile(times: np.ndarray, q: float) -> float:
    ordered = np.sort(times)
    return float(ordered[max(0, int(np.ceil(q * len(ordered))) - 1)])


def test_quantiles_within_a_bucket_as_buckets_coarsen() -> None:
    rng = np.random.default_rng(7)
    times = T0 + rng.exponential(3 * 86400.0, 20_000)
    copies = CopyTimes()
    for t in times.tolist():
        copies.add(t)
    assert len(copies.buckets) <= MAX_BUCKETS and copies.width > 1
    for q in (0.1, 0.5, 0.9):
        assert abs(copies.quantile(q) - lower_quantile(times, q)) <= copies.width
    # removing copies (replaced ones) after the buckets merged takes them from the right one
    for t in times[:10_000].tolist():
        copies.remove(t)
    assert len(copies) == 10_000
    assert abs(copies.quantile(0.5) - lower_quantile(times[10_000:], 0.5)) <= copies.width


def test_reports_of_several_queue_servers_merge() -> None:
    a, b = CopyTimes(), CopyTimes()
    for i in range(3000):
        a.add(T0 + i * 100.0)
    for i in range(10):
        b.add(T0 + i)
    merged = merge_reports([
        freshness_report(a, {"new": 3000, "changed": 2}, 4, 5),
        freshness_report(b, {"new": 10, "gone": 1}, 1, 0), None])
    figures = freshness_figures(merged, T0 + 400_000.0)
    width = merged["copies"]["width"]
    assert width == a.width > 1 and figures["copies"] == 3010
    every = np.concatenate([T0 + np.arange(3000) * 100.0, T0 + np.arange(10)])
    assert abs(figures["median_age"] - (400_000.0 - (lower_quantile(every, 0.5) - T0))) <= width
    assert (figures["new"], figures["changed"], figures["gone"], figures["removed"],
            figures["revisits"], figures["revisits_waiting"]) == (3010, 2, 1, 1, 5, 5)
    assert freshness_figures({}, T0)["median_age"] is None


def test_outcomes_of_a_visit() -> None:
    assert outcome_of(404, False, False, None, "ab") is Outcome.GONE
    assert outcome_of(410, True, False, None, None) is Outcome.GONE
    assert outcome_of(503, True, False, None, "ab") is Outcome.ERROR
    assert outcome_of(304, False, False, None, "ab") is Outcome.NOT_MODIFIED
    assert outcome_of(200, False, False, "ab", "ab") is Outcome.NOINDEX
    assert outcome_of(200, False, True, "ab", None) is Outcome.NEW
    assert outcome_of(200, False, True, "ab", "ab") is Outcome.UNCHANGED
    assert outcome_of(200, False, True, "cd", "ab") is Outcome.CHANGED
    visit = Visit("http://a.example/", Outcome.CHANGED, 200, T0, '"e"', None, "x",
                  bytes(range(24)), 2, "favor", 1)
    assert Visit.from_wire(visit.to_wire()) == visit
    assert Visit.from_wire(["http://a.example/", None, 5.0]).outcome is Outcome.UNKNOWN
