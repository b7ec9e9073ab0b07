"""The crawler app's models, one module per subject: Page Options and scrapers
(:mod:`.page_options`), crawls, their seeds and samples (:mod:`.crawls`), queue servers and
fetchers (:mod:`.machines`), news sources and their items (:mod:`.news`), what a crawl did
with its urls and hosts (:mod:`.hosts`), and the urls the public submitted (:mod:`.submissions`).

Imported by every process of the engine that reads or writes crawl rows (web, queue servers,
fetchers). The names below are the app's public interface: code outside the package imports
its models from ``crawler.models``; Django finds them here too.
"""

from .crawls import Crawl, CrawlSample, SeedSite
from .hosts import (
    CrawlHost,
    FetchedUrl,
    HostOverride,
    RefusalCount,
    RefusedHostCount,
    RefusedUrl,
)
from .machines import Fetcher, Machine, QueueServer
from .news import NewsItem, NewsSource
from .page_options import PageOptions, Scraper
from .submissions import SubmissionStatus, UrlSubmission

__all__ = ["Crawl", "CrawlHost", "CrawlSample", "FetchedUrl", "Fetcher", "HostOverride",
           "Machine", "NewsItem", "NewsSource", "PageOptions", "QueueServer", "RefusalCount",
           "RefusedHostCount", "RefusedUrl", "Scraper", "SeedSite", "SubmissionStatus",
           "UrlSubmission"]
