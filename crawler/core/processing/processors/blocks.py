"""Text blocks of an HTML tree: headings, paragraphs, list items, cells... in document order,
each with its tag and offset, and a language sample without code.

Layer: ``crawler.core.processing.processors``. The HTML processor (:mod:`.html`, step 6) calls
:func:`text_blocks` on the page's text root once its furniture is gone. Speed: a small XSLT
stylesheet (compiled once per thread) writes the block text with boundary markers as one string
that regular expressions then cut up; a page whose markup spells a marker character as a
character reference (so that it could reach the tree) takes the element-by-element path
instead, which gives the same result for ordinary pages. The HTML processor blanks the page's
own marker characters before parsing.
"""

from __future__ import annotations

import bisect
import re
import threading
from functools import partial
from itertools import accumulate

from lxml import etree

from crawler.core.processing.processors.link_records import alone
from crawler.core.processing.summarizers import TextBlock

BLOCK_TAGS = (
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "pre", "th", "td", "li", "dt", "dd",
    "article", "section", "cite", "blockquote", "caption", "figcaption", "summary", "address",
    "main", "header", "footer", "nav", "aside", "table", "tr", "ul", "ol", "dl", "form",
    "fieldset", "legend", "details", "option", "body", "center", "figure", "hr",
)
CODE_TAGS = ("code", "kbd", "samp", "tt", "var")
# Markers written into the tree's text to recover block boundaries in one C-level itertext().
# They are private-use characters (lxml refuses control characters); the page's own
# occurrences of them are blanked before parsing.
OPEN, TAGEND, CLOSE, CODE_OPEN, CODE_CLOSE = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004"
_OPEN, _TAGEND, _CLOSE, _CODE_OPEN, _CODE_CLOSE = OPEN, TAGEND, CLOSE, CODE_OPEN, CODE_CLOSE
_MARKERS = re.compile("(\ue000[^\ue001]*\ue001|\ue002|\ue003|\ue004)")
_local = threading.local()


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
    ``sample_chars`` characters that leaves out code (``pre``, ``code``, ``kbd``...): the
    :func:`blocks_of_stream` of its :func:`block_stream`.

    ``fast=False`` (the text may hold our marker characters) walks the elements in Python;
    that path modifies the tree's text, so the caller must not use it afterwards.
    """
    stream = block_stream(root) if fast else None
    if stream is None:
        return _text_blocks_by_element(root, sample_chars)
    return blocks_of_stream(stream, sample_chars)


def blocks_of_stream(stream: str, sample_chars: int) -> tuple[list[TextBlock], str]:
    """The blocks and language sample of a block stream (see :func:`block_stream`).

    A block is the text between two block boundaries (the start or end of a block element),
    spaces collapsed, with the tag of the innermost block around it. The sample is the
    non-code text, in pieces cut at every block or code boundary, joined with spaces; pieces
    are taken until they hold ``sample_chars`` characters (counted as the stream holds them,
    markers and white space included)."""
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


def block_stream(root: etree._Element) -> str | None:
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
