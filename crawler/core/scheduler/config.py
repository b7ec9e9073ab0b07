"""Configuration of one crawl queue: a frozen value the queue-server glue builds once.

Layer: ``crawler.core.scheduler``. Defaults are the seed's and Yioop's constants
(``DOWNLOAD_SIZE_INTERVAL``, ``DOWNLOAD_ERROR_THRESHOLD``, ``ERROR_CRAWL_DELAY``...). Nothing
here reads settings or the environment; :meth:`SchedulerConfig.from_crawl` copies the crawl-level
fields of a :class:`~crawler.core.definition.crawl.CrawlConfig`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from crawler.core.definition.crawl import CrawlConfig, CrawlOrder, RobotsBehaviour
from crawler.core.definition.schedules import DOWNLOAD_SIZE_INTERVAL, SCHEDULE_TIMEOUT
from crawler.core.definition.siterules import SiteRules
from crawler.core.scheduler.errors import SchedulerConfigError
from indexer.core.policies import CrawlPolicy

NUM_MULTI_CURL_PAGES = 100          # one fetch round
DOWNLOAD_ERROR_THRESHOLD = 50       # errors per schedule before a host is delayed
ERROR_CRAWL_DELAY = 20.0            # seconds
MAXIMUM_CRAWL_DELAY = 64.0          # a robots.txt asking for more disallows the host
ROBOTS_RETRIES = 3                  # tries of a robots.txt before its host is left alone
SITEMAP_TIER_PENALTY = 4
NON_HTML_TIER_PENALTY = 1
MAX_URL_BUFFER_BEFORE_WRITE = 500
MAX_URL_FILE_SIZE = 1_000_000
DELAYED_SCHEDULE_SECONDS = 30.0     # how long a schedule is expected to keep a delayed host busy


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """Everything a :class:`~crawler.core.scheduler.queue.CrawlQueue` needs to know.

    ``max_depth`` -1 and ``max_pages`` 0 mean no limit; ``recrawl_days`` (Page Options
    ``page_recrawl_days``) -1 means never recrawl a page (the visit table is then not kept);
    otherwise a visited url is due again ``recrawl_days`` days later (:mod:`.revisits`), a day
    being ``recrawl_day_seconds`` long (86400; tests and demonstrations shorten it, the
    option stays in days). ``max_cld_share`` (0 < share <= 1) caps the
    fraction of one schedule that a single company-level domain may fill (the per-domain share
    of the fetch list in the seed *Per-page crawling policy*); urls over the cap go to the back
    of their tier for a later schedule.

    Seed policies (:mod:`crawler.core.definition.policy`): ``seed_policies`` maps seed urls to their
    policy; favor lowers a url's tier by ``favor_tier_bonus``, distrust raises it by
    ``distrust_tier_penalty`` and drops distrusted urls past ``distrust_max_depth``. Needy
    queries (:mod:`crawler.core.definition.needy`): with ``need_weight`` > 0 and needy queries set,
    urls with a need score go to the needy lane, ordered by
    ``importance_weight * importance + need_weight * log(1 + need)`` and scheduled before the
    tiers (at most ``needy_lane_size`` urls; the lowest spill into their tiers). When a needy
    query appears that the previous set did not hold, urls already queued are rescored too:
    whole tiers, lowest first, up to ``needy_rescore_limit`` urls.

    Crawl-delayed hosts: a schedule holds at most ``ceil(delayed_schedule_seconds / delay)``
    urls of one such host (at least one), about what a fetcher requesting the host once per
    delay gets through while it works on the schedule (the fetcher hands back what it did not
    get to).
    """

    order: CrawlOrder = CrawlOrder.HOST_BUDGETING
    max_depth: int = -1
    max_pages: int = 0
    schedule_size: int = DOWNLOAD_SIZE_INTERVAL
    round_size: int = NUM_MULTI_CURL_PAGES
    robots: RobotsBehaviour = RobotsBehaviour.ALWAYS_FOLLOW
    site_rules: SiteRules = field(default_factory=SiteRules)
    recrawl_days: int = -1
    # the seen-url filter's first slice; it grows with the crawl (.scalable_bloom)
    bloom_expected_urls: int = 1_000_000
    bloom_fp_rate: float = 0.001
    error_threshold: int = DOWNLOAD_ERROR_THRESHOLD
    error_crawl_delay: float = ERROR_CRAWL_DELAY
    max_crawl_delay: float = MAXIMUM_CRAWL_DELAY
    schedule_timeout: float = SCHEDULE_TIMEOUT
    robots_retries: int = ROBOTS_RETRIES
    user_agent: str = "yioopy"
    max_cld_share: float = 1.0
    url_buffer: int = MAX_URL_BUFFER_BEFORE_WRITE
    max_file_bytes: int = MAX_URL_FILE_SIZE
    checkpoint_journal_bytes: int = 64 << 20
    fsync: bool = True
    seed_policies: tuple[tuple[str, str], ...] = ()
    favor_tier_bonus: int = 1
    distrust_tier_penalty: int = 2
    distrust_max_depth: int = 2
    importance_weight: float = 1.0
    need_weight: float = 1.0
    shingle_width: int = 2
    shingle_rho: float = 0.5
    needy_lane_size: int = 100_000
    needy_rescore_limit: int = 200_000  # queued urls new needy queries rescore (whole tiers)
    delayed_schedule_seconds: float = DELAYED_SCHEDULE_SECONDS
    recrawl_day_seconds: float = 86400.0  # (last: version-1 states list the fields in order)

    def __post_init__(self) -> None:
        checks = (
            (self.schedule_size >= 1, "schedule_size must be at least 1"),
            (self.round_size >= 1, "round_size must be at least 1"),
            (self.max_depth >= -1, "max_depth must be -1 (no limit) or more"),
            (self.max_pages >= 0, "max_pages must be 0 (no limit) or more"),
            (self.bloom_expected_urls >= 1, "bloom_expected_urls must be positive"),
            (0.0 < self.bloom_fp_rate < 1.0, "bloom_fp_rate must be in (0, 1)"),
            (self.error_threshold >= 1, "error_threshold must be positive"),
            (self.error_crawl_delay >= 0, "error_crawl_delay must not be negative"),
            (self.max_crawl_delay > 0, "max_crawl_delay must be positive"),
            (self.schedule_timeout > 0, "schedule_timeout must be positive"),
            (self.robots_retries >= 1, "robots_retries must be at least 1"),
            (0.0 < self.max_cld_share <= 1.0, "max_cld_share must be in (0, 1]"),
            (self.url_buffer >= 1, "url_buffer must be positive"),
            (self.max_file_bytes >= 1024, "max_file_bytes must be at least 1024"),
            (self.checkpoint_journal_bytes >= 1, "checkpoint_journal_bytes must be positive"),
            (bool(self.user_agent.strip()), "user_agent must not be empty"),
            (self.favor_tier_bonus >= 0, "favor_tier_bonus must not be negative"),
            (self.distrust_tier_penalty >= 0, "distrust_tier_penalty must not be negative"),
            (self.distrust_max_depth >= -1, "distrust_max_depth must be -1 (no limit) or more"),
            (self.importance_weight >= 0, "importance_weight must not be negative"),
            (self.need_weight >= 0, "need_weight must not be negative"),
            (self.shingle_width >= 1, "shingle_width must be at least 1"),
            (0.0 < self.shingle_rho <= 1.0, "shingle_rho must be in (0, 1]"),
            (self.needy_lane_size >= 1, "needy_lane_size must be positive"),
            (self.needy_rescore_limit >= 0, "needy_rescore_limit must not be negative"),
            (self.delayed_schedule_seconds > 0, "delayed_schedule_seconds must be positive"),
            (self.recrawl_day_seconds > 0, "recrawl_day_seconds must be positive"),
        )
        for ok, message in checks:
            if not ok:
                raise SchedulerConfigError(message)
        try:
            CrawlOrder(self.order)
            RobotsBehaviour(self.robots)
        except ValueError as exc:
            raise SchedulerConfigError(str(exc)) from None

    @classmethod
    def from_crawl(cls, crawl: CrawlConfig, **overrides: Any) -> SchedulerConfig:
        """The queue configuration of ``crawl``; ``overrides`` set any other field."""
        rules = crawl.site_rules
        if crawl.restrict_to_seeds and not rules.restrict:
            rules = dataclasses.replace(rules, restrict=True)
        base: dict[str, Any] = {
            "order": crawl.order,
            "max_depth": crawl.max_depth,
            "max_pages": crawl.max_pages,
            "robots": crawl.page_options.robots,
            "site_rules": rules,
            # the crawl's own recrawl_days repeats the whole crawl (crawler.services)
            "recrawl_days": crawl.page_options.page_recrawl_days,
            "max_cld_share": crawl.max_domain_share,
            "seed_policies": tuple((seed.url, str(CrawlPolicy(seed.policy).value))
                                   for seed in crawl.seeds),
            "favor_tier_bonus": crawl.favor_tier_bonus,
            "distrust_tier_penalty": crawl.distrust_tier_penalty,
            "distrust_max_depth": crawl.distrust_max_depth,
            "importance_weight": crawl.priority_importance_weight,
            "need_weight": crawl.priority_need_weight,
        }
        base.update(overrides)
        return cls(**base)

    @property
    def recrawl_enabled(self) -> bool:
        return self.recrawl_days > 0

    @property
    def recrawl_interval(self) -> float:
        """Seconds after a visit when a url is due again."""
        return self.recrawl_days * self.recrawl_day_seconds
