"""Page processing: everything a fetcher does to one downloaded page.

Layer: ``crawler.core``. The fetcher makes one :class:`PageProcessor` per crawl (from the crawl's
:class:`~crawler.core.processing.config.PageProcessingConfig`) and calls
:meth:`PageProcessor.process` for
each :class:`~crawler.core.processing.page.FetchedPage`;
:func:`crawler.core.processing.indexing.to_index_documents`
then turns the :class:`~crawler.core.processing.page.ProcessedPage` into index documents.

Steps (the seed's "Fetchers and their Effect on Search Ranking"):

1. cut the body to the byte range (only those bytes can become terms); unpack gzip (sitemaps
   ``.xml.gz``), again within the byte range;
2. an HTTP redirect (3xx with ``Location``) becomes a location record;
3. pick the processor by MIME type, from the headers then the content (:mod:`.mime`), and
   extract (title, summary sentences, links, robot metas, language, hash text);
4. robot directives from the ``X-Robots-Tag`` header join the metas;
5. page rules run on the fields;
6. links: NOFOLLOW/NONE drop them; otherwise (except robots.txt and sitemaps) they are pruned to
   ``max_links`` by the seed's rule;
7. terms and positions of the title and the indexed text (:class:`indexer.core.text.TextAnalyzer`):
   the whole page by default (``Extraction.body``), the summary sentences in the "summary
   only" profile; region weights: the title's (always the first region), then each piece's;
8. dedup hash and SimHash (:func:`near_fingerprint`), safe-search label, meta words, cache
   copy (unless NOARCHIVE);
9. the crawl's classifiers on the title and summary: ``class:`` meta words and the per-page
   classifier scores (:class:`classifiers.core.apply.PageClassifiers`).
10. the indexing plugins (:mod:`.plugins`, the ``INDEXING_PLUGINS`` setting), in order: each
   may add regions of text, meta words, fields and sub-documents.

Contract: :meth:`PageProcessor.process` never raises on page content. A processor failure on a
hostile page is logged and reported in ``ProcessedPage.errors`` (the page keeps its URL facts).
Configuration errors (bad page rules, scrapers, options) raise when the processor is made.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, NamedTuple

from classifiers.core.apply import PageClassifiers
from crawler.core.processing import mime
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.errors import UnprocessablePageError
from crawler.core.processing.links import prune_links
from crawler.core.processing.meta_words import page_meta_words
from crawler.core.processing.page import (
    NOFOLLOW,
    NONE,
    Extraction,
    FetchedPage,
    Link,
    ProcessedPage,
    ScoredSentence,
)
from crawler.core.processing.page_rules import PageRules, parse_rules
from crawler.core.processing.plugins import apply_plugins, load_plugins
from crawler.core.processing.processors import ProcessorContext, processor_for
from crawler.core.processing.robot_metas import header_directives
from crawler.core.processing.safe import is_safe
from crawler.core.processing.scrapers import ScraperSet
from crawler.core.processing.summarizers import get_summarizer
from crawler.core.urls import canonicalize
from indexer.core.ids import DocType, hash8
from indexer.core.signals.simhash import NO_SIMHASH, simhash
from indexer.core.text import TermPositions, TextAnalyzer
from indexer.core.urls import host_of

log = logging.getLogger(__name__)

REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_BINARY_SAMPLE = 65536


class PageProcessor:
    """Processes pages for one crawl. Immutable after construction; safe to share between
    threads (the analyzer keeps one stemmer per thread)."""

    __slots__ = ("analyzer", "classifiers", "config", "context", "plugins", "rules")

    def __init__(
        self, config: PageProcessingConfig | None = None, analyzer: TextAnalyzer | None = None
    ) -> None:
        self.config = config or PageProcessingConfig()
        self.analyzer = analyzer or TextAnalyzer()
        self.rules: PageRules = parse_rules(self.config.page_rules)
        self.context = ProcessorContext(
            config=self.config,
            summarizer=get_summarizer(self.config.summarizer),
            scrapers=ScraperSet(self.config.scrapers),
        )
        self.classifiers = PageClassifiers(self.config.classifiers)
        self.plugins = load_plugins(self.config.indexing_plugins)

    # -- the pipeline -------------------------------------------------------------------

    def process(self, page: FetchedPage) -> ProcessedPage:
        """Process one downloaded page (see the module docstring)."""
        if not isinstance(page.body, bytes | bytearray | memoryview):
            raise UnprocessablePageError(f"page body must be bytes, got {type(page.body)!r}")
        url = canonicalize(page.url) or page.url
        config = self.config
        body = bytes(page.body[: config.byte_range])
        truncated = len(page.body) > config.byte_range
        errors: list[str] = []

        location = page.header("location").strip()
        if page.status in REDIRECT_CODES and location:
            target = canonicalize(location, url)
            if target is not None and target != url:
                return self._location_page(page, url, target, body, truncated)

        mime_type = page.mime_type or mime.detect_mime_type(url, page.header("content-type"),
                                                             body)
        if mime_type == "application/gzip":
            body, unpack_error = _gunzip(body, config.byte_range)
            if unpack_error:
                errors.append(unpack_error)
            mime_type = mime.sniff(body, url)
            if mime_type == mime.XML:
                mime_type = mime.SITEMAP
        processor = processor_for(mime_type)
        if processor is None:
            extraction = Extraction(hash_text=body[:_BINARY_SAMPLE].hex(), media="binary")
        else:
            try:
                extraction = processor.extract(page, body, self.context)
            except Exception as exc:  # the never-raise contract: report, keep the URL facts
                log.warning("processor %s failed on %s: %s", type(processor).__name__, url, exc,
                            exc_info=True)
                extraction = Extraction(hash_text=url, errors=(f"{type(exc).__name__}: {exc}",))
        metas = extraction.robot_metas | header_directives(page.header("x-robots-tag"))
        extraction = replace(extraction, robot_metas=metas, errors=extraction.errors +
                             tuple(errors))
        return self._finish(page, url, mime_type, body, truncated, extraction)

    def _finish(
        self,
        page: FetchedPage,
        url: str,
        mime_type: str,
        body: bytes,
        truncated: bool,
        ex: Extraction,
    ) -> ProcessedPage:
        """Steps 5-9 of the module docstring on an extraction: page rules, links, terms,
        hashes and labels, meta words, plugins."""
        config = self.config
        host = host_of(url)
        ruled = self._apply_rules(ex, url, host)
        links = _kept_links(ex, config)
        postings, region_weights, length = self._terms(ruled)
        description = " ".join(s.text for s in ruled.sentences)
        safe = is_safe(url, f"{ruled.title} {description}", config.safe_threshold)
        processed = ProcessedPage(
            url=url,
            status=page.status,
            mime_type=mime_type,
            encoding=ex.encoding,
            lang=ruled.lang,
            title=ruled.title,
            description=description,
            terms=postings,
            length=length,
            region_weights=region_weights,
            links=links,
            robot_metas=ex.robot_metas,
            meta_words=(),
            content_hash=_content_hash(ex, url),
            host=host,
            doc_type=DocType.LOCATION if ex.location else DocType.PAGE,
            lang_source=ex.lang_source,
            sentences=tuple(ruled.sentences),
            body=" ".join(piece.text for piece in ruled.whole),
            keywords=ex.keywords,
            media=ex.media,
            location=ex.location,
            size=len(page.body),
            truncated=truncated,
            fetched_at=page.fetched_at,
            download_time=page.download_time,
            ip=page.ip,
            server=page.header("server"),
            last_modified=page.header("last-modified"),
            cached_page=None,
            robots=ex.robots,
            is_sitemap=ex.is_sitemap,
            scraper=ex.scraper,
            fields=MappingProxyType(dict(ruled.fields)),
            safe=safe,
            errors=ex.errors,
            headers=MappingProxyType(page.kept_headers()),
            simhash=near_fingerprint(ex, ruled),
            canonical=ex.canonical,
        )
        processed = self._classified(self._with_meta_words(
            processed, ruled, body if config.cache_pages else None, ex.meta_words))
        if self.plugins:  # 10.
            processed = apply_plugins(processed, body, self.plugins, self.analyzer)
        return processed

    def _apply_rules(self, ex: Extraction, url: str, host: str) -> _Ruled:
        """Step 5: the page rules on the extraction's fields. A rule's TITLE, DESCRIPTION and
        LANG replace the page's (a new description is what is indexed, as the only
        sentence); its other fields, meta words, keyword links and outputs are kept."""
        if not self.rules:
            return _Ruled(ex.title, ex.sentences, ex.body, ex.lang, ex.fields)
        config = self.config
        title, sentences, whole, lang = ex.title, ex.sentences, ex.body, ex.lang
        description = " ".join(s.text for s in sentences)
        start = {
            "TITLE": title, "DESCRIPTION": description, "LANG": lang, "URL": url,
            "HOST": host, "KEYWORDS": list(ex.keywords), **dict(ex.fields),
        }
        result = self.rules.apply(start)
        fields: dict[str, Any] = dict(result.fields)
        title = _text_field(fields.get("TITLE"), title)
        new_description = _text_field(fields.get("DESCRIPTION"), description)
        if new_description != description:
            sentences = (ScoredSentence(new_description[: config.max_description_len], 1.0),
                         ) if new_description else ()
            whole = ()  # the rule's description is what is indexed
        lang = _text_field(fields.get("LANG"), lang) or lang
        fields = {k: v for k, v in fields.items()
                  if k not in ("TITLE", "DESCRIPTION", "LANG", "URL", "HOST")}
        if result.outputs:
            fields["RULE_OUTPUTS"] = [(o.folder, o.format, o.table, list(o.row))
                                      for o in result.outputs]
        return _Ruled(title, sentences, whole, lang, fields, result.meta_words,
                      result.keyword_links)

    def _terms(self, ruled: _Ruled) -> tuple[TermPositions, tuple[tuple[int, float], ...],
                                             int]:
        """Step 7: (term -> positions, region weights, length) of the title and the indexed
        text (the whole page, else the summary sentences). The title's region is always the
        first (search reads region 0 as the title), empty (last position -1) when the title
        has no words."""
        indexed = ruled.whole or ruled.sentences
        pieces = [ruled.title] + [s.text for s in indexed]
        postings, ends = self.analyzer.positions(pieces, ruled.lang)
        region_weights: list[tuple[int, float]] = [(ends[0] - 1, self.config.title_weight)]
        for piece, end, previous in zip(indexed, ends[1:], ends, strict=False):
            if end > previous:
                region_weights.append((end - 1, piece.weight))
        return postings, tuple(region_weights), ends[-1]

    @staticmethod
    def _with_meta_words(processed: ProcessedPage, ruled: _Ruled, cached: bytes | None,
                         scraped: tuple[str, ...] = ()) -> ProcessedPage:
        """Step 8's last part: the page's meta words (with the scraper's, ``scraped``, and
        the rules'), its cache copy (unless NOARCHIVE) and the rules' keyword links."""
        meta = page_meta_words(
            url=processed.url, host=processed.host, status=processed.status,
            mime_type=processed.mime_type, lang=processed.lang, media=processed.media,
            safe=processed.safe, fetched_at=processed.fetched_at,
            last_modified=processed.last_modified,
            links=(link.url for link in processed.links), size=processed.size,
            ip=processed.ip, server=processed.server, location=processed.location,
            extra=scraped + ruled.extra_meta,
        )
        fields = ruled.fields
        if ruled.keyword_links:
            fields = dict(processed.fields)
            fields["KEYWORD_LINKS"] = [f"{k},{u}" for k, u in ruled.keyword_links]
        return replace(
            processed,
            meta_words=meta,
            cached_page=cached if processed.archivable else None,
            fields=MappingProxyType(dict(fields)),
        )

    def _classified(self, page: ProcessedPage) -> ProcessedPage:
        """Step 9: the crawl's classifiers on a page document's title and summary (not on
        redirects, robots.txt or sitemaps)."""
        if not self.classifiers or page.doc_type != DocType.PAGE or page.robots is not None \
                or page.is_sitemap:
            return page
        words, scores = self.classifiers.classify(page.title, page.description)
        return replace(page, meta_words=page.meta_words + words, classifier_scores=scores)

    def _location_page(
        self, page: FetchedPage, url: str, target: str, body: bytes, truncated: bool
    ) -> ProcessedPage:
        extraction = Extraction(
            title="",
            sentences=(ScoredSentence(f"{url} => {target}", 1.0),),
            links=(Link(target, "", "location", 0.0),),
            location=target,
            hash_text=url,
        )
        return self._finish(page, url, mime.header_mime_type(page.header("content-type")),
                            body, truncated, extraction)


class _Ruled(NamedTuple):
    """An extraction's title, sentences, indexed text, language and fields after the page
    rules, and what the rules add (meta words, keyword links)."""

    title: str
    sentences: tuple[ScoredSentence, ...]
    whole: tuple[ScoredSentence, ...]
    lang: str
    fields: Mapping[str, Any]
    extra_meta: tuple[str, ...] = ()
    keyword_links: tuple[tuple[str, str], ...] = ()


def _kept_links(ex: Extraction, config: PageProcessingConfig) -> tuple[Link, ...]:
    """Step 6: NOFOLLOW/NONE drop the links; otherwise (except robots.txt, sitemaps and
    redirects) they are pruned to ``max_links`` by the seed's rule."""
    if ex.robot_metas & {NOFOLLOW, NONE}:
        return ()
    if ex.is_sitemap or ex.robots is not None or ex.location:
        return ex.links
    return prune_links(ex.links, config.max_links, config.file_types)


def near_fingerprint(ex: Extraction, ruled: _Ruled) -> int:
    """The page's SimHash: of its text without furniture (the extraction's ``near_text``),
    else of its indexed text (the whole page, else the summary); 0 for redirects, robots.txt
    and sitemaps, which are not pages to compare."""
    if ex.location or ex.robots is not None or ex.is_sitemap:
        return NO_SIMHASH
    text = ex.near_text or " ".join(s.text for s in (ruled.whole or ruled.sentences))
    return simhash(text)


def _content_hash(ex: Extraction, url: str) -> bytes:
    """The dedup hash: of the extraction's hash text (a location record: of its url)."""
    if ex.location:
        return hash8(hash8(url) + b"LOCATION")
    return hash8(ex.hash_text) if ex.hash_text else hash8(url)


def _text_field(value: Any, default: str) -> str:
    if value is None:
        return default
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def _gunzip(body: bytes, limit: int) -> tuple[bytes, str]:
    """Decompress gzip data, at most ``limit`` bytes out; a cut stream gives what it has."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = decompressor.decompress(body, limit)
    except zlib.error as exc:
        return b"", f"gzip: {exc}"
    return out, ""

