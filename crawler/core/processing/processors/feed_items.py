"""An RSS (0.9x, 1.0/RDF, 2.0) or Atom feed read into its items: what the feed processor
(:mod:`.feed`) indexes as one page and the news sources (``crawler.core.news``) index as one
document per item.

Layer: ``crawler.core.processing.processors``. Parsing is :func:`.xmlparse.parse_xml`'s (no
network, no entities, recovering from broken XML); nothing here raises on a feed's content: a
body that is no XML at all gives None, a missing or unreadable field gives "" (a date: None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import lxml.html
from lxml import etree

from .xmlparse import child_text, local, parse_xml

MAX_ITEMS = 500  # items read from one feed
DATE_FIELDS = ("pubdate", "published", "updated", "date", "issued", "modified")
_TAGS = re.compile(r"<[^>]*>")


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One item or entry: ``text`` its description, summary or content reduced to plain
    text; ``published`` seconds since the epoch (None: no date could be read)."""

    title: str
    link: str
    text: str
    published: float | None = None


@dataclass(frozen=True, slots=True)
class ParsedFeed:
    """A feed's title, description (plain text), declared language ("" when none) and its
    first :data:`MAX_ITEMS` items in document order."""

    title: str
    description: str
    lang: str
    items: tuple[FeedItem, ...]


def html_text(value: str) -> str:
    """The text of an HTML fragment (a feed's escaped or CDATA HTML), spaces collapsed."""
    if "<" not in value:
        return " ".join(value.split())
    try:
        fragment = lxml.html.fragment_fromstring(value, create_parent="div")
    except (etree.ParserError, ValueError):
        return " ".join(_TAGS.sub(" ", value).split())
    return " ".join(fragment.text_content().split())


def feed_date(value: str) -> float | None:
    """Seconds since the epoch of an RFC 822 date (RSS) or an ISO 8601 / RFC 3339 date
    (Atom, Dublin Core); a date without a zone is taken as UTC; None when unreadable."""
    value = value.strip()
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        try:
            parsed = datetime.fromisoformat(value.replace("z", "Z"))
        except ValueError:
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def item_link(item: etree._Element) -> str:
    """An item's link: Atom's ``<link rel="alternate" href>``, RSS's ``<link>`` text, else
    a permalink ``<guid>``; "" when none."""
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


def _item(element: etree._Element) -> FeedItem:
    text = (child_text(element, "description") or child_text(element, "summary")
            or child_text(element, "content"))
    published = None
    for name in DATE_FIELDS:
        published = feed_date(child_text(element, name))
        if published is not None:
            break
    return FeedItem(html_text(child_text(element, "title")), item_link(element),
                    html_text(text) if text else "", published)


def parse_feed(body: bytes, max_items: int = MAX_ITEMS) -> ParsedFeed | None:
    """The feed in ``body``, or None when it is not XML."""
    root = parse_xml(body)
    if root is None:
        return None
    channel = root
    for element in root:
        if local(element.tag) == "channel":
            channel = element
            break
    description = child_text(channel, "description") or child_text(channel, "subtitle")
    lang = child_text(channel, "language") or \
        root.get("{http://www.w3.org/XML/1998/namespace}lang") or ""
    items = []
    for element in root.iter():
        if local(element.tag) in ("item", "entry"):
            items.append(_item(element))
            if len(items) >= max_items:
                break
    return ParsedFeed(child_text(channel, "title"), html_text(description) if description
                      else "", lang.strip(), tuple(items))
