"""The scheduled update of news sources: every due feed fetched, its new items indexed.

Layer: Django glue of the crawler app. ``crawler.tasks.news_update_task`` calls
:func:`news_update_due`; Celery beat, which ``manage.py up`` starts beside the workers, sends
that task every ``NEWS_TICK_SECONDS`` (``searchsite.celery``), so an edited source, a new
one or a feed's new item is picked up without a restart.

A source is due when it is enabled and its ``next_update_at`` is empty or past. Each due
source is fetched through the crawler's HTTP layer with the crawl's egress allow-list
(``CRAWLER_ALLOWED_NETWORKS``; the engine's own listeners refused), read
(``crawler.core.news.fetch``), and its items not indexed yet become documents of the news
index (``crawler.core.news``); then its row says when it was read, how many items were new,
or why it failed (``last_error``, shown in the admin), and when it is due again. A failed
source is tried again after its interval, like a good one. One update at a time: a run that
finds the news index locked by another leaves every source due for the next run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from crawler.core.http import FetchConfig, Fetcher
from crawler.core.news.documents import NewsSourceConfig, item_document, item_url
from crawler.core.news.fetch import fetch_feed
from crawler.core.news.index import NewsIndex
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.process import PageProcessor
from crawler.machines.own_endpoints import engine_endpoints
from crawler.models import NewsItem, NewsSource
from indexer.core.errors import IndexLockedError
from indexer.core.runtime.workdir import news_bundle_path

logger = logging.getLogger(__name__)
FEED_BYTES = 2 * 1024 * 1024  # a feed longer than this is read up to here


@dataclass(slots=True)
class NewsRun:
    """What one run did: sources read, items indexed, sources that failed (name: reason);
    ``busy`` when another run held the news index."""

    sources: int = 0
    indexed: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    busy: bool = False

    def as_dict(self) -> dict:
        return {"sources": self.sources, "indexed": self.indexed, "failed": self.failed,
                "busy": self.busy}


def news_fetch_config() -> FetchConfig:
    """The crawler's fetch settings for feeds (its allow-list, CA bundle and user agent)."""
    return FetchConfig(allowed_networks=tuple(settings.CRAWLER_ALLOWED_NETWORKS),
                       ca_bundle=settings.CRAWLER_CA_BUNDLE,
                       user_agent=settings.CRAWLER_USER_AGENT, byte_range=FEED_BYTES,
                       connect_timeout=settings.CRAWLER_CONNECT_TIMEOUT,
                       read_timeout=settings.CRAWLER_READ_TIMEOUT,
                       page_deadline=settings.CRAWLER_PAGE_DEADLINE,
                       refused_endpoints=engine_endpoints())


def due_sources(now: datetime) -> list[NewsSource]:
    return list(NewsSource.objects.filter(enabled=True).filter(
        Q(next_update_at__isnull=True) | Q(next_update_at__lte=now)).order_by("pk"))


def news_update_due(now: datetime | None = None) -> NewsRun:
    """Fetch every due source and index its new items (see the module docstring)."""
    now = now or timezone.now()
    run = NewsRun()
    due = due_sources(now)
    if not due:
        return run
    try:
        index = NewsIndex(news_bundle_path(settings.WORK_DIRECTORY))
    except IndexLockedError:
        run.busy = True
        return run
    processor = PageProcessor(PageProcessingConfig())
    with index, Fetcher(news_fetch_config()) as fetcher:
        for source in due:
            run.sources += 1
            try:
                new = _update_source(source, fetcher, processor, index, now)
            except OSError as exc:  # the news index could not be written (a full disk)
                logger.warning("news source %s: index not written: %s", source.pk, exc)
                _record(source, now, 0, f"the news index could not be written: {exc}")
                run.failed[source.name] = source.last_error
                continue
            if source.last_error:
                run.failed[source.name] = source.last_error
            run.indexed += new
    return run


def _update_source(source: NewsSource, fetcher: Fetcher, processor: PageProcessor,
                   index: NewsIndex, now: datetime) -> int:
    fetched = fetch_feed(fetcher, source.url)
    if fetched.feed is None:
        logger.info("news source %s (%s): %s", source.pk, source.url, fetched.error)
        _record(source, now, 0, fetched.error)
        return 0
    config = NewsSourceConfig(source.pk, source.name, source.url, source.language)
    seen_at = now.timestamp()
    candidates = {}
    for item in fetched.feed.items:
        url = item_url(item, source.url)
        if url is not None and url not in candidates:
            candidates[url] = item
    known = set(NewsItem.objects.filter(url__in=list(candidates)).values_list("url", flat=True))
    documents, rows = [], []
    for url, item in candidates.items():
        if url in known:
            continue
        if item.published is not None and item.published > seen_at:
            item = replace(item, published=seen_at)  # no dates in the future
        document = item_document(item, config, fetched.feed.lang, processor, seen_at)
        if document is None:
            continue
        documents.append(document)
        published = float(document.summary.get("published", seen_at))
        rows.append(NewsItem(source=source, url=url, title=item.title[:300],
                             published_at=datetime.fromtimestamp(published, UTC)))
    started = time.monotonic()
    index.add(documents)
    NewsItem.objects.bulk_create(rows, ignore_conflicts=True)
    logger.info("news source %s: %d new items of %d indexed in %.2fs", source.pk, len(rows),
                len(candidates), time.monotonic() - started)
    _record(source, now, len(rows), "")
    return len(rows)


def _record(source: NewsSource, now: datetime, new: int, error: str) -> None:
    source.last_update_at = now
    source.next_update_at = now + timedelta(minutes=source.update_minutes)
    source.last_new_items = new
    source.last_error = error[:400]
    NewsSource.objects.filter(pk=source.pk).update(
        last_update_at=source.last_update_at, next_update_at=source.next_update_at,
        last_new_items=new, last_error=source.last_error)
