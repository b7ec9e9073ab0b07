"""The HTML processor: the seed document's list of what is extracted from a web page.

Layer: ``crawler.core.processing.processors``. Steps, in order:

1. decode (headers, metas, detection: :mod:`..encoding`) and parse with lxml's forgiving HTML
   parser (comments and processing instructions dropped); a page lxml cannot parse at all is
   read as plain text; a page nested past libxml2's depth limit is parsed again with its
   nesting tags as spaces (else the parser stops there and the rest of the range is lost);
2. read the head: ``<title>``, metas (robots, description, keywords, refresh,
   content-language), ``<base href>``, ``<link rel=canonical>``, ``<html lang>`` and the xml
   prologue's ``lang``;
3. strip ``script``, ``style``, ``noscript`` and ``template``; the deduplication hash text is the
   remaining text with every non-word character removed;
4. collect links from ``a``/``area`` (not ``rel=nofollow``; anchor text, or the ``alt`` of images
   inside), ``frame``/``iframe`` (``src``) and ``img`` with ``alt``, against ``<base>``, up to the
   extraction limit. Links are collected from the whole page, before a scraper trims it, so that
   navigation still feeds the crawl;
5. if a scraper matches, its text path and delete paths choose the text, and its fields and meta
   words are read (a ``media:`` meta word sets the page's media);
6. leave out the page's furniture (:mod:`.boilerplate`: navigation, footers, sidebars,
   permalink marks), then cut the text into blocks (headings, paragraphs, list items,
   cells...), keeping each block's tag and offset, and a language sample without code;
7. language: declared tags (unless en/en-US), charset, URL, text test
   (:func:`indexer.core.text.guess_language`);
8. title: ``<title>``, else the first non-empty ``h1``..``h6``; at most 100 characters;
9. description: the configured summarizer over the meta description and the blocks;
10. meta refresh to another URL, or a canonical link more than 3 edits away from the URL, make
    the page a redirect: one ``location`` link and the description ``url => target``.

Speed: the tree is walked by C code, not Python loops over elements. Two small XSLT
stylesheets (compiled once per thread) write the block text with boundary markers
(:func:`.blocks.text_blocks`) and the link records (:func:`.link_records.link_records`) as
single strings that regular expressions then cut up; the hash text is lxml's text serialisation. A page whose
markup spells a marker character as a character reference (so that it could reach the tree)
takes the element-by-element path instead, which gives the same result for ordinary pages.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import replace
from typing import NamedTuple

from lxml import etree

from crawler.core.processing.config import MAX_TITLE_LEN
from crawler.core.processing.encoding import decode
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage, Link, ScoredSentence
from crawler.core.processing.processors.base import ProcessorContext, summarize_and_index
from crawler.core.processing.processors.blocks import text_blocks
from crawler.core.processing.processors.boilerplate import drop_furniture
from crawler.core.processing.processors.link_records import link_records
from crawler.core.processing.robot_metas import robot_metas
from crawler.core.processing.summarizers import TextBlock
from crawler.core.urls import canonicalize, levenshtein
from indexer.core.text import declared_language, guess_language

log = logging.getLogger(__name__)

STRIP_TAGS = ("script", "style", "noscript", "template")
# A page longer than this is parsed without its <span> tags, when no scraper could read them:
# span is in none of the tag lists above, so text, blocks and links come out the same, and a
# source-code view (a 5 MB page of rustdoc's src/ tree has 132,000 spans) parses into a tree
# of ~10 MB instead of ~150 MB, in a fifth of the time.
LARGE_PAGE_BYTES = 1 << 20
# Quoted attribute values are skipped whole; a tag whose values hold "<" or ">" is left to the
# parser. No part of the pattern crosses a "<", so each try stops at the next tag and hostile
# markup ("<span" a million times, unclosed quotes) costs one pass.
_SPAN_TAG = re.compile(rb"""</?span\b[^<>"']{0,256}"""
                       rb"""(?:(?:"[^<>"]{0,256}"|'[^<>']{0,256}')[^<>"']{0,256}){0,8}>""",
                       re.IGNORECASE)
_TITLE_END = re.compile(rb"</title\s*>", re.IGNORECASE)


def _without_spans(data: bytes) -> bytes:
    """``data`` without its span tags after the end of its title (a title's content is raw
    text: a "<span>" written in it is part of the title)."""
    end = _TITLE_END.search(data)
    at = end.end() if end else 0
    # In pieces cut before a "<" (no tag crosses one: the pattern holds one "<", its first
    # byte): a substitution holds its pieces until it joins them, about ten times the bytes
    # of a page made of short spans, as a rustdoc source view is.
    out = [data[:at]]
    while at < len(data):
        cut = data.find(b"<", at + _SPAN_PIECE)
        if cut < 0:
            cut = len(data)
        out.append(_SPAN_TAG.sub(b"", data[at:cut]))
        at = cut
    return b"".join(out)


_SPAN_PIECE = 256 << 10


_NON_WORD = re.compile(r"\W+")
_XML_LANG = re.compile(r"""^\s*<\?xml[^>]*?\blang\s*=\s*["']([^"']+)""")
_REFRESH_URL = re.compile(r"""url\s*=\s*['"]?\s*([^'";\s]+)""", re.IGNORECASE)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000-\ue004]")
# Control characters -> space on UTF-8 bytes (they are single bytes there); the markers are
# three-byte sequences starting EE 80, rare enough to check for before a full regex pass.
_CONTROL_CODES = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
_CONTROL_BYTES = bytes.maketrans(_CONTROL_CODES, b" " * len(_CONTROL_CODES))
_MARKER_PREFIX = b"\xee\x80"
# A character reference to a marker would put one in the tree: such pages take the
# element-by-element path. (False alarms, such as &#xe0001;, only cost time.)
_MARKER_REFERENCE = re.compile(r"&#(?:[xX]0*[eE]00[0-4]|0*5734[4-8])")
_MARKER_REFERENCE_BYTES = re.compile(_MARKER_REFERENCE.pattern.encode())
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII_NON_WORD = bytes(c for c in range(128) if not re.match(r"\w", chr(c)))
REDIRECT_EDIT_DISTANCE = 3


def _attr(element: etree._Element, name: str) -> str:
    value = element.get(name)
    return value.strip() if value else ""


def _text(element: etree._Element) -> str:
    return " ".join("".join(element.itertext()).split())


_local = threading.local()


def _parser() -> etree.HTMLParser:
    # etree's parser, not lxml.html's: plain elements avoid a Python class lookup per node.
    # One per thread: a parser must not be used by two threads at once.
    parser: etree.HTMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = etree.HTMLParser(
            recover=True, remove_comments=True, remove_pis=True, encoding="utf-8",
            no_network=True, default_doctype=False,
        )
    return parser


def _parse_bytes(data: bytes) -> etree._Element | None:
    """The page's tree; a page whose nesting passed libxml2's depth limit (256 open elements:
    thousands of unclosed ``<div>`` or ``<font>`` on one line) is parsed again flattened, since
    libxml2 stops at that limit and everything after it would be lost."""
    parser = _parser()
    try:
        doc = etree.fromstring(data, parser)
        if not _hit_depth_limit(parser):
            return doc
        return etree.fromstring(_flattened(data), parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def _hit_depth_limit(parser: etree.HTMLParser) -> bool:
    return any(error.level_name == "FATAL" and ("depth" in error.message.lower()
                                                or error.type_name == "ERR_RESOURCE_LIMIT")
               for error in parser.error_log)


# Tags kept by the flattened parse: the head's, links' and media's, raw-text elements (their
# text must still be dropped) and those the parser never nests (a new p or li closes the open
# one). Every other tag becomes a space. Bounded like _SPAN_TAG: no try crosses a "<".
_FLAT_KEEP = (b"html|head|body|title|meta|base|link|script|style|a|area|img|frame|iframe|"
              b"br|p|li")
_NESTING_TAG = re.compile(rb"</?(?!(?:" + _FLAT_KEEP + rb""")[\s/>])[a-zA-Z][^<>"']{0,256}"""
                          rb"""(?:(?:"[^<>"]{0,256}"|'[^<>']{0,256}')[^<>"']{0,256}){0,8}>""",
                          re.IGNORECASE)


def _flattened(data: bytes) -> bytes:
    """``data`` with every tag that can nest deep replaced by a space, after its title."""
    end = _TITLE_END.search(data)
    at = end.end() if end else 0
    return data[:at] + _NESTING_TAG.sub(b" ", data[at:])


def _clean(text: str | None, utf8: bytes | None = None) -> tuple[str | None, bytes]:
    """``text`` (``utf8``: the same in UTF-8, if known; then ``text`` may be None) with control
    characters and our marker characters blanked, as UTF-8 for the parser; the cleaned text
    itself only when it had to be made (else ``None``: the caller cleans what it needs of the
    text on demand)."""
    if utf8 is None:
        assert text is not None
        utf8 = text.encode("utf-8", "replace")
    data = utf8.translate(_CONTROL_BYTES)
    if _MARKER_PREFIX in data:  # maybe a marker character: the exact (slower) way
        cleaned = _CONTROL.sub(" ", text if text is not None else utf8.decode("utf-8"))
        return cleaned, cleaned.encode("utf-8", "replace")
    return None, data


def _hash_text(doc: etree._Element) -> str:
    """The page's text with every non-word character removed (the deduplication text)."""
    text = etree.tostring(doc, method="text", encoding=str)
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
            return _CONTROL.sub(" ", text if text is not None else utf8.decode("utf-8"))

        # Blank control characters; this also keeps our block markers out of the page text.
        cleaned, data = _clean(text, utf8)
        if len(data) > LARGE_PAGE_BYTES and not ctx.scrapers.reads_spans:
            data = _without_spans(data)
        doc = _parse_bytes(data)
        del data
        if doc is None:
            return Extraction(hash_text=_NON_WORD.sub("", cleaned or cleaned_text()),
                              errors=("empty document",))
        # (character references are ASCII: the same search on the UTF-8 bytes)
        fast = (_MARKER_REFERENCE.search(text) if text is not None else
                _MARKER_REFERENCE_BYTES.search(utf8)) is None
        head = _read_head(doc, url, text, utf8, http_language)  # 2.
        etree.strip_elements(doc, *STRIP_TAGS, with_tail=False)  # 3.
        hash_text = _hash_text(doc)
        title = head.title or _first_heading(doc)
        collector = _collect_links(doc, url, head.base, config.max_links_to_extract, fast)  # 4.
        # 5. Scraper.
        scraper_name = None
        fields: dict[str, str] = {}
        scraper_meta: tuple[str, ...] = ()
        media = "text"
        root = doc.find("body")
        if root is None:
            root = doc
        if ctx.scrapers:
            scraper = ctx.scrapers.choose(doc, cleaned if cleaned is not None else cleaned_text)
            if scraper is not None:
                scraper_name = scraper.name
                scraped = ctx.scrapers.apply(scraper, doc)
                fields.update(scraped.fields)
                scraper_meta = scraped.meta_words
                media = scraped.media or media
                if scraped.root is not None:
                    root = scraped.root
        # 6. Blocks (without the page's furniture) and a language sample (7. when the language
        # is not declared).
        drop_furniture(root)
        guess = declared_language(declared=head.declared, charset=head.charset, url=url)
        blocks, sample = text_blocks(
            root, 0 if guess is not None else config.language_sample_chars, fast=fast)
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
            keywords=tuple(head.keywords), hash_text=hash_text, media=media,
            location=location, fields=fields, scraper=scraper_name, meta_words=scraper_meta,
            errors=(),
        )


class _Head(NamedTuple):
    """What step 2 reads from the head elements (wherever they are in the tree)."""

    metas: list[tuple[str, str]]     # (name or property, content), in order
    descriptions: list[str]
    keywords: list[str]
    declared: list[str]              # language tags, in the order they are trusted
    refresh: str                     # the first meta refresh (or location) content
    charset: str | None
    base: str                        # the url links are resolved against
    canonical: str                   # the first canonical link that resolves, or ""
    title: str                       # the <title> text, or ""


def _read_head(doc: etree._Element, url: str, text: str | None, utf8: bytes | None,
               http_language: str) -> _Head:
    """Step 2, in one walk over the head elements: metas in order, the first meta with a
    charset, base with an href and title below the root, canonical links."""
    metas: list[tuple[str, str]] = []
    descriptions: list[str] = []
    keywords: list[str] = []
    declared: list[str] = []
    head = text[:512] if text is not None else utf8[:2048].decode("utf-8", "ignore")[:512]
    match = _XML_LANG.match(_CONTROL.sub(" ", head))
    if match:
        declared.append(match.group(1))
    declared.append(_attr(doc, "lang") or _attr(doc, "{http://www.w3.org/XML/1998/namespace}lang"))
    refresh = ""
    charset = None
    base_href: str | None = None
    canonical_hrefs: list[str] = []
    title_el = None
    for element in doc.iter("meta", "link", "base", "title"):
        tag = element.tag
        if tag == "meta":
            name = (_attr(element, "name") or _attr(element, "property")).lower()
            equiv = _attr(element, "http-equiv").lower()
            content = _attr(element, "content")
            if name:
                metas.append((name, content))
            if name in ("description", "og:description", "dc.description") and content:
                descriptions.append(content)
            elif name == "keywords" and content:
                keywords.extend(k.strip() for k in content.split(",") if k.strip())
            elif name in ("language", "dc.language"):
                declared.append(content)
            if equiv == "content-language":
                declared.append(content.split(",")[0])
            elif equiv in ("refresh", "location") and not refresh:
                refresh = content
            if charset is None and element.get("charset") is not None and element is not doc:
                charset = _attr(element, "charset")
        elif tag == "link":
            if "canonical" in _attr(element, "rel").lower().split():
                canonical_hrefs.append(_attr(element, "href"))
        elif element is doc:
            continue
        elif tag == "base":
            if base_href is None and element.get("href") is not None:
                base_href = _attr(element, "href")
        elif title_el is None:
            title_el = element
    declared.append(http_language.split(",")[0] if http_language else "")
    base = url if base_href is None else canonicalize(base_href, url) or url
    canonical = next((c for c in (canonicalize(h, base) for h in canonical_hrefs) if c), "")
    title = _text(title_el) if title_el is not None else ""
    return _Head(metas, descriptions, keywords, declared, refresh, charset, base, canonical,
                 title)


def _first_heading(doc: etree._Element) -> str:
    """Step 8's fallback title: the first non-empty ``h1``..``h6``."""
    for heading in doc.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        title = _text(heading)
        if title:
            return title
    return ""


def _collect_links(doc: etree._Element, url: str, base: str, limit: int,
                   fast: bool) -> LinkCollector:
    """Step 4: the links of the whole page (before any scraper), up to ``limit``."""
    collector = LinkCollector(url, base, limit)
    add = collector.add
    for tag, href, rel, anchor, title_attr, alts, context in link_records(doc, fast):
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
            if context:  # the index entry the link is in (see .link_records)
                anchor = f"{context} {anchor}"
            add(href, anchor, tag)
        elif tag == "img":
            alt = anchor.strip()
            if alt:
                add(href or None, alt, "img")
        else:  # frame, iframe
            add(href or None, title_attr.strip(), tag)
    return collector


def _redirect_target(head: _Head, url: str) -> str | None:
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
