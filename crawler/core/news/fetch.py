"""One feed downloaded and read, or why not.

Layer: ``crawler.core.news``. Downloads go through :class:`crawler.core.http.Fetcher` only, so
every connection (each redirect hop too) passes its egress policy, deadlines and byte range.
Nothing here raises on what a server sends: a failed download, an error status, a body that
is not a feed are each an :class:`FeedFetch` with an ``error`` an admin can read.
"""

from __future__ import annotations

from dataclasses import dataclass

from crawler.core.http import Fetcher, FetchRequest
from crawler.core.processing.processors.feed_items import ParsedFeed, parse_feed

MAX_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class FeedFetch:
    """The feed read from ``final_url`` (None with ``error`` saying why there is none)."""

    url: str
    final_url: str
    feed: ParsedFeed | None
    error: str = ""


def fetch_feed(fetcher: Fetcher, url: str) -> FeedFetch:
    """Download ``url`` and read it as RSS or Atom."""
    result = fetcher.fetch(FetchRequest(url))
    final = result.final_url or url
    if result.error is not None:
        return FeedFetch(url, final, None, f"download failed ({result.error.kind}): "
                                           f"{result.error}"[:MAX_ERROR_CHARS])
    if result.status != 200:
        return FeedFetch(url, final, None, f"the server answered HTTP {result.status}")
    feed = parse_feed(result.body)
    if feed is None:
        return FeedFetch(url, final, None, "not a feed: the body is not XML")
    if not feed.items and not feed.title:
        return FeedFetch(url, final, None, "not a feed: no title and no items")
    return FeedFetch(url, final, feed)
