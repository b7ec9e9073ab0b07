"""Crawl-level configuration and the crawl state machine.

Layer: ``crawler.core`` (pure Python). The Django glue (``crawler.selectors``) turns database rows
into the frozen objects defined here; queue servers and fetchers receive nothing else. The state
machine is defined here so that the services, the admin and the crawl processes agree on it.

States::

    new ──start──▶ running ──stop──▶ stopping ──queue saved──▶ resumable ──resume──▶ running
                      │                                            │
                      └──limit reached / finished──▶ stopped       └──close──▶ closed
                                                       └──close──▶ closed

``stopping`` lasts while the queue servers write their queues to disk; a crawl is ``resumable``
once they have. ``stopped`` means the crawl ended by itself (page limit, empty queue) and cannot
be resumed; ``closed`` is final. Several crawls may be active (running or stopping) at once, each on its
own channel (Yioop's word; at most ``MAX_ACTIVE_CRAWLS``, ``Crawl.channel``): every queue server
holds a queue, seen-url filter, host politeness and index of its own for each of them, and
shares its fetchers between them in turns (``crawler.core.queue_server.sharing``); the
fetchers keep a crawl-delayed host's delay across the crawls that ask it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from classifiers.core.apply import ClassifierRef
from crawler.core.archive.source import ArchiveSource
from crawler.core.definition.siterules import SiteRules
from crawler.core.definition.sleep import SleepWindow
from indexer.core.policies import CrawlPolicy


class InvalidTransition(Exception):
    """A crawl action that its current state does not allow (start a running crawl, ...)."""


class CrawlStatus(enum.StrEnum):
    NEW = "new"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    RESUMABLE = "resumable"
    CLOSED = "closed"


ACTIVE_STATES = frozenset({CrawlStatus.RUNNING, CrawlStatus.STOPPING})
# a crawl that ran and will not fetch more unless resumed
ENDED_STATES = frozenset({CrawlStatus.STOPPED, CrawlStatus.RESUMABLE, CrawlStatus.CLOSED})

# (from state, action) -> to state
TRANSITIONS: dict[tuple[CrawlStatus, str], CrawlStatus] = {
    (CrawlStatus.NEW, "start"): CrawlStatus.RUNNING,
    (CrawlStatus.RUNNING, "stop"): CrawlStatus.STOPPING,
    (CrawlStatus.RUNNING, "finish"): CrawlStatus.STOPPED,
    (CrawlStatus.STOPPING, "saved"): CrawlStatus.RESUMABLE,
    (CrawlStatus.RESUMABLE, "resume"): CrawlStatus.RUNNING,
    (CrawlStatus.RESUMABLE, "close"): CrawlStatus.CLOSED,
    (CrawlStatus.STOPPED, "close"): CrawlStatus.CLOSED,
}


def next_status(current: str, action: str) -> CrawlStatus:
    """The state after ``action``; raises :class:`InvalidTransition` when it is not allowed."""
    status = CrawlStatus(current)
    try:
        return TRANSITIONS[(status, action)]
    except KeyError:
        allowed = sorted(a for (s, a) in TRANSITIONS if s is status)
        hint = f"; from {status.value} you can: {', '.join(allowed)}" if allowed else ""
        raise InvalidTransition(f"cannot {action} a crawl that is {status.value}{hint}") from None


def allowed_actions(current: str) -> tuple[str, ...]:
    status = CrawlStatus(current)
    return tuple(sorted(a for (s, a) in TRANSITIONS if s is status))


class CrawlOrder(enum.StrEnum):
    BREADTH_FIRST = "breadth_first"
    HOST_BUDGETING = "host_budgeting"
    OPIC = "opic"  # page importance: OPIC cash and history


class RobotsBehaviour(enum.StrEnum):
    ALWAYS_FOLLOW = "follow"
    ALLOW_LANDING_PAGE = "landing"
    IGNORE = "ignore"


class Summarizer(enum.StrEnum):
    BASIC = "basic"
    CENTROID = "centroid"
    CENTROID_WEIGHTED = "centroid_weighted"
    GRAPH = "graph"


@dataclass(frozen=True, slots=True)
class SeedSpec:
    url: str
    policy: CrawlPolicy = CrawlPolicy.DEFAULT
    trust_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class ScraperSpec:
    """A scraper as the page processors see it (see the Scraper model for the field rules)."""

    name: str
    signature: str
    priority: int = 0
    text_path: str = ""
    delete_paths: tuple[str, ...] = ()
    extract_fields: tuple[tuple[str, str], ...] = ()  # (field, "xpath" or ":=literal")
    meta_words: tuple[tuple[str, str], ...] = ()  # (prefix, "xpath" or ":=literal")


# File types a crawl may follow links to (Page Options "file types"); the default is every one
# but compressed archives, the same list the admin's Page Options start with.
KNOWN_FILE_TYPES = (
    "html", "htm", "xhtml", "php", "asp", "aspx", "jsp", "shtml", "cgi", "pl", "py", "java",
    "txt", "csv", "tsv", "md", "xml", "rss", "atom", "pdf", "gif", "jpg", "jpeg", "png", "svg",
    "bmp", "webp", "docx", "pptx", "xlsx", "odt", "ods", "odp", "epub", "gz", "unknown",
)
DEFAULT_FILE_TYPES = tuple(t for t in KNOWN_FILE_TYPES if t != "gz")


@dataclass(frozen=True, slots=True)
class CrawlTimeOptions:
    """Page Options, Crawl Time: what a fetcher does with each page (seed defaults)."""

    # the seed's PAGE_RANGE_REQUEST is 1,000,000 ("Summary only" keeps it); API references'
    # index pages run to 3 MB, and the pages past their first megabyte were never reached
    byte_range: int = 4_000_000
    max_description_len: int = 2000
    index_whole_page: bool = True         # False: the seed's "summary only" indexing
    summarizer: Summarizer = Summarizer.BASIC
    # every link of a page (up to 100,000), not the seed's 50 (MAX_LINKS_PER_PAGE, kept by the
    # "Summary only" profile): measured in the README ("Why every link")
    max_links_to_extract: int = 100_000
    cache_pages: bool = True
    page_recrawl_days: int = -1           # -1: never
    file_types: tuple[str, ...] = DEFAULT_FILE_TYPES
    robots: RobotsBehaviour = RobotsBehaviour.ALWAYS_FOLLOW
    page_rules: str = ""
    scrapers: tuple[ScraperSpec, ...] = ()
    # the finished classifiers the crawl runs, at the versions recorded when it started
    classifiers: tuple[ClassifierRef, ...] = ()
    # built-in scrapers (crawler.core.processing.builtin_scrapers) this profile does not use, by
    # name
    disabled_builtin_scrapers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    """Everything a queue server and its fetchers need to know about one crawl."""

    crawl_id: int
    timestamp: int
    name: str
    order: CrawlOrder = CrawlOrder.HOST_BUDGETING
    max_pages: int = 0                  # 0: no limit
    max_depth: int = -1                 # -1: no limit
    recrawl_days: int = -1              # -1: never
    restrict_to_seeds: bool = False
    max_domain_share: float = 1.0       # of one schedule, for one company-level domain (seed 004)
    # seed policies in the crawl (crawler.core.definition.policy): tier shifts and how deep distrust
    # goes
    favor_tier_bonus: int = 1
    distrust_tier_penalty: int = 2
    distrust_max_depth: int = 2         # -1: distrusted urls are never dropped
    policy_within_domain: bool = False  # seed policies reach only their own registered domain
    # needy queries (crawler.core.definition.needy): priority = a * importance + b * log(1 + need)
    needy_threshold: float = 0.0        # a query whose mean top-K score is below is needy; 0 off
    priority_importance_weight: float = 1.0   # a
    priority_need_weight: float = 1.0         # b; 0: needy queries do not change the order
    site_rules: SiteRules = field(default_factory=SiteRules)
    seeds: tuple[SeedSpec, ...] = ()
    # hours in which the crawl hands out no schedules (crawler.core.definition.sleep); None: none
    sleep: SleepWindow | None = None
    page_options: CrawlTimeOptions = field(default_factory=CrawlTimeOptions)
    # an archive crawl's source (crawler.core.archive): its pages are read, not fetched, and
    # its seeds only give link analysis its trust; None for a web crawl
    archive: ArchiveSource | None = None
