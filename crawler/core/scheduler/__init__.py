"""The queue server's scheduler: the crawl queue on disk (the Scheduler, QueueBundle and Host
Budgeting of the seed, *Yioop Search Engine Ranking Mechanisms*), breadth-first and OPIC
orders, robots.txt and crawl-delay politeness.

Layer: ``crawler.core.scheduler`` (pure Python, no Django). Entry point: :class:`CrawlQueue`
(:mod:`.queue`), which applies its calls through :mod:`.machine`; one module per concern beside
it: records (:mod:`.record`), url files (:mod:`.lanes`), per-host politeness
(:mod:`.politeness`), the crawl order as a strategy (:mod:`.orders`, :mod:`.opic`), the needy
lane (:mod:`.needy_lane`), the schedule builder (:mod:`.builder`), outstanding schedules
(:mod:`.outstanding`), durability (:mod:`.checkpoints`, :mod:`.state`, :mod:`.legacy_state`,
:mod:`.journal`, :mod:`.storage`).
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
