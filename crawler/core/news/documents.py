"""A feed item as a document of the news index.

Layer: ``crawler.core.news``. The item is processed as the crawl processes an HTML page (its
title, then its text: :class:`crawler.core.processing.process.PageProcessor`, so that its
terms are the ones a query's analysis looks for), dated by the item's date (the page's
``date:`` and ``modified:`` meta words, and ``fetched_at``), and marked as news: the
``media:news`` meta word and, in the stored summary, ``news_source`` (the source's name),
``news_source_url`` and ``published`` (seconds since the epoch; the time it was first seen
when the item has no date).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from email.utils import formatdate
from types import MappingProxyType
from typing import Any

from crawler.core.processing.indexing import iter_index_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.processors.feed_items import FeedItem
from crawler.core.urls import canonicalize
from indexer.core.documents.document import IndexDocument

NEWS_WORD = "media:news"
MAX_ITEM_TEXT = 20_000  # characters of an item's text indexed


@dataclass(frozen=True, slots=True)
class NewsSourceConfig:
    """A news source as the update needs it: ``lang`` "" to take the feed's or guess."""

    source_id: int
    name: str
    url: str
    lang: str = ""


def item_url(item: FeedItem, feed_url: str) -> str | None:
    """The item's link in canonical form, resolved against the feed's url; None when it has
    no http or https link."""
    url = canonicalize(item.link, feed_url) if item.link else None
    return url if url is not None and url.startswith(("http://", "https://")) else None


def item_page(item: FeedItem, url: str, lang: str, published: float) -> FetchedPage:
    """The item as a small HTML page: its title (the ``<title>``, not repeated in the body, so
    that snippets come from the text) and text, in ``lang`` when known."""
    title = html.escape(item.title)
    text = html.escape(item.text[:MAX_ITEM_TEXT])
    attribute = f' lang="{html.escape(lang)}"' if lang else ""
    body = (f"<!DOCTYPE html><html{attribute}><head><meta charset=\"utf-8\">"
            f"<title>{title}</title><meta name=\"description\" content=\"{text[:500]}\">"
            f"</head><body><p>{text}</p></body></html>").encode()
    return FetchedPage(url=url, body=body, status=200, fetched_at=published,
                       headers={"content-type": "text/html; charset=utf-8",
                                "last-modified": formatdate(published, usegmt=True)},
                       mime_type="text/html")


def _news_summary(summary: Any, source: NewsSourceConfig, published: float) -> dict[str, Any]:
    """The page's summary with the news fields, before ``body`` and ``links`` (which must
    stay last: ``crawler.core.processing.indexing.page_summary``)."""
    out: dict[str, Any] = {}
    tail: dict[str, Any] = {}
    for key, value in summary.items():
        (tail if key in ("body", "links") else out)[key] = value
    out.update(news_source=source.name, news_source_url=source.url, published=published)
    out.update(tail)
    return out


def item_document(item: FeedItem, source: NewsSourceConfig, feed_lang: str,
                  processor: PageProcessor, seen_at: float) -> IndexDocument | None:
    """The news document of ``item`` (None: it has no web link, or nothing to index)."""
    url = item_url(item, source.url)
    if url is None or not (item.title or item.text):
        return None
    published = item.published if item.published is not None else seen_at
    processed = processor.process(item_page(item, url, source.lang or feed_lang, published))
    for document in iter_index_documents(processed, processor.analyzer):
        if document.url != processed.url:
            continue
        return replace(document,
                       summary=MappingProxyType(_news_summary(document.summary, source,
                                                              published)),
                       meta_words=(*document.meta_words, NEWS_WORD), cached_page=None)
    return None
