"""A queue server's configuration: one frozen value the queue-server process builds once.

Layer: ``crawler.core.queue_server``. The process (``crawler.machines.queue_server``) fills it from the
crawl's row and the site's settings; :mod:`crawler.core.local_crawl` from its arguments. The
schedule size and timeout default to :mod:`crawler.core.definition.schedules`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crawler.core.definition.crawl import CrawlConfig
from crawler.core.definition.schedules import DOWNLOAD_SIZE_INTERVAL, SCHEDULE_TIMEOUT
from indexer.core.bundle.writer import BundleConfig
from indexer.core.signals.near_clusters import DEFAULT_DISTANCE


@dataclass(frozen=True, slots=True)
class QueueServerConfig:
    server: int
    num_servers: int
    directory: Path
    crawl: CrawlConfig
    refresh_seconds: float = 10.0       # a fetched page is searchable within about this long
    # A refresh rebuilds the active partition's files, so it costs more as the partition
    # grows: refreshes are spaced so that they take at most this share of the time (their
    # cost was a fifth of a one-process crawl's main thread at 0.15), but never
    # more than max_refresh_seconds apart (a fetched page is searchable within a minute).
    refresh_share: float = 0.05
    max_refresh_seconds: float = 40.0
    # a host whose downloads stalled this many schedules is dropped for the rest of the crawl
    # (see crawler.core.http.hostwatch)
    stall_drop_threshold: int = 3
    max_outstanding: int = 4            # schedules handed out and not yet acknowledged
    # beyond max_outstanding: schedules of only the urls freed crawl-delayed hosts had parked
    # (QueueServerCore.take_schedules). 0, the default: a Celery fetcher runs one schedule at
    # a time, and one holding just a delayed host's share would keep it idle between the
    # requests; LocalCrawl, whose fetchers are threads, gives each such schedule its own
    delayed_schedules: int = 0
    schedule_size: int = DOWNLOAD_SIZE_INTERVAL
    schedule_timeout: float = SCHEDULE_TIMEOUT  # not acknowledged by then: handed out again
    # the name robots.txt groups address the crawler by (its user agent's first word)
    robots_agent: str = "YioopyBot"
    # a schedule no fetcher claimed this long after it was handed out is handed out again
    # (see crawler.core.queue_server.claims)
    unclaimed_timeout: float = 60.0
    # the queue server decides when to refresh (maybe_refresh), not the number of documents
    bundle: BundleConfig = field(default_factory=lambda: BundleConfig(refresh_every_docs=0))
    # how long a day of page_recrawl_days is (tests and demonstrations shorten it)
    recrawl_day_seconds: float = 86400.0
    # a page whose SimHash is at most this many bits from an earlier page's is a near-duplicate
    # whose links are not followed (crawler.core.queue_server.near_duplicates); -1: follow all
    near_duplicate_bits: int = DEFAULT_DISTANCE

    def __post_init__(self) -> None:
        if not 0 <= self.server < self.num_servers:
            raise ValueError(f"server {self.server} is not in 0..{self.num_servers - 1}")
