"""What the HTML processor does to a page's bytes before a parser reads them.

Layer: ``crawler.core.processing.processors``. :mod:`.html` cleans the page (:func:`clean`:
control characters and the private-use characters the tree walks use as markers become
spaces), drops the span tags of a very large page (:func:`without_spans`), and the two page
trees adapt the bytes to their parser: :func:`closed_empty_tags` (:mod:`.lexbor_tree`) writes
``<x/>`` of an element that is not void as ``<x/></x>``, since libxml2, whose trees the
processor's results were made on, closes such an element where an HTML5 parser leaves it open
(an XHTML page's ``<a id="x"/>`` would then hold the rest of its section, a ``<script/>``
the rest of the page); :func:`flattened` (:mod:`.lxml_tree`) writes the tags that can nest
deep as spaces, for a page past libxml2's depth limit. :func:`deep_or_large` tells which
pages lexbor must not parse (its work grows with their nesting). Every pattern here is
bounded: no try crosses a ``<``, so hostile markup costs one pass.
"""

from __future__ import annotations

import re

# A page longer than this is parsed without its <span> tags, when no scraper could read them:
# span is in none of the tag lists of the tree walks, so text, blocks and links come out the
# same, and a source-code view (a 5 MB page of rustdoc's src/ tree has 132,000 spans) parses
# into a tree of ~10 MB instead of ~150 MB, in a fifth of the time.
LARGE_PAGE_BYTES = 1 << 20
# Quoted attribute values are skipped whole; a tag whose values hold "<" or ">" is left to the
# parser. No part of the pattern crosses a "<", so each try stops at the next tag and hostile
# markup ("<span" a million times, unclosed quotes) costs one pass.
SPAN_TAG = re.compile(rb"""</?span\b[^<>"']{0,256}"""
                      rb"""(?:(?:"[^<>"]{0,256}"|'[^<>']{0,256}')[^<>"']{0,256}){0,8}>""",
                      re.IGNORECASE)
TITLE_END = re.compile(rb"</title\s*>", re.IGNORECASE)
_SPAN_PIECE = 256 << 10

CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000-\ue004]")
# Control characters -> space on UTF-8 bytes (they are single bytes there); the markers are
# three-byte sequences starting EE 80, rare enough to check for before a full regex pass.
_CONTROL_CODES = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
_CONTROL_BYTES = bytes.maketrans(_CONTROL_CODES, b" " * len(_CONTROL_CODES))
_MARKER_PREFIX = b"\xee\x80"


def clean(text: str | None, utf8: bytes | None = None) -> tuple[str | None, bytes]:
    """``text`` (``utf8``: the same in UTF-8, if known; then ``text`` may be None) with control
    characters and our marker characters blanked, as UTF-8 for the parser; the cleaned text
    itself only when it had to be made (else ``None``: the caller cleans what it needs of the
    text on demand)."""
    if utf8 is None:
        assert text is not None
        utf8 = text.encode("utf-8", "replace")
    data = utf8.translate(_CONTROL_BYTES)
    if _MARKER_PREFIX in data:  # maybe a marker character: the exact (slower) way
        cleaned = CONTROL.sub(" ", text if text is not None else utf8.decode("utf-8"))
        return cleaned, cleaned.encode("utf-8", "replace")
    return None, data


def without_spans(data: bytes) -> bytes:
    """``data`` without its span tags after the end of its title (a title's content is raw
    text: a "<span>" written in it is part of the title)."""
    end = TITLE_END.search(data)
    at = end.end() if end else 0
    # In pieces cut before a "<" (no tag crosses one: the pattern holds one "<", its first
    # byte): a substitution holds its pieces until it joins them, about ten times the bytes
    # of a page made of short spans, as a rustdoc source view is.
    out = [data[:at]]
    while at < len(data):
        cut = data.find(b"<", at + _SPAN_PIECE)
        if cut < 0:
            cut = len(data)
        out.append(SPAN_TAG.sub(b"", data[at:cut]))
        at = cut
    return b"".join(out)


# Tags kept by the flattened parse: the head's, links' and media's, raw-text elements (their
# text must still be dropped) and those the parser never nests (a new p or li closes the open
# one). Every other tag becomes a space. Bounded like SPAN_TAG: no try crosses a "<".
_FLAT_KEEP = (b"html|head|body|title|meta|base|link|script|style|a|area|img|frame|iframe|"
              b"br|p|li")
_NESTING_TAG = re.compile(rb"</?(?!(?:" + _FLAT_KEEP + rb""")[\s/>])[a-zA-Z][^<>"']{0,256}"""
                          rb"""(?:(?:"[^<>"]{0,256}"|'[^<>']{0,256}')[^<>"']{0,256}){0,8}>""",
                          re.IGNORECASE)


def flattened(data: bytes) -> bytes:
    """``data`` with every tag that can nest deep replaced by a space, after its title."""
    end = TITLE_END.search(data)
    at = end.end() if end else 0
    return data[:at] + _NESTING_TAG.sub(b" ", data[at:])


# An empty-element tag "<name .../>": the name, then attributes (quoted values skipped whole,
# an unquoted value runs to white space or ">": "<a href=x/>" is an a with href "x/", for
# libxml2 and HTML5 parsers alike, not an empty a), then "/>".
_NAME = re.compile(rb"[a-zA-Z][a-zA-Z0-9:_\-]{0,64}")
_EMPTY_TAG = re.compile(
    rb"""<[a-zA-Z][a-zA-Z0-9:_\-]{0,64}(?:\s{1,64}[^\s"'<>/=]{1,256}(?:\s{0,64}=\s{0,64}"""
    rb"""(?:"[^"<]{0,1024}"|'[^'<]{0,1024}'|[^\s"'<>]{1,1024}+))?){0,64}\s{0,64}/>""")
# Elements an HTML parser never leaves open (void, or treated as void), and the document's
# own html, head and body: their "/>" is left as it is.
_VOID = frozenset(b"area base br col embed hr img input link meta param source track wbr "
                  b"frame keygen basefont bgsound image html head body".split())


def closed_empty_tags(data: bytes) -> bytes:
    """``data`` with every empty-element tag of an element that is not void (``<a id=x/>``,
    ``<div/>``, ``<script src=x/>``) followed by its end tag, after the page's title (a
    title's content is raw text). Each ``/>`` costs a look back to its ``<``: an XHTML page
    has a few dozen, nearly all of void elements."""
    at = data.find(b"/>")
    if at < 0:
        return data
    out: list[bytes] = []
    done = 0
    title_end = -1
    while at >= 0:
        start = data.rfind(b"<", done, at)
        name = _NAME.match(data, start + 1) if start >= 0 else None
        if name is not None and name.group().lower() not in _VOID and \
                _EMPTY_TAG.fullmatch(data, start, at + 2) is not None:
            if title_end < 0:
                end = TITLE_END.search(data)
                title_end = end.end() if end else 0
            if start >= title_end:
                out.append(data[done:at + 2])
                out.append(b"</" + name.group() + b">")
                done = at + 2
        at = data.find(b"/>", at + 2)
    if not out:
        return data
    out.append(data[done:])
    return b"".join(out)


# Which pages lexbor parses, by their number of tags (of "<"). An HTML5 parser's work grows with
# the depth of the open elements at each tag (scope checks walk them), so n unclosed tags cost
# it ~n^2/2 steps, where libxml2 stops at depth 256 (the page is then parsed again flattened:
# .lxml_tree). A page of at most MAX_UNCHECKED_TAGS is parsed by lexbor whatever its shape (the
# worst measured, unclosed "<ul><li>", costs about a quarter of a second at that size); one of
# more than MAX_LEXBOR_TAGS never is (0.3% of the local web's pages, its largest); in between,
# when its start tags outnumber its end tags by more than UNCLOSED_SHARE of its tags (unclosed
# nesting: minified or hostile pages; the local web's large pages stay under 3.1%).
MAX_UNCHECKED_TAGS = 12_000
MAX_LEXBOR_TAGS = 32_000
UNCLOSED_SHARE = 1 / 16


def deep_or_large(data: bytes) -> bool:
    """Whether the markup ``data`` is left to lxml for its size or its nesting (see above):
    more than MAX_LEXBOR_TAGS tags, or more than MAX_UNCHECKED_TAGS of which more than
    UNCLOSED_SHARE are start tags without a matching count of end tags (each end tag is taken
    to close one element: a page of end tags that close nothing, ``<b></x>`` repeated, passes,
    and costs lexbor at most about a second at MAX_LEXBOR_TAGS). Two C-level counts."""
    tags = data.count(b"<")
    if tags <= MAX_UNCHECKED_TAGS:
        return False
    if tags > MAX_LEXBOR_TAGS:
        return True
    return tags - 2 * data.count(b"</") > tags * UNCLOSED_SHARE
