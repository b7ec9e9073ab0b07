"""Urls a fetcher hands back unfetched (a stalled host) return to the queue past the Bloom
filter, survive a crash (journal replay), and give back their max_pages budget."""

from __future__ import annotations

import shutil
from pathlib import Path

from crawler.core.definition.crawl import CrawlOrder
from crawler.core.scheduler import CrawlQueue, SchedulerConfig


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def entry_tuple(entry):
    return (entry.url, entry.depth, entry.weight, entry.tier, entry.policy, entry.policy_depth)


def open_queue(path: Path, **overrides) -> CrawlQueue:
    config = SchedulerConfig(schedule_size=10, fsync=False, **overrides)
    return CrawlQueue.open(path, config, clock=Clock())


def test_requeued_urls_are_scheduled_again_even_after_a_crash(tmp_path: Path) -> None:
    queue = open_queue(tmp_path / "q")
    urls = [f"https://a.example/p{i}" for i in range(4)]
    queue.add_seeds(urls)
    queue.add_robots("https://a.example", "", 404)
    first = queue.next_schedule()
    assert first is not None
    handed_back = [e for e in first.entries if e.url in urls[2:]]
    assert queue.requeue(entry_tuple(e) for e in handed_back) == 2
    assert queue.acknowledge(first.id)
    assert queue.add_seeds(urls) == 0  # the Bloom filter still knows them
    shutil.copytree(tmp_path / "q", tmp_path / "crash")  # what a kill -9 leaves behind
    queue.close()
    for path in (tmp_path / "q", tmp_path / "crash"):
        again = open_queue(path)
        second = again.next_schedule()
        assert second is not None and sorted(second.urls) == urls[2:]
        assert again.stats().scheduled == 4  # four urls scheduled in all, not six
        again.close()


def test_requeue_gives_back_the_max_pages_budget(tmp_path: Path) -> None:
    queue = open_queue(tmp_path / "q", max_pages=3)
    queue.add_seeds([f"https://b.example/p{i}" for i in range(3)])
    queue.add_robots("https://b.example", "", 404)
    first = queue.next_schedule()
    assert first is not None and len([e for e in first.entries if not e.is_robots]) == 3
    stalled = next(e for e in first.entries if not e.is_robots)
    queue.requeue([entry_tuple(stalled)])
    queue.acknowledge(first.id)
    second = queue.next_schedule()
    assert second is not None and second.urls == [stalled.url]
    queue.close()


def test_requeue_in_opic_order_makes_the_url_ready_again(tmp_path: Path) -> None:
    queue = open_queue(tmp_path / "q", order=CrawlOrder.OPIC)
    queue.add_seeds(["https://c.example/a", "https://c.example/b"])
    queue.add_robots("https://c.example", "", 404)
    first = queue.next_schedule()
    assert first is not None
    back = next(e for e in first.entries if e.url.endswith("/b"))
    assert queue.requeue([entry_tuple(back)]) == 1
    queue.acknowledge(first.id)
    second = queue.next_schedule()
    assert second is not None and second.urls == ["https://c.example/b"]
    assert queue.requeue([]) == 0
    queue.close()
