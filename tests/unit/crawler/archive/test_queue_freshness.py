"""An archive queue's freshness report: the capture times of the copies it indexed and the
records by outcome, kept across a stop and resume (crawler.core.archive.queue)."""

from __future__ import annotations

from crawler.core.archive.queue import ArchiveQueue, ArchiveQueueConfig
from crawler.core.archive.source import ArchiveKind, ArchiveSource
from crawler.core.queue_server.freshness import freshness_figures
from crawler.core.scheduler.revisits import VisitRow
from tests.integration.archive.helpers import numbered_warc


def row(url: str, outcome: str, at: float, indexed: bool = True) -> VisitRow:
    return VisitRow(url, outcome, at, None, None, None, b"\1" * 24 if indexed else None,
                    0, "d", 0, 0)


CONFIG = ArchiveQueueConfig(server=0, num_servers=1, timestamp=1_700_000_000)
NOW = 2_000_000_000.0


def open_queue(tmp_path, source: ArchiveSource) -> ArchiveQueue:
    return ArchiveQueue.open(tmp_path / "q", source, CONFIG, clock=lambda: NOW)


def warcs(tmp_path, *names: str, pages: int = 4) -> ArchiveSource:
    folder = tmp_path / "in"
    folder.mkdir()
    for i, name in enumerate(names):
        numbered_warc(folder / f"{i}.warc.gz", name, pages, sentences=2)
    return ArchiveSource(ArchiveKind.WARC, str(folder))


def test_capture_times_and_outcomes_survive_a_restart(tmp_path) -> None:
    source = warcs(tmp_path, "a")
    queue = open_queue(tmp_path, source)
    assert freshness_figures(queue.freshness(), NOW)["copies"] == 0
    urls = queue.next_schedule().urls
    queue.record_visits([row(urls[0], "new", 1_000_000_000.0),
                         row(urls[1], "new", 1_000_000_100.0),
                         row(urls[2], "noindex", 1_500_000_000.0, indexed=False),
                         row(urls[3], "unknown", 1_600_000_000.0)])
    queue.release([queue.outstanding()[0].id])  # saved with the change
    queue.close()
    again = open_queue(tmp_path, source)
    figures = freshness_figures(again.freshness(), NOW)
    assert figures["copies"] == 2 and figures["new"] == 2 and figures["noindex"] == 1
    assert figures["removed"] == 1 and figures["revisits"] == figures["revisits_waiting"] == 0
    assert abs(figures["median_age"] - 1e9) <= figures["bucket_seconds"]
    again.close()


def test_a_schedule_handed_out_again_counts_its_records_once(tmp_path) -> None:
    """The lost fetcher's visits were counted (and saved); the schedule, handed out again
    after a restart, reads every record again: only the one not counted before counts, and a
    late copy of a visit after the schedule is acknowledged counts nothing."""
    source = warcs(tmp_path, "a")
    queue = open_queue(tmp_path, source)
    schedule = queue.next_schedule(requester="lost")
    urls = schedule.urls
    queue.record_visits([row(urls[0], "new", 1e9), row(urls[1], "noindex", 1e9, False)])
    queue.release([schedule.id])
    queue.close()
    again = open_queue(tmp_path, source)
    reissued = again.next_schedule(requester="other")
    assert reissued.id == schedule.id and reissued.urls == urls
    again.record_visits([row(url, "new", 1.2e9) for url in urls])
    again.acknowledge(schedule.id)
    again.record_visits([row(urls[3], "new", 1.3e9)])  # a late copy
    figures = freshness_figures(again.freshness(), NOW)
    assert figures["new"] == 3 and figures["noindex"] == 1 and figures["copies"] == 3
    again.close()


def test_two_captures_of_a_url_in_one_schedule_count_twice(tmp_path) -> None:
    queue = open_queue(tmp_path, warcs(tmp_path, "a", "a", pages=2))
    urls = queue.next_schedule().urls
    assert len(urls) == 4 and len(set(urls)) == 2
    queue.record_visits([row(url, "new", 1e9) for url in [*urls, *urls]])
    assert freshness_figures(queue.freshness(), NOW)["new"] == 4
    queue.close()
