"""Links: canonicalise, clean their text, merge duplicates, and prune to the best ones.

Layer: ``crawler.core``. Processors feed raw ``(href, text, kind)`` triples to a
:class:`LinkCollector`; :func:`prune_links` applies the seed's rule afterwards.

* Targets are canonicalised against the page URL or its ``<base href>``; URLs that are not
  http(s), are shorter than 5 or longer than 2048 characters, or repeat a path segment three
  times (crawler traps) are dropped, as are links to the page itself, under its own scheme or
  the other of http and https (a "this page on http://" banner, which the host answers with a
  redirect back to the page: following it downloaded the page a second time).
* Link text loses the link stop words ("click", "here", and the language's stop words). When
  fewer than 3 useful characters are left, words from the target URL are used instead; when
  even those give fewer than 3 characters, the text is empty (the link is still followed but
  makes no link document).
* A target seen again appends its text after `` .. `` (each text capped at 200 characters, the
  joined texts at MAX_JOINED_LINK_TEXT_CHARS).
* At most ``max_links_to_extract`` (300) distinct targets are collected.
* Resolved targets are remembered across pages (the same navigation links recur on every page
  of a site): by the href alone for absolute URLs, with the base's scheme and host for
  ``/paths``, and with the base's directory for relative paths (:func:`_resolution_key`).
* Pruning (the seed's ``pruneLinks``): when more than ``max_links`` remain, keep the
  ``max_links`` with the highest *effective number of terms*: the number of terms in the
  link text times ``min(1, gzipped length / raw length)``; ties keep document order.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from urllib.parse import urlsplit

from crawler.core.processing.page import Link
from crawler.core.urls import MAX_URL_LEN, MIN_URL_LEN, canonicalize, file_extension, is_recursive
from indexer.core.text import remove_stop_words
from indexer.core.text.tokenize import simple_words

MIN_LINK_TEXT_CHARS = 3
MAX_LINK_TEXT_CHARS = 200  # one anchor's text at most (Yioop's cap)
# The texts of one page's links to one target, joined, at most: a back-of-book index links a
# reference page from dozens or hundreds of entries (PostgreSQL's bookindex names
# runtime-config-client.html in 60, SQLAlchemy's genindex names core/connections.html in 211,
# 8,000 characters), each entry's term a way to find that page (see
# .processors.link_records); Yioop's 200 characters kept the first three or four of them.
MAX_JOINED_LINK_TEXT_CHARS = 16_000
_URL_NOISE = frozenset(
    "http https www com org net html htm php asp aspx jsp index default".split()
)
_SPACES = re.compile(r"\s+")
# Hrefs whose resolution depends on the base URL only through its scheme (absolute URLs with
# a host), its scheme and host (paths from the root), or its directory (relative paths that
# are not empty: an empty path, "?query" or "#fragment" depend on the whole base). No white
# space or control characters anywhere, which canonicalize and urljoin would strip.
_ABSOLUTE_HREF = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\x00-\x1f\x7f/?#\\][^\s\x00-\x1f\x7f\\]*\Z")
_ROOT_HREF = re.compile(r"/[^\s\x00-\x1f\x7f/\\][^\s\x00-\x1f\x7f\\]*\Z|/\Z")
_RELATIVE_HREF = re.compile(r"[^\s\x00-\x1f\x7f/?#;:\\][^\s\x00-\x1f\x7f:\\]*\Z")
_RESOLVED_MAX = 50_000
_resolved: dict[tuple[str, str, str | None, str], str | None] = {}


@lru_cache(maxsize=8192)  # navigation link texts recur on every page of a site
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


@lru_cache(maxsize=8192)
def effective_terms(text: str) -> float:
    """The seed's pruning score: terms in ``text`` x min(1, gzip length / raw length)."""
    if not text:
        return 0.0
    raw = text.encode("utf-8")
    terms = len(simple_words(text))
    ratio = min(1.0, len(zlib.compress(raw)) / len(raw))
    return terms * ratio


class _Base:
    """What resolving hrefs against one base URL needs, worked out once per page.

    ``context`` is (scheme, host, directory) of an http(s) base as ``urljoin`` uses them (the
    directory is ``None`` for a path without a slash, which ``urljoin`` drops), or ``None``
    for other bases: nothing is remembered across pages for those. When the base is
    canonical, ``origin`` and ``directory`` let :meth:`resolve_simple` resolve plain relative
    paths directly (``origin`` is ``""`` otherwise).
    """

    __slots__ = ("context", "directory", "origin", "url")

    def __init__(self, url: str) -> None:
        self.url = url
        self.context: tuple[str, str, str | None] | None = None
        self.origin = ""
        self.directory: list[str] = []
        try:
            parts = urlsplit(url)
        except ValueError:
            return
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            return
        path = parts.path
        slash = path.rfind("/")
        if slash < 0:
            # urljoin's urlparse cuts ";params" off the last segment; an empty rest is kept.
            directory = "" if not path or path.find(";") == 0 else None
        else:
            directory = path[: slash + 1]
        self.context = (scheme, parts.netloc, directory)
        if canonicalize(url) == url and path.startswith("/"):
            self.origin = f"{scheme}://{parts.netloc}"
            self.directory = path.split("/")[:-1]  # urljoin's base_parts (the file dropped)

    def resolve_simple(self, href: str) -> str | None:
        """``canonicalize(href, base)`` unless a crawler trap, for the common simple hrefs:
        an http(s) URL with a lower-case host and no port, user or dot segments; a fragment
        only; a path of unreserved characters (with an optional plain query) against a
        canonical base. ``""`` when it cannot tell (the caller then resolves the slow way)."""
        if len(href) > 2 * MAX_URL_LEN:
            return ""
        first = href[:1]
        if first == "#":
            if not self.origin:
                return ""
            url = self.url  # the base itself (canonical URLs have no fragment)
        elif first == "h" and href.startswith(("http://", "https://")):
            match = _SIMPLE_URL.match(href)
            if match is None:
                return ""
            url = match.group(1) + (match.group(2) or "/")
            if match.group(3):
                url = f"{url}?{match.group(3)}"
            if "/." in url:
                return ""
        else:
            url = self._resolve_path(href)
            if not url:
                return url
        if not MIN_URL_LEN <= len(url) <= MAX_URL_LEN:
            return None
        return None if _maybe_recursive(url) and is_recursive(url) else url

    def _resolve_path(self, href: str) -> str:
        match = _SIMPLE_HREF.match(href) if self.origin else None
        if match is None:
            return ""
        path, query = match.group(1), match.group(2)
        # urljoin's resolution of dot segments, then canonicalize's forms.
        if path.startswith("/"):
            segments = path.split("/")
        else:
            segments = self.directory + path.split("/")
            segments[1:-1] = filter(None, segments[1:-1])
        resolved: list[str] = []
        for segment in segments:
            if segment == "..":
                if resolved:
                    resolved.pop()
            elif segment != ".":
                resolved.append(segment)
        if segments[-1] in (".", ".."):
            resolved.append("")
        path = "/".join(resolved) or "/"
        if not path.startswith("/"):
            path = "/" + path
        if "/." in path or "//" in path:
            return ""
        return f"{self.origin}{path}?{query}" if query else f"{self.origin}{path}"


def _maybe_recursive(url: str) -> bool:
    """False when ``url`` cannot be a crawler trap (no path segment can occur 3 times)."""
    if "?" in url or "#" in url:
        return True
    pieces = url.split("/")[3:]
    return len(pieces) >= 3 and len(set(pieces)) <= len(pieces) - 2


# An http(s) URL already in canonical form but for its fragment (dropped): lower-case host
# without port, user or trailing dot; path and query as below.
_SIMPLE_URL = re.compile(
    r"(https?://[a-z0-9\-_]+(?:\.[a-z0-9\-_]+)*)(/[A-Za-z0-9._~\-/]*)?"
    r"(?:\?([A-Za-z0-9._~\-/=&]*))?(?:#[^\s\x00-\x1f\x7f]*)?\Z")
# A relative or root path (not "//host") of unreserved characters, an optional query of unreserved
# characters, "=" and "&", and an optional fragment without spaces (canonical forms drop it).
_SIMPLE_HREF = re.compile(
    r"(?!//)([A-Za-z0-9._~\-/]+)(?:\?([A-Za-z0-9._~\-/=&]*))?(?:#[^\s\x00-\x1f\x7f]*)?\Z")


def _resolution_key(context: tuple[str, str, str | None] | None, href: str
                    ) -> tuple[str, str, str | None, str] | None:
    """The part of the base that resolving ``href`` depends on, with ``href``; ``None`` when
    that is more than the base's directory (the link is then resolved uncached)."""
    if context is None:
        return None
    scheme, host, directory = context
    if _RELATIVE_HREF.match(href):
        return scheme, host, directory, href
    if _ROOT_HREF.match(href):
        return scheme, host, "", href
    if _ABSOLUTE_HREF.match(href):
        return scheme, "", "", href
    return None


def _resolve(base: _Base, href: str) -> str | None:
    """``canonicalize(href, base)`` unless a crawler trap: directly for simple paths, else
    remembered across pages when :func:`_resolution_key` allows."""
    url = base.resolve_simple(href)
    if url != "":
        return url
    key = _resolution_key(base.context, href)
    if key is not None:
        url = _resolved.get(key, "")
        if url != "":
            return url
    url = canonicalize(href, base.url)
    if url is not None and is_recursive(url):
        url = None
    if key is not None:
        if len(_resolved) >= _RESOLVED_MAX:
            _resolved.clear()
        _resolved[key] = url
    return url


class LinkCollector:
    """Collects a page's links in document order (see module docstring for the rules).

    Call :meth:`add` for each raw link, then :meth:`links` once the page's language is known
    (link text is cleaned with that language's stop words).
    """

    __slots__ = ("_base", "_cache", "_kinds", "_limit", "_order", "_page", "_page_forms",
                 "_texts", "seen")

    def __init__(self, page_url: str, base: str | None, limit: int) -> None:
        self._page = page_url
        self._page_forms = _scheme_forms(page_url)
        self._base = _Base(base or page_url)
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
            url = _resolve(self._base, href)
            if url in self._page_forms:
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
            text = " .. ".join(cleaned)[:MAX_JOINED_LINK_TEXT_CHARS]
            if len(text.replace(" ", "")) < MIN_LINK_TEXT_CHARS:
                text = url_words(url)
                if len(text.replace(" ", "")) < MIN_LINK_TEXT_CHARS:
                    text = ""
            result.append(Link(url, text, self._kinds[url], effective_terms(text)))
        return tuple(result)


def _scheme_forms(url: str) -> frozenset[str]:
    """``url`` and, for an http(s) url, the same url under the other of the two schemes."""
    if url.startswith("https://"):
        return frozenset((url, "http://" + url[len("https://"):]))
    if url.startswith("http://"):
        return frozenset((url, "https://" + url[len("http://"):]))
    return frozenset((url,))


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
