"""The HTML processor: the seed document's list of what is extracted from a web page.

Layer: ``crawler.core.processors``. Steps, in order:

1. decode (headers, metas, detection: :mod:`..encoding`) and parse with lxml's forgiving HTML
   parser (comments and processing instructions dropped); a page lxml cannot parse at all is
   read as plain text;
2. read the head: ``<title>``, metas (robots, description, keywords, refresh,
   content-language), ``<base href>``, ``<link rel=canonical>``, ``<html lang>`` and the xml
   prologue's ``lang``;
3. strip ``script``, ``style``, ``noscript`` and ``template``; the deduplication hash text is the
   remaining text with every non-word character removed;
4. collect links from ``a``/``area`` (not ``rel=nofollow``; anchor text, or the ``alt`` of images
   inside), ``frame``/``iframe`` (``src``) and ``img`` with ``alt``, against ``<base>``, up to the
   extraction limit. Links are collected from the whole page, before a scraper trims it, so that
   navigation still feeds the crawl;
5. if a scraper matches, its text path and delete paths choose the text, and its fields are read;
6. cut the text into blocks (headings, paragraphs, list items, cells...), keeping each block's
   tag and offset, and a language sample without code;
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
from dataclasses import replace

from lxml import etree

from indexer.core.text import guess_language

from ..config import MAX_TITLE_LEN
from ..encoding import decode
from ..links import LinkCollector
from ..page import Extraction, FetchedPage, Link, ScoredSentence
from ..robot_metas import robot_metas
from ..summarizers import TextBlock
from ..urls import canonicalize, levenshtein
from .base import ProcessorContext, summarize_text

log = logging.getLogger(__name__)

BLOCK_TAGS = (
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "pre", "th", "td", "li", "dt", "dd",
    "article", "section", "cite", "blockquote", "caption", "figcaption", "summary", "address",
    "main", "header", "footer", "nav", "aside", "table", "tr", "ul", "ol", "dl", "form",
    "fieldset", "legend", "details", "option", "body", "center", "figure", "hr",
)
CODE_TAGS = ("code", "kbd", "samp", "tt", "var")
STRIP_TAGS = ("script", "style", "noscript", "template")
LINK_TAGS = ("a", "area", "frame", "iframe", "img")
# Markers written into the tree's text to recover block boundaries in one C-level itertext().
# They are private-use characters (lxml refuses control characters); the page's own
# occurrences of them are blanked before parsing.
_OPEN, _TAGEND, _CLOSE, _CODE_OPEN, _CODE_CLOSE = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004"
_MARKERS = re.compile("(\ue000[^\ue001]*\ue001|\ue002|\ue003|\ue004)")
_NON_WORD = re.compile(r"\W+")
_XML_LANG = re.compile(r"""^\s*<\?xml[^>]*?\blang\s*=\s*["']([^"']+)""")
_REFRESH_URL = re.compile(r"""url\s*=\s*['"]?\s*([^'";\s]+)""", re.IGNORECASE)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000-\ue004]")
REDIRECT_EDIT_DISTANCE = 3


def _attr(element: etree._Element, name: str) -> str:
    value = element.get(name)
    return value.strip() if value else ""


def _text(element: etree._Element) -> str:
    return " ".join("".join(element.itertext()).split())


def parse_html(text: str) -> etree._Element | None:
    """An lxml document for ``text`` (any HTML, however broken), or ``None`` if empty."""
    # etree's parser, not lxml.html's: plain elements avoid a Python class lookup per node.
    parser = etree.HTMLParser(
        recover=True, remove_comments=True, remove_pis=True, encoding="utf-8",
        no_network=True, default_doctype=False,
    )
    try:
        root = etree.fromstring(text.encode("utf-8", "replace"), parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    return root


class HtmlProcessor:
    """Stateless; one instance serves every page and thread."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        text, encoding = decode(body, page.header("content-type"))
        extraction = self.extract_text(page.url, text, ctx, http_language=page.header(
            "content-language"))
        return replace(extraction, encoding=encoding)

    def extract_text(
        self, url: str, text: str, ctx: ProcessorContext, http_language: str = ""
    ) -> Extraction:
        """Extraction from decoded HTML (also used for XHTML and the Page Options test)."""
        config = ctx.config
        text = _CONTROL.sub(" ", text)  # also keeps our block markers out of the page text
        doc = parse_html(text)
        if doc is None:
            return Extraction(hash_text=_NON_WORD.sub("", text), errors=("empty document",))
        errors: list[str] = []

        # 2. Head facts.
        metas: list[tuple[str, str]] = []
        descriptions: list[str] = []
        keywords: list[str] = []
        declared: list[str] = []
        match = _XML_LANG.match(text[:512])
        if match:
            declared.append(match.group(1))
        declared.append(_attr(doc, "lang") or _attr(doc, "{http://www.w3.org/XML/1998/namespace}lang"))
        refresh = ""
        for meta in doc.iter("meta"):
            name = (_attr(meta, "name") or _attr(meta, "property")).lower()
            equiv = _attr(meta, "http-equiv").lower()
            content = _attr(meta, "content")
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
        declared.append(http_language.split(",")[0] if http_language else "")
        charset = None
        meta_charset = doc.find(".//meta[@charset]")
        if meta_charset is not None:
            charset = _attr(meta_charset, "charset")
        base = url
        base_el = doc.find(".//base[@href]")
        if base_el is not None:
            base = canonicalize(_attr(base_el, "href"), url) or url
        canonical = ""
        for link_el in doc.iter("link"):
            rel = _attr(link_el, "rel").lower().split()
            if "canonical" in rel and not canonical:
                canonical = canonicalize(_attr(link_el, "href"), base) or ""
        title = ""
        title_el = doc.find(".//title")
        if title_el is not None:
            title = _text(title_el)

        # 3. Strip non-text elements; the dedup hash text.
        etree.strip_elements(doc, *STRIP_TAGS, with_tail=False)
        hash_text = _NON_WORD.sub("", "".join(doc.itertext()))
        if not title:
            for heading in doc.iter("h1", "h2", "h3", "h4", "h5", "h6"):
                title = _text(heading)
                if title:
                    break
        title = title[:MAX_TITLE_LEN]

        # 4. Links (whole page, before any scraper).
        collector = LinkCollector(url, base, config.max_links_to_extract)
        for element in doc.iter(*LINK_TAGS):
            if collector.full:
                break
            tag = element.tag
            if tag in ("a", "area"):
                href = element.get("href")
                if not href:
                    continue
                rel = (element.get("rel") or "").lower()
                if "nofollow" in rel:
                    continue
                anchor = _text(element) if tag == "a" else _attr(element, "alt")
                if not anchor and tag == "a":
                    anchor = " ".join(_attr(img, "alt") for img in element.iter("img"))
                if not anchor:
                    anchor = _attr(element, "title")
                collector.add(href, anchor, tag)
            elif tag in ("frame", "iframe"):
                collector.add(element.get("src"), _attr(element, "title"), tag)
            else:  # img
                alt = _attr(element, "alt")
                if alt:
                    collector.add(element.get("src"), alt, "img")

        # 5. Scraper.
        scraper_name = None
        fields: dict[str, str] = {}
        root = doc.find("body")
        if root is None:
            root = doc
        if ctx.scrapers:
            scraper = ctx.scrapers.choose(doc, text)
            if scraper is not None:
                scraper_name = scraper.name
                chosen, scraped = ctx.scrapers.apply(scraper, doc)
                fields.update(scraped)
                if chosen is not None:
                    root = chosen

        # 6. Blocks and a language sample.
        blocks, sample = text_blocks(root, config.language_sample_chars)

        # 7. Language.
        guess = guess_language(declared=declared, charset=charset, url=url, text=sample)
        lang = guess.lang

        # 9. Description.
        meta_blocks = [TextBlock(" .. ".join(descriptions), "meta", 0)] if descriptions else []
        sentences = summarize_text(meta_blocks + blocks, lang, ctx)

        # 10. Redirects: meta refresh, far canonical.
        location = None
        if refresh:
            match = _REFRESH_URL.search(refresh)
            target = canonicalize(match.group(1), base) if match else None
            if target and target != url:
                location = target
        if location is None and canonical and canonical != url and \
                levenshtein(canonical, url, REDIRECT_EDIT_DISTANCE) > REDIRECT_EDIT_DISTANCE:
            location = canonical
        links = collector.links(lang)
        if location is not None:
            links = (Link(location, "", "location", 0.0),)
            sentences = (ScoredSentence(f"{url} => {location}", 1.0),)

        return Extraction(
            title=title,
            sentences=sentences,
            links=links,
            robot_metas=robot_metas(metas),
            lang=lang,
            lang_source=guess.source,
            keywords=tuple(keywords),
            hash_text=hash_text,
            media="text",
            location=location,
            fields=fields,
            scraper=scraper_name,
            errors=tuple(errors),
        )


def text_blocks(root: etree._Element, sample_chars: int) -> tuple[list[TextBlock], str]:
    """Blocks of text under ``root`` in document order, and a language sample of at most
    ``sample_chars`` characters that leaves out code (``pre``, ``code``, ``kbd``...).

    The tree is modified: block boundaries are marked in the text so that one ``itertext``
    call (C speed) yields everything; the caller must not use the tree's text afterwards.
    """
    for element in root.iter(*BLOCK_TAGS, *CODE_TAGS, "br"):
        tag = element.tag
        if tag == "br":
            element.tail = " " + (element.tail or "")
        elif tag in CODE_TAGS:
            element.text = _CODE_OPEN + (element.text or "")
            element.tail = _CODE_CLOSE + (element.tail or "")
        else:
            code = tag == "pre"
            element.text = f"{_OPEN}{tag}{_TAGEND}{_CODE_OPEN if code else ''}{element.text or ''}"
            element.tail = f"{_CODE_CLOSE if code else ''}{_CLOSE}{element.tail or ''}"
    stream = "".join(root.itertext())
    blocks: list[TextBlock] = []
    sample: list[str] = []
    sample_len = 0
    stack = ["body"]
    code_depth = 0
    pending: list[str] = []
    offset = 0

    def flush() -> None:
        nonlocal offset
        if pending:
            value = " ".join("".join(pending).split())
            pending.clear()
            if value:
                blocks.append(TextBlock(value, stack[-1], offset))
                offset += len(value) + 1

    for piece in _MARKERS.split(stream):
        if not piece:
            continue
        first = piece[0]
        if first == _OPEN and piece[-1] == _TAGEND:
            flush()
            stack.append(piece[1:-1])
        elif piece == _CLOSE:
            flush()
            if len(stack) > 1:
                stack.pop()
        elif piece == _CODE_OPEN:
            code_depth += 1
        elif piece == _CODE_CLOSE:
            code_depth = max(0, code_depth - 1)
        else:
            pending.append(piece)
            if code_depth == 0 and sample_len < sample_chars:
                sample.append(piece)
                sample_len += len(piece)
    flush()
    return blocks, " ".join(" ".join(sample).split())[:sample_chars]
