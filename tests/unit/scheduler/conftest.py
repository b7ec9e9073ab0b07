"""Fixtures for the crawl-queue tests: a queue factory with a controllable clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.core.definition.crawl import RobotsBehaviour
from crawler.core.scheduler import CrawlQueue, SchedulerConfig

T0 = 1_750_000_000.0


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


QueueFactory = Callable[..., CrawlQueue]


@pytest.fixture
def make_queue(tmp_path: Path, clock: Clock) -> Iterator[QueueFactory]:
    """``make_queue(**config)`` opens a queue in ``tmp_path/q`` (small Bloom filter, no fsync:
    kill -9 durability does not need it and tmpfs-less disks are slow)."""
    opened: list[CrawlQueue] = []

    def factory(path: Path | None = None, **overrides: Any) -> CrawlQueue:
        settings: dict[str, Any] = {"bloom_expected_urls": 100_000, "fsync": False}
        settings.update(overrides)
        queue = CrawlQueue.open(path or tmp_path / "q", SchedulerConfig(**settings),
                                clock=clock)
        opened.append(queue)
        return queue

    yield factory
    for queue in opened:
        queue.close()


IGNORE = RobotsBehaviour.IGNORE


def drain(queue: CrawlQueue, now: float | None = None) -> list[str]:
    """Take and acknowledge schedules until none is left; the urls in order."""
    urls: list[str] = []
    while (schedule := queue.next_schedule(now)) is not None:
        urls.extend(schedule.urls)
        assert queue.acknowledge(schedule.id)
    return urls
