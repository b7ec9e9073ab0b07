"""A page parsed by lxml: the HTML processor's tree for the pages a scraper reads.

Layer: ``crawler.core.processing.processors``. Scrapers (:mod:`..scrapers`) are XPath, so a
page that a scraper may match is parsed by lxml's forgiving HTML parser (comments and
processing instructions dropped); so is a page that may spell our marker characters, and one
lexbor has no tree for (:mod:`.lexbor_tree`). A page nested past libxml2's depth limit is
parsed again with its nesting tags as spaces (:func:`.html_bytes.flattened`: else the parser
stops there and the rest of the range is lost). Contract: the steps of :mod:`.html` on this
tree are the processor's reference results; :class:`.lexbor_tree.LexborTree` gives the same.

Speed: the tree is walked by C code, not Python loops over elements. Two small XSLT
stylesheets (compiled once per thread) write the block text with boundary markers
(:func:`.blocks.text_blocks`) and the link records (:func:`.link_records.link_records`) as
single strings that regular expressions then cut up. A page whose markup spells a marker
character as a character reference (so that it could reach the tree) takes the
element-by-element path instead, which gives the same result for ordinary pages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator

from lxml import etree

from crawler.core.processing.processors.blocks import text_blocks
from crawler.core.processing.processors.boilerplate import drop_furniture
from crawler.core.processing.processors.html_bytes import flattened
from crawler.core.processing.processors.html_head import HeadElement
from crawler.core.processing.processors.link_records import LinkRecord, link_records
from crawler.core.processing.scrapers import Scraped, ScraperSet
from crawler.core.processing.summarizers import TextBlock

STRIP_TAGS = ("script", "style", "noscript", "template")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

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


def parse_bytes(data: bytes) -> etree._Element | None:
    """The page's tree; a page whose nesting passed libxml2's depth limit (256 open elements:
    thousands of unclosed ``<div>`` or ``<font>`` on one line) is parsed again flattened, since
    libxml2 stops at that limit and everything after it would be lost."""
    parser = _parser()
    try:
        doc = etree.fromstring(data, parser)
        if not _hit_depth_limit(parser):
            return doc
        return etree.fromstring(flattened(data), parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def _hit_depth_limit(parser: etree.HTMLParser) -> bool:
    return any(error.level_name == "FATAL" and ("depth" in error.message.lower()
                                                or error.type_name == "ERR_RESOURCE_LIMIT")
               for error in parser.error_log)


def _attr(element: etree._Element, name: str) -> str:
    value = element.get(name)
    return value.strip() if value else ""


def _text(element: etree._Element) -> str:
    return " ".join("".join(element.itertext()).split())


class LxmlTree:
    """One page's lxml tree and the steps of :mod:`.html` on it, scrapers included. Single
    use: :meth:`strip`, :meth:`scrape` and :meth:`text_blocks` modify the tree."""

    __slots__ = ("doc", "fast", "root")

    def __init__(self, doc: etree._Element, fast: bool = True) -> None:
        self.doc = doc
        self.fast = fast  # False: the text may hold our marker characters
        root = doc.find("body")
        self.root = root if root is not None else doc  # where the text is

    @classmethod
    def parse(cls, data: bytes, fast: bool = True) -> LxmlTree | None:
        """The tree of the UTF-8 page ``data``, or None when lxml finds no document in it;
        ``fast=False`` when its markup may spell our marker characters (the walks then go
        element by element)."""
        doc = parse_bytes(data)
        return cls(doc, fast) if doc is not None else None

    def head_elements(self) -> Iterator[HeadElement]:
        """``(tag, attributes)`` of the page's meta, link, base and title elements below its
        root, in document order."""
        doc = self.doc
        return ((element.tag, element.attrib)
                for element in doc.iter("meta", "link", "base", "title") if element is not doc)

    def title(self) -> str:
        """The first ``title`` element's text, spaces collapsed ("" without one)."""
        element = next((e for e in self.doc.iter("title") if e is not self.doc), None)
        return _text(element) if element is not None else ""

    def root_lang(self) -> str:
        """The root element's ``lang`` (or ``xml:lang`` in the XML namespace)."""
        return _attr(self.doc, "lang") or _attr(self.doc, _XML_LANG)

    def strip(self) -> None:
        """Remove ``script``, ``style``, ``noscript`` and ``template`` elements (their text
        with them, the text after them kept)."""
        etree.strip_elements(self.doc, *STRIP_TAGS, with_tail=False)

    def text(self) -> str:
        """The page's text (lxml's text serialisation)."""
        return etree.tostring(self.doc, method="text", encoding=str)

    def first_heading(self) -> str:
        """The first non-empty ``h1``..``h6`` (step 8's fallback title)."""
        for heading in self.doc.iter("h1", "h2", "h3", "h4", "h5", "h6"):
            title = _text(heading)
            if title:
                return title
        return ""

    def link_records(self) -> Iterable[LinkRecord]:
        """The page's link records (:func:`.link_records.link_records`)."""
        return link_records(self.doc, self.fast)

    def scrape(self, scrapers: ScraperSet, html: str | Callable[[], str]
               ) -> tuple[str, Scraped] | None:
        """Step 5: the name of the scraper that matches the page and what it read (its text
        root becomes the page's), or None."""
        scraper = scrapers.choose(self.doc, html)
        if scraper is None:
            return None
        scraped = scrapers.apply(scraper, self.doc)
        if scraped.root is not None:
            self.root = scraped.root
        return scraper.name, scraped

    def text_blocks(self, sample_chars: int, words: int = 0) -> tuple[list[TextBlock], str]:
        """Step 6: the blocks of the text root less its furniture, and a language sample of
        ``sample_chars`` characters (:func:`.blocks.text_blocks`). (``words``, the number of
        word characters of the page's text, is not used here.)"""
        drop_furniture(self.root)
        return text_blocks(self.root, sample_chars, fast=self.fast)
