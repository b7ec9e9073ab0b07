"""The feed processor: RSS (0.9x, 1.0/RDF, 2.0) and Atom.

Layer: ``crawler.core.processing.processors``. Title: the channel's or feed's title. Blocks: the
channel description, then each item's title (as a heading) and description or summary (HTML in them
is reduced to text). Links: each item's link, with the item's title as link text.
"""

from __future__ import annotations

import re

import lxml.html
from lxml import etree

from crawler.core.processing.config import MAX_TITLE_LEN
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage
from crawler.core.processing.processors.base import ProcessorContext, summarize_and_index
from crawler.core.processing.processors.xmlparse import child_text, local, parse_xml
from crawler.core.processing.summarizers import TextBlock
from indexer.core.text import guess_language

_NON_WORD = re.compile(r"\W+")
MAX_ITEMS = 500


def _html_text(value: str) -> str:
    if "<" not in value:
        return " ".join(value.split())
    try:
        fragment = lxml.html.fragment_fromstring(value, create_parent="div")
    except (etree.ParserError, ValueError):
        return " ".join(re.sub(r"<[^>]*>", " ", value).split())
    return " ".join(fragment.text_content().split())


def _item_link(item: etree._Element) -> str:
    for child in item:
        if local(child.tag) == "link":
            href = child.get("href")
            rel = (child.get("rel") or "alternate").lower()
            if href and rel == "alternate":
                return href.strip()
            if not href and child.text:
                return child.text.strip()
    for child in item:
        if local(child.tag) == "guid" and (child.get("isPermaLink") or "true") == "true":
            return (child.text or "").strip()
    return ""


class FeedProcessor:
    """Stateless."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        root = parse_xml(body)
        if root is None:
            return Extraction(errors=("feed is not XML",), media="feed")
        channel = root
        for element in root:
            if local(element.tag) == "channel":
                channel = element
                break
        title = child_text(channel, "title")[:MAX_TITLE_LEN]
        blocks: list[TextBlock] = []
        description = child_text(channel, "description") or child_text(channel, "subtitle")
        if description:
            blocks.append(TextBlock(_html_text(description), "meta", 0))
        lang_declared = child_text(channel, "language") or root.get(
            "{http://www.w3.org/XML/1998/namespace}lang") or ""
        items = [e for e in root.iter() if local(e.tag) in ("item", "entry")][:MAX_ITEMS]
        raw_links: list[tuple[str, str]] = []
        offset = len(description)
        for item in items:
            item_title = _html_text(child_text(item, "title"))
            text = (child_text(item, "description") or child_text(item, "summary")
                    or child_text(item, "content"))
            if item_title:
                blocks.append(TextBlock(item_title, "h2", offset))
                offset += len(item_title) + 1
            if text:
                value = _html_text(text)
                blocks.append(TextBlock(value, "p", offset))
                offset += len(value) + 1
            link = _item_link(item)
            if link:
                raw_links.append((link, item_title))
        all_text = " ".join(b.text for b in blocks)
        guess = guess_language(declared=(lang_declared,), url=page.url,
                               text=all_text[: ctx.config.language_sample_chars])
        collector = LinkCollector(page.url, None, ctx.config.max_links_to_extract)
        for href, text in raw_links:
            collector.add(href, text, "feed")
        summary, body = summarize_and_index(blocks, guess.lang, ctx)
        return Extraction(
            title=title,
            sentences=summary,
            body=body,
            links=collector.links(guess.lang),
            lang=guess.lang,
            lang_source=guess.source,
            hash_text=_NON_WORD.sub("", all_text),
            media="feed",
        )
