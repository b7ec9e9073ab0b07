"""An archive queue's freshness report: the capture times of the copies it indexed and the
records by outcome, kept across a stop and resume (crawler.core.archive.queue)."""

from __future__ import annotations

from crawler.core.archive.queue import ArchiveQueue, ArchiveQueueConfig
from crawler.core.archive.source import ArchiveKind, ArchiveSource
from crawler.core.freshness import freshness_figures
from crawler.core.scheduler.revisits import VisitRow


def row(url: str, outcome: str, at: float, indexed: bool = True) -> VisitRow:
    return VisitRow(url, outcome, at, None, None, None, b"\1" * 24 if indexed else None,
                    0, "d", 0, 0)


def test_capture_times_and_outcomes_survive_a_restart(tmp_path) -> None:
    (tmp_path / "in").mkdir()
    source = ArchiveSource(ArchiveKind.WARC, str(tmp_path / "in"))
    config = ArchiveQueueConfig(server=0, num_servers=1, timestamp=1_700_000_000)
    queue = ArchiveQueue.open(tmp_path / "q", source, config, clock=lambda: 2_000_000_000.0)
    assert freshness_figures(queue.freshness(), 2e9)["copies"] == 0
    queue.record_visits([row("http://a.test/1", "new", 1_000_000_000.0),
                         row("http://a.test/2", "new", 1_000_000_100.0),
                         row("http://a.test/3", "noindex", 1_500_000_000.0, indexed=False),
                         row("http://a.test/4", "unknown", 1_600_000_000.0)])
    queue.close()
    again = ArchiveQueue.open(tmp_path / "q", source, config, clock=lambda: 2_000_000_000.0)
    figures = freshness_figures(again.freshness(), 2_000_000_000.0)
    assert figures["copies"] == 2 and figures["new"] == 2 and figures["noindex"] == 1
    assert figures["removed"] == 1 and figures["revisits"] == figures["revisits_waiting"] == 0
    assert abs(figures["median_age"] - 1e9) <= figures["bucket_seconds"]
    again.close()
