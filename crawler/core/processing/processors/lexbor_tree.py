"""A page parsed by lexbor (selectolax): the HTML processor's common tree.

Layer: ``crawler.core.processing.processors``. :mod:`.html` parses pages with lexbor: it
parses a page in about 60% of lxml's CPU time, and the walks here take less than lxml's
XSLT and XPath passes. A page goes to lxml (:mod:`.lxml_tree`) instead when a scraper may
match it (scrapers are XPath, and their results were made on lxml's trees:
:meth:`LexborTree.has_element` answers their cheap pre-test), when it may spell our marker
characters, when it is very large or may nest deep (:func:`.html_bytes.deep_or_large`), or
when it has nothing lexbor could build a tree of (:meth:`LexborTree.parse` answers None: lxml
then decides whether it is empty).

Contract: each step gives what :class:`.lxml_tree.LxmlTree`'s does on lxml's tree of the same
bytes, wherever the two parsers build the same tree; an HTML5 parser and libxml2 differ on
broken markup (stray end tags, misnested inline elements, text after ``</html>``), and
:func:`.html_bytes.closed_empty_tags` makes them agree on XHTML's empty-element tags. On the
local web's 3,526 pages the index documents are the same (``bench/parse_equality.py``).

Steps (those of :mod:`.html`): the head elements (:meth:`LexborTree.head_elements`); scripts,
styles, ``noscript`` and ``template`` removed (:meth:`LexborTree.strip`); the text for the
dedup hash (:meth:`LexborTree.text`); the first heading; the link records of
:mod:`.link_records` (:meth:`LexborTree.link_records`); the text root less its furniture
(:mod:`.lexbor_furniture`) as blocks (:mod:`.lexbor_blocks`, :func:`.blocks.blocks_of_stream`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from selectolax.lexbor import LexborHTMLParser, LexborNode

from crawler.core.processing.processors.blocks import blocks_of_stream
from crawler.core.processing.processors.html_bytes import closed_empty_tags
from crawler.core.processing.processors.html_head import HeadElement
from crawler.core.processing.processors.lexbor_blocks import TEXT, block_stream
from crawler.core.processing.processors.lexbor_furniture import drop_furniture
from crawler.core.processing.processors.link_records import LinkRecord, entry_context
from crawler.core.processing.summarizers import TextBlock

_STRIP = "script, style, noscript, template"
_HEAD = "meta, link, base, title"
_HEADINGS = "h1, h2, h3, h4, h5, h6"
_LINKS = "a, area, frame, iframe, img"
_BODY_TAG = re.compile(rb"<body[\s/>]", re.IGNORECASE)


def _own_text(node: LexborNode | None) -> str:
    """The text nodes of ``node`` itself (not its children's)."""
    return node.text(deep=False) if node is not None else ""


def _previous_element(node: LexborNode) -> LexborNode | None:
    node = node.prev
    while node is not None and not node.is_element_node:
        node = node.prev
    return node


def _lead(item: LexborNode, up: LexborNode | None) -> LexborNode | None:
    """The entry above list item or term ``item`` (whose parent is ``up``): the ``li`` its
    ``ul``/``ol`` is in, or the ``dt`` before the ``dd`` its ``dl`` is in."""
    if up is None:
        return None
    tag = item.tag
    if tag == "li" and up.tag in ("ul", "ol"):
        outer = up.parent
        return outer if outer is not None and outer.tag == "li" else None
    if tag == "dt" and up.tag == "dl":
        dd = up.parent
        if dd is None or dd.tag != "dd":
            return None
        term = _previous_element(dd)
        while term is not None and term.tag != "dt":
            term = _previous_element(term)
        return term
    return None


def _context(node: LexborNode) -> str:
    """The entry context of a link (:func:`.link_records.entry_context`), or ""."""
    item = node.parent
    if item is None or item.tag not in ("li", "dt"):
        return ""
    own, lead = _own_text(item), _own_text(_lead(item, item.parent))
    return entry_context(own, lead) if own or lead else ""


def _image_alts(nodes: list[LexborNode]) -> dict[int, str]:
    """The alts of the images inside each ``a`` of ``nodes`` (the page's link elements in
    document order), each followed by a space, by the ``a``'s node id: an image counts for
    every ``a`` around it. (Pages have few images: each one's ancestors are read, rather
    than each link's descendants.)"""
    alts: dict[int, str] = {}
    for node in nodes:
        if node.tag != "img":
            continue
        alt = f"{node.attributes.get('alt') or ''} "
        parent = node.parent
        while parent is not None:
            if parent.tag == "a":
                mem = parent.mem_id
                alts[mem] = alts.get(mem, "") + alt
            parent = parent.parent
    return alts


class LexborTree:
    """One page's lexbor tree and the steps of :mod:`.html` on it (see the module). Single
    use: :meth:`strip` and :meth:`text_blocks` modify the tree."""

    __slots__ = ("_has_body", "_parser")

    def __init__(self, parser: LexborHTMLParser, has_body: bool) -> None:
        self._parser = parser
        self._has_body = has_body  # whether libxml2 would have made a body

    @classmethod
    def parse(cls, data: bytes) -> LexborTree | None:
        """The tree of the UTF-8 page ``data``; None when the page holds no element or text
        of its own (its root has no attributes, its head and body nothing): lxml calls some
        of those pages empty, and decides."""
        parser = LexborHTMLParser(closed_empty_tags(data))
        root, head, body = parser.root, parser.head, parser.body
        if root is None:
            return None
        if (head is None or head.first_child is None) and \
                (body is None or body.first_child is None) and not root.attributes:
            return None
        if body is None:
            has_body = False
        elif _blank(body):  # lexbor makes a body for every page, libxml2 only when asked to
            has_body = _BODY_TAG.search(data) is not None  # or when content follows the head
        else:
            has_body = True
        return cls(parser, has_body)

    def has_element(self, selector: str) -> bool:
        """Whether an element of the page matches the CSS ``selector`` (a scraper's
        pre-test, :meth:`.scrapers.ScraperSet.may_match`)."""
        return self._parser.css_first(selector) is not None

    def head_elements(self) -> Iterator[HeadElement]:
        """``(tag, attributes)`` of the page's meta, link, base and title elements, in
        document order."""
        return ((node.tag, node.attrs) for node in self._parser.css(_HEAD))

    def title(self) -> str:
        """The first ``title`` element's text, spaces collapsed ("" without one)."""
        node = self._parser.css_first("title")
        return " ".join(node.text().split()) if node is not None else ""

    def root_lang(self) -> str:
        """The root element's ``lang``."""
        return self._parser.root.attrs.get("lang") or ""

    def strip(self) -> None:
        """Remove ``script``, ``style``, ``noscript`` and ``template`` elements (their text
        with them, the text after them kept)."""
        for node in self._parser.css(_STRIP):
            node.decompose(recursive=False)  # (unlinked, not freed: nested ones are safe)

    def text(self) -> str:
        """The page's text: every text node, in document order."""
        return self._parser.root.text()

    def first_heading(self) -> str:
        """The first non-empty ``h1``..``h6`` (step 8's fallback title)."""
        for node in self._parser.css(_HEADINGS):
            title = " ".join(node.text().split())
            if title:
                return title
        return ""

    def link_records(self) -> list[LinkRecord]:
        """The page's link records (:mod:`.link_records`), in document order."""
        nodes = self._parser.root.css(_LINKS)
        alts = _image_alts(nodes)
        records: list[LinkRecord] = []
        add = records.append
        for node in nodes:
            tag = node.tag
            attrs = node.attributes
            if tag == "a":
                add(("a", attrs.get("href") or "", attrs.get("rel") or "", node.text(),
                     attrs.get("title") or "", alts.get(node.mem_id, "") if alts else "",
                     _context(node)))
            elif tag == "area":
                add(("area", attrs.get("href") or "", attrs.get("rel") or "",
                     attrs.get("alt") or "", attrs.get("title") or "", "", ""))
            else:
                add((tag, attrs.get("src") or "", "", attrs.get("alt") or "",
                     attrs.get("title") or "", "", ""))
        return records

    def _text_root(self) -> LexborNode:
        """Where the page's text is: the body; the root element when lxml would have no body
        (a page with nothing after its head, a frameset)."""
        body = self._parser.body
        if body is None or body.tag != "body" or not self._has_body:
            return self._parser.root
        return body

    def text_blocks(self, sample_chars: int, words: int = 0) -> tuple[list[TextBlock], str]:
        """Step 6: the blocks of the text root less its furniture, and a language sample of
        ``sample_chars`` characters (:func:`.blocks.blocks_of_stream`). ``words``: the number
        of word characters in the page's :meth:`text` (all of them but those outside the text
        root are in its text: the furniture test's floor)."""
        root = self._text_root()
        floor = words
        if words and root.tag == "body":
            head = self._parser.head
            floor -= len(self._parser.root.text(deep=False)) + (
                len(head.text()) if head is not None else 0)
        drop_furniture(root, max(floor, 0))
        return blocks_of_stream(block_stream(root), sample_chars)


def _blank(body: LexborNode) -> bool:
    """Whether ``body`` holds nothing but white space and comments."""
    for child in body.iter(include_text=True):
        if child.is_element_node or (child.tag_id == TEXT and (child.text_content or "").strip()):
            return False
    return True
