"""The queue server's scheduler: the crawl queue on disk (seed 000's Scheduler, QueueBundle and
Host Budgeting), breadth-first and OPIC orders, robots.txt and crawl-delay politeness.

Layer: ``crawler.core.scheduler`` (pure Python, no Django). Entry point: :class:`CrawlQueue`.
"""

from __future__ import annotations

from .bloom import BloomFilter
from .config import (
    DOWNLOAD_ERROR_THRESHOLD,
    DOWNLOAD_SIZE_INTERVAL,
    ERROR_CRAWL_DELAY,
    SITEMAP_TIER_PENALTY,
    SchedulerConfig,
)
from .errors import (
    CorruptQueueError,
    InvalidUrlError,
    QueueClosedError,
    QueueLockedError,
    SchedulerConfigError,
    SchedulerError,
)
from .formulas import (
    budget_tier,
    incoming_increment,
    seen_increment,
)
from .queue import CrawlQueue
from .robots import ALLOW_ALL, DISALLOW_ALL, RobotsRules, RobotsTxt
from .values import DiscoveredUrl, QueueStats, Schedule, ScheduleEntry

__all__ = [
    "ALLOW_ALL",
    "DISALLOW_ALL",
    "DOWNLOAD_ERROR_THRESHOLD",
    "DOWNLOAD_SIZE_INTERVAL",
    "ERROR_CRAWL_DELAY",
    "SITEMAP_TIER_PENALTY",
    "BloomFilter",
    "CorruptQueueError",
    "CrawlQueue",
    "DiscoveredUrl",
    "InvalidUrlError",
    "QueueClosedError",
    "QueueLockedError",
    "QueueStats",
    "RobotsRules",
    "RobotsTxt",
    "Schedule",
    "ScheduleEntry",
    "SchedulerConfig",
    "SchedulerConfigError",
    "SchedulerError",
    "budget_tier",
    "incoming_increment",
    "seen_increment",
]
