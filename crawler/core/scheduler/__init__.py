"""The queue server's scheduler: the crawl queue on disk (the Scheduler, QueueBundle and Host
Budgeting of the seed, *Yioop Search Engine Ranking Mechanisms*), breadth-first and OPIC
orders, robots.txt and crawl-delay politeness.

Layer: ``crawler.core.scheduler`` (pure Python, no Django). Entry point: :class:`CrawlQueue`
(:mod:`.queue`), which applies its calls through :mod:`.machine`; one module per concern beside
it: records (:mod:`.record`), url files (:mod:`.lanes`), per-host politeness
(:mod:`.politeness`), the needy lane (:mod:`.needy_lane`), the schedule builder
(:mod:`.builder`), outstanding schedules (:mod:`.outstanding`). Three sub-packages: the crawl
order as a strategy and its formulas (:mod:`.ordering`), the seen-url Bloom filters
(:mod:`.filters`), and durability: journal, checkpoints, state files (:mod:`.durable`).
"""

from __future__ import annotations

from crawler.core.scheduler.config import (
    DOWNLOAD_ERROR_THRESHOLD,
    ERROR_CRAWL_DELAY,
    SITEMAP_TIER_PENALTY,
    SchedulerConfig,
)
from crawler.core.scheduler.errors import (
    CorruptQueueError,
    InvalidUrlError,
    QueueClosedError,
    QueueLockedError,
    SchedulerConfigError,
    SchedulerError,
)
from crawler.core.scheduler.filters.bloom import BloomFilter
from crawler.core.scheduler.ordering.formulas import (
    budget_tier,
    incoming_increment,
    seen_increment,
)
from crawler.core.scheduler.queue import CrawlQueue
from crawler.core.scheduler.robots import ALLOW_ALL, DISALLOW_ALL, RobotsRules, RobotsTxt
from crawler.core.scheduler.values import DiscoveredUrl, QueueStats, Schedule, ScheduleEntry

__all__ = [
    "ALLOW_ALL",
    "DISALLOW_ALL",
    "DOWNLOAD_ERROR_THRESHOLD",
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
