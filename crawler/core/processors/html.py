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
(:func:`text_blocks`) and the link records (:func:`.link_records.link_records`) as single strings that
regular expressions then cut up; the hash text is lxml's text serialisation. A page whose
markup spells a marker character as a character reference (so that it could reach the tree)
takes the element-by-element path instead, which gives the same result for ordinary pages.
"""

from __future__ import annotations

import bisect
import logging
import re
import threading
from dataclasses import replace
from functools import partial
from itertools import accumulate

from lxml import etree

from indexer.core.text import declared_language, guess_language

from ..config import MAX_TITLE_LEN
from ..encoding import decode
from ..links import LinkCollector
from ..page import Extraction, FetchedPage, Link, ScoredSentence
from ..robot_metas import robot_metas
from ..summarizers import TextBlock
from ..urls import canonicalize, levenshtein
from .base import ProcessorContext, summarize_and_index
from .boilerplate import drop_furniture
from .link_records import alone, link_records

log = logging.getLogger(__name__)

BLOCK_TAGS = (
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "pre", "th", "td", "li", "dt", "dd",
    "article", "section", "cite", "blockquote", "caption", "figcaption", "summary", "address",
    "main", "header", "footer", "nav", "aside", "table", "tr", "ul", "ol", "dl", "form",
    "fieldset", "legend", "details", "option", "body", "center", "figure", "hr",
)
CODE_TAGS = ("code", "kbd", "samp", "tt", "var")
STRIP_TAGS = ("script", "style", "noscript", "template")
# Markers written into the tree's text to recover block boundaries in one C-level itertext().
# They are private-use characters (lxml refuses control characters); the page's own
# occurrences of them are blanked before parsing.
_OPEN, _TAGEND, _CLOSE, _CODE_OPEN, _CODE_CLOSE = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004"
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


_MARKERS = re.compile("(\ue000[^\ue001]*\ue001|\ue002|\ue003|\ue004)")
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
    try:
        return etree.fromstring(data, _parser())
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def parse_html(text: str) -> etree._Element | None:
    """An lxml document for ``text`` (any HTML, however broken), or ``None`` if empty."""
    return _parse_bytes(text.encode("utf-8", "replace"))


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
        fetcher is that of its biggest page."""
        config = ctx.config

        def cleaned_text() -> str:
            """The whole text with control and marker characters blanked."""
            return _CONTROL.sub(" ", text if text is not None else utf8.decode("utf-8"))

        # Blank control characters; this also keeps our block markers out of the page text.
        cleaned, data = _clean(text, utf8)
        if len(data) > LARGE_PAGE_BYTES and not ctx.scrapers:
            data = _without_spans(data)
        doc = _parse_bytes(data)
        del data
        if doc is None:
            return Extraction(hash_text=_NON_WORD.sub("", cleaned or cleaned_text()),
                              errors=("empty document",))
        errors: list[str] = []
        # (character references are ASCII: the same search on the UTF-8 bytes)
        fast = (_MARKER_REFERENCE.search(text) if text is not None else
                _MARKER_REFERENCE_BYTES.search(utf8)) is None
        head = text[:512] if text is not None else utf8[:2048].decode("utf-8", "ignore")[:512]

        # 2. Head facts.
        metas: list[tuple[str, str]] = []
        descriptions: list[str] = []
        keywords: list[str] = []
        declared: list[str] = []
        match = _XML_LANG.match(_CONTROL.sub(" ", head))
        if match:
            declared.append(match.group(1))
        declared.append(_attr(doc, "lang") or _attr(doc, "{http://www.w3.org/XML/1998/namespace}lang"))
        refresh = ""
        charset = None
        base_href: str | None = None
        canonical_hrefs: list[str] = []
        title_el = None
        # One walk for the head elements (wherever they are): metas in order, the first
        # meta with a charset, base with an href and title below the root, canonical links.
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
        base = url
        if base_href is not None:
            base = canonicalize(base_href, url) or url
        canonical = ""
        for href in canonical_hrefs:
            canonical = canonicalize(href, base) or ""
            if canonical:
                break
        title = ""
        if title_el is not None:
            title = _text(title_el)

        # 3. Strip non-text elements; the dedup hash text.
        etree.strip_elements(doc, *STRIP_TAGS, with_tail=False)
        hash_text = _hash_text(doc)
        if not title:
            for heading in doc.iter("h1", "h2", "h3", "h4", "h5", "h6"):
                title = _text(heading)
                if title:
                    break
        title = title[:MAX_TITLE_LEN]

        # 4. Links (whole page, before any scraper).
        collector = LinkCollector(url, base, config.max_links_to_extract)
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

        # 5. Scraper.
        scraper_name = None
        fields: dict[str, str] = {}
        root = doc.find("body")
        if root is None:
            root = doc
        if ctx.scrapers:
            if cleaned is None:
                cleaned = cleaned_text()
            scraper = ctx.scrapers.choose(doc, cleaned)
            if scraper is not None:
                scraper_name = scraper.name
                chosen, scraped = ctx.scrapers.apply(scraper, doc)
                fields.update(scraped)
                if chosen is not None:
                    root = chosen

        # 6. Blocks (without the page's furniture) and a language sample (7. when the language
        # is not declared).
        drop_furniture(root)
        guess = declared_language(declared=declared, charset=charset, url=url)
        blocks, sample = text_blocks(
            root, 0 if guess is not None else config.language_sample_chars, fast=fast)

        # 7. Language.
        if guess is None:
            guess = guess_language(declared=declared, charset=charset, url=url, text=sample)
        lang = guess.lang

        # 9. Description.
        meta_blocks = [TextBlock(" .. ".join(descriptions), "meta", 0)] if descriptions else []
        sentences, body = summarize_and_index(meta_blocks + blocks, lang, ctx)

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
            body = ()

        return Extraction(
            title=title,
            sentences=sentences,
            body=body,
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


# -- blocks ---------------------------------------------------------------------------------


def _block_xslt() -> str:
    """The block stylesheet. Its modes say which block the text being written is in (and
    whether it is code), so that every block boundary is written as the marker
    ``OPEN tag TAGEND`` of the block the following text belongs to: after a block ends, that
    is its parent block (``body`` at the top). Code (``pre``, and ``code``... not inside other
    code) is written between ``CODE_OPEN`` and ``CODE_CLOSE``."""

    def mode(tag: str, code: bool) -> str:
        if tag == "body" and not code:
            return ""  # the default mode: the top of the block stack is "body"
        return f' mode="{tag}{"-code" if code else ""}"'

    out = ['<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">',
           '<xsl:output method="text" encoding="UTF-8"/>']
    for current in BLOCK_TAGS:
        for code in (False, True):
            here = mode(current, code)
            back = f"&#xe000;{current}&#xe001;"
            for tag in BLOCK_TAGS:
                if tag == "pre":
                    start, end = ("", "") if code else ("&#xe003;", "&#xe004;")
                    inner = mode("pre", True)
                else:
                    start, end, inner = "", "", mode(tag, code)
                out.append(f'<xsl:template match="{tag}"{here}>&#xe000;{tag}&#xe001;{start}'
                           f'<xsl:apply-templates{inner}/>{end}{back}</xsl:template>')
            if not code:  # inside code, code elements are plain (XSLT's built-in rule)
                out.append(f'<xsl:template match="{"|".join(CODE_TAGS)}"{here}>&#xe003;'
                           f'<xsl:apply-templates{mode(current, True)}/>&#xe004;</xsl:template>')
            out.append(f'<xsl:template match="br"{here}><xsl:text> </xsl:text></xsl:template>')
    out.append("</xsl:stylesheet>")
    return "\n".join(out)


_BLOCK_XSLT = _block_xslt()


def _block_stylesheet() -> etree.XSLT:
    """The compiled block stylesheet, one per thread."""
    sheet: etree.XSLT | None = getattr(_local, "blocks", None)
    if sheet is None:
        sheet = _local.blocks = etree.XSLT(etree.XML(_BLOCK_XSLT))
    return sheet


_new_block = partial(tuple.__new__, TextBlock)
_BOUNDARY = re.compile("\ue000([^\ue001]*)\ue001")
_CODE_REGION = re.compile("\ue003[^\ue004]*(?:\ue004|\\Z)")
_PIECE_BREAK = re.compile("\ue000[^\ue001]*\ue001|\ue002")


def text_blocks(
    root: etree._Element, sample_chars: int, *, fast: bool = True
) -> tuple[list[TextBlock], str]:
    """Blocks of text under ``root`` in document order, and a language sample of at most
    ``sample_chars`` characters that leaves out code (``pre``, ``code``, ``kbd``...).

    A block is the text between two block boundaries (the start or end of a block element),
    spaces collapsed, with the tag of the innermost block around it. The sample is the
    non-code text, in pieces cut at every block or code boundary, joined with spaces; pieces
    are taken until they hold ``sample_chars`` characters.

    ``fast=False`` (the text may hold our marker characters) walks the elements in Python;
    that path modifies the tree's text, so the caller must not use it afterwards.
    """
    stream = _block_stream(root) if fast else None
    if stream is None:
        return _text_blocks_by_element(root, sample_chars)
    has_code = _CODE_OPEN in stream
    text = stream.replace(_CODE_OPEN, "").replace(_CODE_CLOSE, "") if has_code else stream
    # Spaces collapsed once for all (markers are not spaces): a block is its stripped segment.
    parts = _BOUNDARY.split(" ".join(text.split()))
    tags = parts[1::2]
    tags.insert(0, "body")
    kept = [(value, tag) for value, tag in zip(map(str.strip, parts[0::2]), tags, strict=True)
            if value]
    # Each block starts one character (a space) after the end of the one before.
    offsets = list(accumulate((len(value) + 1 for value, _ in kept), initial=0))
    blocks = list(map(_new_block, ((value, tag, offset) for (value, tag), offset in
                                   zip(kept, offsets, strict=False))))
    if sample_chars <= 0:
        return blocks, ""
    if not has_code and len(stream) <= sample_chars:  # the sample is all the blocks' text
        return blocks, " ".join(value for value, _ in kept)[:sample_chars]
    outside = _CODE_REGION.sub(_CLOSE, stream) if has_code else stream
    if len(outside) > sample_chars:
        pieces = _PIECE_BREAK.split(outside)
        ends = list(accumulate(map(len, pieces)))
        if ends[-1] >= sample_chars:  # pieces are taken while fewer characters are held
            del pieces[bisect.bisect_left(ends, sample_chars) + 1:]
        outside = " ".join(pieces)
    else:
        outside = _PIECE_BREAK.sub(" ", outside)
    return blocks, " ".join(outside.split())[:sample_chars]


def _block_stream(root: etree._Element) -> str | None:
    """The text under ``root`` with block and code boundaries marked (see
    :func:`_block_xslt`), as an element-by-element walk would see it: without what ``root``'s
    tail would add (its end marker); ``None`` if the transformation failed."""
    if not alone(root):
        return None
    try:
        stream = str(_block_stylesheet()(root))
    except etree.XSLTError:
        return None
    tag = root.tag
    if tag in BLOCK_TAGS:
        stream = stream[: stream.rfind(_OPEN)]
        if tag == "pre" and stream.endswith(_CODE_CLOSE):
            stream = stream[:-1]
    elif tag in CODE_TAGS:
        if stream.endswith(_CODE_CLOSE):
            stream = stream[:-1]
    elif tag == "br" and stream.endswith(" "):
        stream = stream[:-1]
    return stream


def _text_blocks_by_element(root: etree._Element, sample_chars: int
                            ) -> tuple[list[TextBlock], str]:
    """:func:`text_blocks` walking the elements in Python: block boundaries are marked in the
    tree's text so that one ``itertext`` call yields everything (the tree is modified)."""
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
