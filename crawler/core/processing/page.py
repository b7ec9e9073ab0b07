"""The values of page processing: what comes in (a fetched page) and what goes out.

Layer: ``crawler.core``. The fetcher builds a :class:`FetchedPage` per download and calls
:meth:`crawler.core.processing.process.PageProcessor.process`; the result is one frozen
:class:`ProcessedPage`, which :func:`crawler.core.processing.indexing.to_index_documents` turns into
the ``IndexDocument`` values of the index issue (the page and its link documents).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from indexer.core.ids import DocType

EMPTY_MAP: Mapping[str, Any] = MappingProxyType({})

# Robot directives found in meta tags and X-Robots-Tag headers (upper case).
NOINDEX = "NOINDEX"
NOFOLLOW = "NOFOLLOW"
NOARCHIVE = "NOARCHIVE"
NOSNIPPET = "NOSNIPPET"
NONE = "NONE"
JUSTFOLLOW = "JUSTFOLLOW"
ROBOT_DIRECTIVES = frozenset({NOINDEX, NOFOLLOW, NOARCHIVE, NOSNIPPET, NONE, JUSTFOLLOW})
# The response headers that processing reads (and recrawls compare), kept with a page's
# summary so that a stored page can be processed again as it was fetched (archive crawls, WARC
# export: crawler.core.archive); the others are not stored.
KEPT_HEADERS = ("content-type", "content-language", "last-modified", "etag", "expires",
                "server", "x-robots-tag")


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """One download, as the fetcher hands it to processing.

    ``body`` is what was received (it may be longer than the byte range: processing truncates);
    ``headers`` are the response headers (any case; looked up lower-case); ``fetched_at`` is a
    Unix time; ``mime_type`` forces a MIME type (Page Options' test page), bypassing detection.
    """

    url: str
    body: bytes
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    fetched_at: float = 0.0
    download_time: float = 0.0
    ip: str = ""
    mime_type: str | None = None

    def header(self, name: str, default: str = "") -> str:
        """A response header by case-insensitive name."""
        name = name.lower()
        for key, value in self.headers.items():
            if key.lower() == name:
                return value
        return default

    def kept_headers(self) -> dict[str, str]:
        """The :data:`KEPT_HEADERS` the page was sent, lower-case names, in that order."""
        return {name: value for name in KEPT_HEADERS if (value := self.header(name))}


@dataclass(frozen=True, slots=True)
class Link:
    """An outlink: canonical target ``url``; ``text`` is the anchor text with link stop words
    removed (empty when nothing useful is left); ``kind`` says where it came from (``a``,
    ``frame``, ``iframe``, ``img``, ``location``, ``canonical``, ``sitemap``, ``feed``,
    ``text``); ``score`` is the seed's pruning score (terms in text x gzip ratio)."""

    url: str
    text: str = ""
    kind: str = "a"
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    """A sentence of a page's summary and its weight (the region weight of its positions)."""

    text: str
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class RobotsInfo:
    """What a robots.txt says, for the scheduler: the text (for a ``RobotsPolicy`` to parse),
    the crawl delay for our agent, and the announced sitemaps."""

    text: str
    crawl_delay: float | None = None
    sitemaps: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Extraction:
    """What a MIME-type processor extracts from a page, before scrapers' fields, page rules,
    meta words and terms are applied. ``sentences`` is the summary in document order;
    ``body`` is the whole text to index in document order, weighted
    (:func:`~crawler.core.processing.summarizers.indexed_body`), or empty when only the summary is
    indexed
    (the "summary only" Page Options, and processors without running text)."""

    title: str = ""
    sentences: tuple[ScoredSentence, ...] = ()
    body: tuple[ScoredSentence, ...] = ()
    links: tuple[Link, ...] = ()
    robot_metas: frozenset[str] = frozenset()
    lang: str = "en"
    lang_source: str = "default"
    keywords: tuple[str, ...] = ()
    hash_text: str = ""
    media: str = "text"
    location: str | None = None
    fields: Mapping[str, Any] = field(default_factory=lambda: EMPTY_MAP)
    robots: RobotsInfo | None = None
    is_sitemap: bool = False
    scraper: str | None = None
    meta_words: tuple[str, ...] = ()  # a scraper's (``scraper:<name>`` ...)
    encoding: str = ""
    errors: tuple[str, ...] = ()
    # the page's text without its furniture (what its SimHash is taken of; "": the indexed
    # text is) and its declared ``rel=canonical`` url ("" when none)
    near_text: str = ""
    canonical: str = ""


@dataclass(frozen=True, slots=True)
class ProcessedPage:
    """The result of processing one page: everything the index needs.

    Invariants:
    * ``terms`` maps each term to strictly increasing positions; positions ``0 .. length-1``
      cover the title's terms first, then the indexed text's: the whole page (``body``) with
      whole-page indexing, else the description;
    * ``region_weights`` is sorted by last position and covers ``0 .. length-1``; its first
      region is always the title's (last position -1 when the title has no words), weighing
      ``title_weight``; then each indexed piece's positions weigh its score (summary
      sentences their normalised score, about 1 on average, never 0; the rest of the page
      less);
    * ``body`` is the indexed text after the title (empty when only the description is);
    * ``links`` are canonical, distinct, at most ``max_links`` of them (empty under NOFOLLOW);
    * ``content_hash`` is the 8-byte hash of the page's text without tags and non-word
      characters (equal pages, equal hashes); ``text_hash`` is its first 7 bytes;
    * ``location`` is set for redirects (HTTP 3xx, meta refresh, far canonical link), and then
      ``doc_type`` is ``DocType.LOCATION``;
    * ``errors`` lists what could not be read (the page is then processed as far as possible);
    * ``subdocuments`` are the indexing plugins' documents made from the page (indexed at
      ``<url>#<key>``), and the plugins' regions are part of ``terms`` and
      ``region_weights`` (not of ``body``).
    * ``headers`` are the response's :data:`KEPT_HEADERS` (lower-case names).
    * ``simhash`` is the 64-bit SimHash of the page's text without its furniture
      (:mod:`indexer.core.signals.simhash`; 0 for redirects, robots.txt, sitemaps and pages with
      too little text); ``canonical`` the ``rel=canonical`` url the page declares ("").
    """

    url: str
    status: int
    mime_type: str
    encoding: str
    lang: str
    title: str
    description: str
    terms: Mapping[str, tuple[int, ...]]
    length: int
    region_weights: tuple[tuple[int, float], ...]
    links: tuple[Link, ...]
    robot_metas: frozenset[str]
    meta_words: tuple[str, ...]
    content_hash: bytes
    host: str
    doc_type: DocType = DocType.PAGE
    lang_source: str = "default"
    sentences: tuple[ScoredSentence, ...] = ()
    body: str = ""
    keywords: tuple[str, ...] = ()
    media: str = "text"
    location: str | None = None
    size: int = 0
    truncated: bool = False
    fetched_at: float = 0.0
    download_time: float = 0.0
    ip: str = ""
    server: str = ""
    last_modified: str = ""
    cached_page: bytes | None = None
    robots: RobotsInfo | None = None
    is_sitemap: bool = False
    scraper: str | None = None
    fields: Mapping[str, Any] = field(default_factory=lambda: EMPTY_MAP)
    safe: bool = True
    errors: tuple[str, ...] = ()
    classifier_scores: tuple[float, ...] = ()  # by classifier slot (classifiers.core.apply)
    # documents indexing plugins made from the page (crawler.core.processing.plugins.PluginDocument)
    subdocuments: tuple[Any, ...] = ()
    headers: Mapping[str, str] = field(default_factory=lambda: EMPTY_MAP)
    simhash: int = 0
    canonical: str = ""

    @property
    def text_hash(self) -> bytes:
        """The 7-byte hash that groups equal pages (``IndexDocument.text_hash``)."""
        return self.content_hash[:7]

    @property
    def indexable(self) -> bool:
        """False under NOINDEX, NONE or JUSTFOLLOW."""
        return not (self.robot_metas & {NOINDEX, NONE, JUSTFOLLOW})

    @property
    def followable(self) -> bool:
        """False under NOFOLLOW or NONE."""
        return not (self.robot_metas & {NOFOLLOW, NONE})

    @property
    def archivable(self) -> bool:
        """False under NOARCHIVE, NOINDEX, NONE or JUSTFOLLOW."""
        return not (self.robot_metas & {NOARCHIVE, NOINDEX, NONE, JUSTFOLLOW})

    @property
    def snippetable(self) -> bool:
        """False under NOSNIPPET."""
        return NOSNIPPET not in self.robot_metas
