"""The HTML processor: the seed document's list of what is extracted from a web page.

Layer: ``crawler.core.processing.processors``. Steps, in order:

1. decode (headers, metas, detection: :mod:`..encoding`), blank control characters
   (:mod:`.html_bytes`) and parse: with lexbor (:mod:`.lexbor_tree`), or with lxml's
   forgiving HTML parser (:mod:`.lxml_tree`) for a page a scraper may match (scrapers are
   XPath), a page that may spell our marker characters, and one with nothing lexbor could
   build a tree of (lxml tells whether it is empty; a page lxml cannot parse at all is read
   as plain text). Both trees give the same results for the same markup (see
   :mod:`.lexbor_tree`); lexbor parses and walks a page in about half lxml's time;
2. read the head (:mod:`.html_head`): ``<title>``, metas (robots, description, keywords,
   refresh, content-language), ``<base href>``, ``<link rel=canonical>``, ``<html lang>``
   and the xml prologue's ``lang``;
3. strip ``script``, ``style``, ``noscript`` and ``template``; the deduplication hash text is
   the remaining text with every non-word character removed;
4. collect links from ``a``/``area`` (not ``rel=nofollow``; anchor text, or the ``alt`` of images
   inside), ``frame``/``iframe`` (``src``) and ``img`` with ``alt``, against ``<base>``, up to the
   extraction limit. Links are collected from the whole page, before a scraper trims it, so that
   navigation still feeds the crawl;
5. if a scraper matches, its text path and delete paths choose the text, and its fields and meta
   words are read (a ``media:`` meta word sets the page's media);
6. leave out the page's furniture (:mod:`.boilerplate`: navigation, footers, sidebars,
   permalink marks), then cut the text into blocks (headings, paragraphs, list items,
   cells...), keeping each block's tag and offset, and a language sample without code; the
   blocks' text is what the page's SimHash is taken of (near-duplicates);
7. language: declared tags (unless en/en-US), charset, URL, text test
   (:func:`indexer.core.text.guess_language`);
8. title: ``<title>``, else the first non-empty ``h1``..``h6``; at most 100 characters;
9. description: the configured summarizer over the meta description and the blocks;
10. meta refresh to another URL, or a canonical link more than 3 edits away from the URL, make
    the page a redirect: one ``location`` link and the description ``url => target``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from crawler.core.processing.config import MAX_TITLE_LEN
from crawler.core.processing.encoding import decode
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage, Link, ScoredSentence
from crawler.core.processing.processors.base import ProcessorContext, summarize_and_index
from crawler.core.processing.processors.html_bytes import (
    CONTROL,
    LARGE_PAGE_BYTES,
    clean,
    deep_or_large,
    without_spans,
)
from crawler.core.processing.processors.html_head import Head, read_head
from crawler.core.processing.processors.lexbor_tree import LexborTree
from crawler.core.processing.processors.link_records import LinkRecord
from crawler.core.processing.processors.lxml_tree import LxmlTree
from crawler.core.processing.robot_metas import robot_metas
from crawler.core.processing.scrapers import ScraperSet
from crawler.core.processing.summarizers import TextBlock
from crawler.core.urls import canonicalize, levenshtein
from indexer.core.text import declared_language, guess_language

log = logging.getLogger(__name__)

_NON_WORD = re.compile(r"\W+")
_REFRESH_URL = re.compile(r"""url\s*=\s*['"]?\s*([^'";\s]+)""", re.IGNORECASE)
# A character reference to a marker would put one in the tree: such pages take the
# element-by-element path. (False alarms, such as &#xe0001;, only cost time.)
_MARKER_REFERENCE = re.compile(r"&#(?:[xX]0*[eE]00[0-4]|0*5734[4-8])")
_MARKER_REFERENCE_BYTES = re.compile(_MARKER_REFERENCE.pattern.encode())
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII_NON_WORD = bytes(c for c in range(128) if not re.match(r"\w", chr(c)))
REDIRECT_EDIT_DISTANCE = 3


def hash_text(text: str) -> str:
    """``text`` (the page's text) with every non-word character removed: the deduplication
    text."""
    # Dropping the ASCII non-word characters on bytes first leaves little for the regex.
    text = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_NON_WORD).decode(
        "utf-8", "surrogatepass")
    if text.isascii():
        return text
    # What is left to remove is non-ASCII. Few distinct characters (accents, dashes, quotes
    # in a Latin-script page) are removed one by one; many (another script) by the regex.
    others = _NON_ASCII.findall(text)
    if len(others) > 64:
        return _NON_WORD.sub("", text)
    for char in set("".join(others)):
        if not (char.isalnum() or char == "_"):  # what \w matches
            text = text.replace(char, "")
    return text


def parse_tree(data: bytes, fast: bool, scrapers: ScraperSet, html: str | Callable[[], str]
               ) -> LexborTree | LxmlTree | None:
    """Step 1's parse of the cleaned page ``data``: lexbor's tree, unless a scraper may match
    the page (``html``: its text, or a function that makes it), ``fast`` is False (its
    markup may spell our marker characters), it is very large or its elements may nest deep
    (:func:`.html_bytes.deep_or_large`: an HTML5 parser's work grows with the nesting, where
    libxml2 stops at depth 256 and the page is parsed again flattened) or lexbor has no tree
    for it; then lxml's, or None when lxml finds no document."""
    if fast and not deep_or_large(data):
        tree = LexborTree.parse(data)
        if tree is not None and not (scrapers and scrapers.may_match(tree.has_element, html)):
            return tree
    return LxmlTree.parse(data, fast)


class HtmlProcessor:
    """Stateless; one instance serves every page and thread."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        text, encoding = decode(body, page.header("content-type"))
        language = page.header("content-language")
        # A lossless UTF-8 decoding (no replacement character) re-encodes to the body itself:
        # the body then stands for the text, which is let go here (a str takes up to 4 bytes
        # a character, 16 MB for a 4 MB page with one emoji) and decoded again only in part.
        if encoding == "utf-8" and "\ufffd" not in text:
            del text
            extraction = self._extract(page.url, None, ctx, language, body)
        else:
            extraction = self._extract(page.url, text, ctx, language, None)
        return replace(extraction, encoding=encoding)

    def extract_text(
        self, url: str, text: str, ctx: ProcessorContext, http_language: str = ""
    ) -> Extraction:
        """Extraction from decoded HTML (also used for XHTML and the Page Options test)."""
        return self._extract(url, text, ctx, http_language, None)

    def _extract(
        self, url: str, text: str | None, ctx: ProcessorContext, http_language: str,
        utf8: bytes | None,
    ) -> Extraction:
        """:meth:`extract_text`; ``utf8``, when given, is the text encoded in UTF-8, and
        ``text`` may then be None (it is decoded from ``utf8`` where it is needed whole).
        Big intermediate values are let go as soon as they are used: the peak memory of a
        fetcher is that of its biggest page. The steps are those of the module docstring."""
        config = ctx.config

        def cleaned_text() -> str:
            """The whole text with control and marker characters blanked."""
            return CONTROL.sub(" ", text if text is not None else utf8.decode("utf-8"))

        # Blank control characters; this also keeps our block markers out of the page text.
        cleaned, data = clean(text, utf8)
        if len(data) > LARGE_PAGE_BYTES and not ctx.scrapers.reads_spans:
            data = without_spans(data)
        # (character references are ASCII: the same search on the UTF-8 bytes)
        fast = (_MARKER_REFERENCE.search(text) if text is not None else
                _MARKER_REFERENCE_BYTES.search(utf8)) is None
        html = cleaned if cleaned is not None else cleaned_text
        tree = parse_tree(data, fast, ctx.scrapers, html)
        del data
        if tree is None:
            return Extraction(hash_text=_NON_WORD.sub("", cleaned or cleaned_text()),
                              errors=("empty document",))
        head = read_head(tree.head_elements(), tree.title(), tree.root_lang(), url, text, utf8,
                         http_language)  # 2.
        tree.strip()  # 3.
        hash_text_ = hash_text(tree.text())
        title = head.title or tree.first_heading()
        collector = _collect_links(tree.link_records(), url, head.base,
                                   config.max_links_to_extract, config.entry_context)  # 4.
        # 5. Scraper.
        scraper_name = None
        fields: dict[str, str] = {}
        scraper_meta: tuple[str, ...] = ()
        media = "text"
        if ctx.scrapers and isinstance(tree, LxmlTree):
            found = tree.scrape(ctx.scrapers, html)
            if found is not None:
                scraper_name, scraped = found
                fields.update(scraped.fields)
                scraper_meta = scraped.meta_words
                media = scraped.media or media
        # 6. Blocks (without the page's furniture) and a language sample (7. when the language
        # is not declared).
        guess = declared_language(declared=head.declared, charset=head.charset, url=url)
        blocks, sample = tree.text_blocks(
            0 if guess is not None else config.language_sample_chars, len(hash_text_))
        if guess is None:  # 7. Language.
            guess = guess_language(declared=head.declared, charset=head.charset, url=url,
                                   text=sample)
        lang = guess.lang
        # 9. Description.
        meta_blocks = ([TextBlock(" .. ".join(head.descriptions), "meta", 0)]
                       if head.descriptions else [])
        sentences, body = summarize_and_index(meta_blocks + blocks, lang, ctx)
        links = collector.links(lang)
        location = _redirect_target(head, url)  # 10.
        if location is not None:
            links = (Link(location, "", "location", 0.0),)
            sentences = (ScoredSentence(f"{url} => {location}", 1.0),)
            body = ()
        return Extraction(
            title=title[:MAX_TITLE_LEN], sentences=sentences, body=body, links=links,
            robot_metas=robot_metas(head.metas), lang=lang, lang_source=guess.source,
            keywords=tuple(head.keywords), hash_text=hash_text_, media=media,
            location=location, fields=fields, scraper=scraper_name, meta_words=scraper_meta,
            errors=(), near_text=" ".join(block.text for block in blocks),
            canonical=head.canonical,
        )


def _collect_links(records: Iterable[LinkRecord], url: str, base: str, limit: int,
                   entry_context: bool = True) -> LinkCollector:
    """Step 4: the links of the whole page (before any scraper), up to ``limit``; with
    ``entry_context`` a link's anchor text starts with the index entry it sits in."""
    collector = LinkCollector(url, base, limit)
    add = collector.add
    for tag, href, rel, anchor, title_attr, alts, context in records:
        if collector.full:
            break
        if tag == "a" or tag == "area":
            if not href:
                continue
            if "nofollow" in rel.lower():
                continue
            anchor = " ".join(anchor.split())
            if not anchor and tag == "a":
                anchor = alts
            if not anchor:
                anchor = title_attr.strip()
            if context and entry_context:  # the index entry the link is in (see .link_records)
                anchor = f"{context} {anchor}"
            add(href, anchor, tag)
        elif tag == "img":
            alt = anchor.strip()
            if alt:
                add(href or None, alt, "img")
        else:  # frame, iframe
            add(href or None, title_attr.strip(), tag)
    return collector


def _redirect_target(head: Head, url: str) -> str | None:
    """Step 10: a meta refresh to another url, else a canonical link more than
    ``REDIRECT_EDIT_DISTANCE`` edits away from the url, makes the page a redirect."""
    if head.refresh:
        match = _REFRESH_URL.search(head.refresh)
        target = canonicalize(match.group(1), head.base) if match else None
        if target and target != url:
            return target
    canonical = head.canonical
    if canonical and canonical != url and \
            levenshtein(canonical, url, REDIRECT_EDIT_DISTANCE) > REDIRECT_EDIT_DISTANCE:
        return canonical
    return None
