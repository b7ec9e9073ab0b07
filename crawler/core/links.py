"""Links: canonicalise, clean their text, merge duplicates, and prune to the best ones.

Layer: ``crawler.core``. Processors feed raw ``(href, text, kind)`` triples to a
:class:`LinkCollector`; :func:`prune_links` applies the seed's rule afterwards.

* Targets are canonicalised against the page URL or its ``<base href>``; URLs that are not
  http(s), are shorter than 5 or longer than 2048 characters, or repeat a path segment three
  times (crawler traps) are dropped, as are links to the page itself.
* Link text loses the link stop words ("click", "here", and the language's stop words). When
  fewer than 3 useful characters are left, words from the target URL are used instead; when
  even those give fewer than 3 characters, the text is empty (the link is still followed but
  makes no link document).
* A target seen again appends its text after `` .. `` (text capped at 200 characters).
* At most ``max_links_to_extract`` (300) distinct targets are collected.
* Pruning (the seed's ``pruneLinks``): when more than ``max_links`` remain, keep the
  ``max_links`` with the highest *effective number of terms*: the number of terms in the
  link text times ``min(1, gzipped length / raw length)``; ties keep document order.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence

from indexer.core.text import remove_stop_words
from indexer.core.text.tokenize import simple_words

from .page import Link
from .urls import canonicalize, file_extension, is_recursive

MIN_LINK_TEXT_CHARS = 3
MAX_LINK_TEXT_CHARS = 200
_URL_NOISE = frozenset(
    "http https www com org net html htm php asp aspx jsp index default".split()
)
_SPACES = re.compile(r"\s+")


def clean_link_text(text: str, lang: str | None) -> str:
    """Anchor text less link stop words, spaces collapsed (lower case)."""
    if not text:
        return ""
    return remove_stop_words(text, lang, link=True)[:MAX_LINK_TEXT_CHARS]


def url_words(url: str) -> str:
    """Words of a URL's path and host that can stand in for missing link text."""
    words = [
        w for w in simple_words(url) if w not in _URL_NOISE and not w.isdigit() and len(w) > 1
    ]
    return " ".join(words)[:MAX_LINK_TEXT_CHARS]


def effective_terms(text: str) -> float:
    """The seed's pruning score: terms in ``text`` x min(1, gzip length / raw length)."""
    if not text:
        return 0.0
    raw = text.encode("utf-8")
    terms = len(simple_words(text))
    ratio = min(1.0, len(zlib.compress(raw)) / len(raw))
    return terms * ratio


class LinkCollector:
    """Collects a page's links in document order (see module docstring for the rules).

    Call :meth:`add` for each raw link, then :meth:`links` once the page's language is known
    (link text is cleaned with that language's stop words).
    """

    __slots__ = ("_base", "_cache", "_kinds", "_limit", "_order", "_page", "_texts", "seen")

    def __init__(self, page_url: str, base: str | None, limit: int) -> None:
        self._page = page_url
        self._base = base or page_url
        self._limit = limit
        self._order: list[str] = []
        self._texts: dict[str, list[str]] = {}
        self._kinds: dict[str, str] = {}
        self._cache: dict[str, str | None] = {}
        self.seen = 0  # raw links offered, kept or not

    @property
    def full(self) -> bool:
        return len(self._order) >= self._limit

    def add(self, href: str | None, text: str = "", kind: str = "a") -> bool:
        """Offer one link; True when it was kept (a new target, or more text for a known one)."""
        self.seen += 1
        if not href:
            return False
        url = self._cache.get(href, "")
        if url == "":
            url = canonicalize(href, self._base)
            if url is not None and (url == self._page or is_recursive(url)):
                url = None
            self._cache[href] = url
        if url is None:
            return False
        texts = self._texts.get(url)
        if texts is None:
            if self.full:
                return False
            self._order.append(url)
            texts = self._texts[url] = []
            self._kinds[url] = kind
        text = " ".join(text.split())
        if text and text not in texts:
            texts.append(text)
        return True

    def links(self, lang: str | None) -> tuple[Link, ...]:
        """The collected links with cleaned text and pruning scores, in document order."""
        result = []
        for url in self._order:
            cleaned: list[str] = []
            for raw in self._texts[url]:
                text = clean_link_text(raw, lang)
                if text and text not in cleaned:
                    cleaned.append(text)
            text = " .. ".join(cleaned)[:MAX_LINK_TEXT_CHARS]
            if len(text.replace(" ", "")) < MIN_LINK_TEXT_CHARS:
                text = url_words(url)
                if len(text.replace(" ", "")) < MIN_LINK_TEXT_CHARS:
                    text = ""
            result.append(Link(url, text, self._kinds[url], effective_terms(text)))
        return tuple(result)


def prune_links(
    links: Sequence[Link], max_links: int, file_types: Iterable[str] = ()
) -> tuple[Link, ...]:
    """Drop links to file types not crawled, then keep the ``max_links`` best by
    effective number of terms (``max_links = -1``: keep all), in document order."""
    types = {t.lower().lstrip(".") for t in file_types}
    if types:
        links = [ln for ln in links if file_extension(ln.url) in types or
                 not file_extension(ln.url)]
    if max_links < 0 or len(links) <= max_links:
        return tuple(links)
    best = sorted(range(len(links)), key=lambda i: (-links[i].score, i))[:max_links]
    return tuple(links[i] for i in sorted(best))
