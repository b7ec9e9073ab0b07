"""The feed processor: RSS (0.9x, 1.0/RDF, 2.0) and Atom, crawled as one page.

Layer: ``crawler.core.processing.processors``; the feed is read by :mod:`.feed_items`
(shared with the news sources, ``crawler.core.news``). Title: the channel's or feed's title.
Blocks: the channel description, then each item's title (as a heading) and description or
summary (HTML in them is reduced to text). Links: each item's link, with the item's title as
link text.
"""

from __future__ import annotations

import re

from crawler.core.processing.config import MAX_TITLE_LEN
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage
from crawler.core.processing.processors.base import ProcessorContext, summarize_and_index
from crawler.core.processing.summarizers import TextBlock
from indexer.core.text import guess_language

from .feed_items import MAX_ITEMS, parse_feed

_NON_WORD = re.compile(r"\W+")
__all__ = ["MAX_ITEMS", "FeedProcessor"]


class FeedProcessor:
    """Stateless."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        feed = parse_feed(body)
        if feed is None:
            return Extraction(errors=("feed is not XML",), media="feed")
        blocks: list[TextBlock] = []
        if feed.description:
            blocks.append(TextBlock(feed.description, "meta", 0))
        raw_links: list[tuple[str, str]] = []
        offset = len(feed.description)
        for item in feed.items:
            if item.title:
                blocks.append(TextBlock(item.title, "h2", offset))
                offset += len(item.title) + 1
            if item.text:
                blocks.append(TextBlock(item.text, "p", offset))
                offset += len(item.text) + 1
            if item.link:
                raw_links.append((item.link, item.title))
        all_text = " ".join(b.text for b in blocks)
        guess = guess_language(declared=(feed.lang,), url=page.url,
                               text=all_text[: ctx.config.language_sample_chars])
        collector = LinkCollector(page.url, None, ctx.config.max_links_to_extract)
        for href, text in raw_links:
            collector.add(href, text, "feed")
        summary, indexed = summarize_and_index(blocks, guess.lang, ctx)
        return Extraction(
            title=feed.title[:MAX_TITLE_LEN],
            sentences=summary,
            body=indexed,
            links=collector.links(guess.lang),
            lang=guess.lang,
            lang_source=guess.source,
            hash_text=_NON_WORD.sub("", all_text),
            media="feed",
        )
