"""Page-processing options: what a fetcher does with each downloaded page.

Layer: ``crawler.core``. The glue turns a crawl's Page Options (``crawl.CrawlTimeOptions``) into a
:class:`PageProcessingConfig` with :meth:`PageProcessingConfig.from_options`, and passes it to
:class:`crawler.core.processing.process.PageProcessor`. Defaults are the seed document's.
"""

from __future__ import annotations

from dataclasses import dataclass

from classifiers.core.apply import TrainedClassifier
from crawler.core.definition.crawl import CrawlTimeOptions
from crawler.core.processing.builtin_scrapers import with_builtins
from crawler.core.processing.errors import ConfigError
from crawler.core.processing.scrapers import ScraperConfig

SUMMARIZERS = ("basic", "centroid", "centroid_weighted", "graph")

PAGE_RANGE_REQUEST = 1_000_000   # seed: bytes of a page that can become terms
MAX_DESCRIPTION_LEN = 2000       # seed: max page summary length (characters)
MAX_LINKS_PER_PAGE = 50          # seed: links kept after pruning
MAX_LINKS_TO_EXTRACT = 300       # seed: links extracted before pruning
# Page Options may ask for more links than the seed extracts (300): a value above it extracts
# and keeps that many. An API reference's index pages (Rust's all.html, a module with thousands
# of items) list far more than 300 pages, most of which no other page links to.
MAX_LINKS_LIMIT = 100_000
MAX_TITLE_LEN = 100              # seed: HtmlProcessor::MAX_TITLE_LEN
# Whole-page indexing (crawler.core.processing.summarizers.body): weights of the sentences the
# summarizer did not choose, relative to an average summary sentence (1), chosen on the dev
# judgments.
BODY_WEIGHT = 0.5
HEADING_WEIGHT = 1.5
DEFAULT_PAGE_CPU_SECONDS = 10.0    # CPU seconds one page's processing may use (0: no limit)
MAX_PAGE_CPU_SECONDS = 3600.0
# Indexing plugins (crawler.core.processing.plugins) a crawl runs unless the INDEXING_PLUGINS
# setting names others: dotted paths, run in order. The API names plugin is on: on the dev judgments
# (bench/relevance_eval.py, three crawls each) MRR@10 0.8977, 0.8976, 0.8977 without it and
# 0.9046, 0.9043, 0.9038 with it; module queries 0.92 -> 0.95, member 0.93 -> 0.94, no kind
# lower (README, Crawling).
DEFAULT_INDEXING_PLUGINS: tuple[str, ...] = (
    "crawler.core.processing.plugins.api_names.ApiNamesPlugin",
    "crawler.core.processing.plugins.topics.TopicsPlugin",
    "crawler.core.processing.plugins.sections.SectionsPlugin",
)


@dataclass(frozen=True, slots=True)
class PageProcessingConfig:
    """Options of page processing (immutable; validated on construction).

    * ``byte_range``: only the first ``byte_range`` bytes of a body are processed;
    * ``max_description_len``: characters of summary kept;
    * ``summarizer``: ``basic``, ``centroid``, ``centroid_weighted`` or ``graph``;
    * ``max_links``: links kept per page after pruning (-1: all extracted ones);
    * ``max_links_to_extract``: links extracted before pruning;
    * ``cache_pages``: keep the (truncated) page bytes for the cache, unless NOARCHIVE;
    * ``file_types``: extensions of link targets to keep (empty: every type);
    * ``page_rules``: page-rule program text (compiled once by the page processor);
    * ``scrapers``: the scrapers (from Page Options: the profile's, then the built-in ones it
      uses, see :func:`.builtin_scrapers.with_builtins`);
    * ``classifiers``: the crawl's classifiers with their models (the glue loads them:
      ``CrawlTimeOptions.classifiers`` names them; ``crawler.core.processing.process``, step 9);
    * ``index_whole_page``: index every sentence of the page, not only the summary;
    * ``body_weight``, ``heading_weight``: with whole-page indexing, the region weight of a
      sentence (or heading) the summarizer did not choose;
    * ``title_weight``: region weight of title positions (sentence weights average 1);
    * ``language_sample_chars``: characters of text the language test reads;
    * ``safe_threshold``: safe-search score under which a page is ``safe:true``;
    * ``robot_name``: our user agent's name, for robots.txt crawl delays;
    * ``indexing_plugins``: dotted paths of the indexing plugins run on every page
      (:mod:`crawler.core.processing.plugins`); from Page Options: :data:`DEFAULT_INDEXING_PLUGINS`
      unless the glue passes the ``INDEXING_PLUGINS`` setting;
    * ``entry_context``: put the index entry a link sits in before its anchor text
      (:mod:`.processors.link_records`; on by default, off only to measure what it adds:
      ``bench/relevance_eval.py``'s signal ledger);
    * ``cpu_seconds``: the CPU budget of one page's processing (0: none); past it the page
      fails with the fetch error kind ``too_slow`` (the ``PAGE_CPU_SECONDS`` setting;
      ``crawler.core.fetcher.processing``).
    """

    byte_range: int = PAGE_RANGE_REQUEST
    max_description_len: int = MAX_DESCRIPTION_LEN
    summarizer: str = "basic"
    max_links: int = MAX_LINKS_PER_PAGE
    max_links_to_extract: int = MAX_LINKS_TO_EXTRACT
    cache_pages: bool = True
    file_types: tuple[str, ...] = ()
    page_rules: str = ""
    scrapers: tuple[ScraperConfig, ...] = ()
    classifiers: tuple[TrainedClassifier, ...] = ()
    index_whole_page: bool = True
    body_weight: float = BODY_WEIGHT
    heading_weight: float = HEADING_WEIGHT
    title_weight: float = 4.0
    language_sample_chars: int = 20000
    safe_threshold: float = 0.012
    robot_name: str = "YioopyBot"
    indexing_plugins: tuple[str, ...] = ()
    cpu_seconds: float = DEFAULT_PAGE_CPU_SECONDS
    entry_context: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.cpu_seconds <= MAX_PAGE_CPU_SECONDS:
            raise ConfigError(f"cpu_seconds must be from 0 (no limit) to {MAX_PAGE_CPU_SECONDS}, "
                              f"got {self.cpu_seconds}")
        if self.byte_range <= 0:
            raise ConfigError(f"byte_range must be positive, got {self.byte_range}")
        if self.max_description_len <= 0:
            raise ConfigError(f"max_description_len must be positive: {self.max_description_len}")
        if str(self.summarizer) not in SUMMARIZERS:
            raise ConfigError(f"unknown summarizer {self.summarizer!r}; one of {SUMMARIZERS}")
        if self.max_links < -1:
            raise ConfigError(f"max_links must be -1 (all) or >= 0, got {self.max_links}")
        if self.max_links_to_extract <= 0:
            raise ConfigError("max_links_to_extract must be positive")
        if self.body_weight <= 0 or self.heading_weight <= 0:
            raise ConfigError("body_weight and heading_weight must be positive")
        if self.title_weight <= 0:
            raise ConfigError("title_weight must be positive")

    @classmethod
    def from_options(cls, options: CrawlTimeOptions, **overrides: object) -> PageProcessingConfig:
        """The config for a crawl's Page Options (``crawl.CrawlTimeOptions``): its scrapers
        are the profile's, then the built-in ones it has not turned off or replaced; its
        indexing plugins the default ones (``overrides`` may name others)."""
        values: dict[str, object] = {
            "byte_range": options.byte_range,
            "max_description_len": options.max_description_len,
            "summarizer": str(options.summarizer),
            "max_links": options.max_links_to_extract,
            "max_links_to_extract": max(MAX_LINKS_TO_EXTRACT, options.max_links_to_extract),
            "cache_pages": options.cache_pages,
            "index_whole_page": options.index_whole_page,
            "file_types": tuple(t.lower().lstrip(".") for t in options.file_types),
            "page_rules": options.page_rules,
            "scrapers": with_builtins(
                tuple(ScraperConfig.from_spec(s) for s in options.scrapers),
                options.disabled_builtin_scrapers),
            "indexing_plugins": DEFAULT_INDEXING_PLUGINS,
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]
