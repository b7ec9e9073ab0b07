"""Page furniture left out of a page's text, on a page parsed by lexbor.

Layer: ``crawler.core.processing.processors``. The rules are :mod:`.boilerplate`'s (navigation,
footers, Sphinx's sidebar, relation bar, footer and permalink marks; link lists); this is the
same removal on a lexbor tree. Contract: :func:`drop_furniture` removes, under ``root`` (not
``root`` itself), the subtrees :func:`.boilerplate.drop_furniture` removes from the same tree
built by lxml, keeping the text that follows each one (in a DOM tree that text is a node of
its own, so unlinking the subtree keeps it in place).

Lexbor's CSS engine finds the candidates; what CSS matches more loosely than the XPath tests
of :mod:`.boilerplate` (class names without regard to letter case in a quirks-mode page, class
tokens cut at a form feed too) is checked again here on the attribute's value, so the same
elements are taken. Removed subtrees are unlinked, not freed (their nodes stay valid until
the tree goes), so a subtree inside another removed one is safe to unlink as well.
"""

from __future__ import annotations

import re
from itertools import islice

from selectolax.lexbor import LexborNode

from crawler.core.processing.processors.boilerplate import (
    LINK_DENSITY,
    MAX_SHARE,
    MAX_SUBTREES,
    MIN_LINKS,
)

_FURNITURE = ("nav, footer, [role=\"navigation\"], div.sphinxsidebar, div.related, div.footer, "
              "a.headerlink")
_DIV_CLASSES = frozenset({"sphinxsidebar", "related", "footer"})
_HEADERLINK = frozenset({"headerlink"})
_LISTS = "ul, ol, dl, table"
_XML_SPACE = re.compile("[ \t\r\n]+")  # what XPath's normalize-space() collapses


def _length(node: LexborNode) -> int:
    """The length of ``node``'s text with white space collapsed (its XPath string value)."""
    words = node.text().split()
    return sum(map(len, words)) + len(words) - 1 if words else 0


def _has_class(node: LexborNode, names: frozenset[str]) -> bool:
    """Whether ``node``'s class attribute holds one of ``names`` as a token (XPath's test:
    tokens cut at XML white space, letter case kept)."""
    value = node.attrs.get("class")
    return bool(value) and not names.isdisjoint(_XML_SPACE.split(value))


def _parts(node: LexborNode) -> int:
    """The exact test of one of lexbor's candidates (see the module): how many of the three
    queries of :data:`.boilerplate._FURNITURE_PARTS` find ``node`` (0: none)."""
    tag = node.tag
    count = 1 if tag in ("nav", "footer") or node.attrs.get("role") == "navigation" else 0
    if tag == "div" and _has_class(node, _DIV_CLASSES):
        count += 1
    elif tag == "a" and _has_class(node, _HEADERLINK):
        count += 1
    return count


class _Outermost:
    """Which nodes, taken in document order, are inside one already chosen: an ancestor
    found not to be inside a chosen node stays so (a chosen ancestor of it would have come
    before it in document order, and been chosen already), so each ancestor is read once
    over all the questions, not once per node."""

    __slots__ = ("chosen", "clear")

    def __init__(self, root: LexborNode) -> None:
        self.chosen: set[int] = set()
        self.clear: set[int] = {root.mem_id}  # the walks stop at the root

    def inside(self, node: LexborNode) -> bool:
        """Whether an ancestor of ``node`` (below the root) is chosen."""
        if not self.chosen:
            return False
        walked = []
        parent = node.parent
        while parent is not None:
            mem = parent.mem_id
            if mem in self.chosen:
                return True
            if mem in self.clear:
                break
            walked.append(mem)
            parent = parent.parent
        self.clear.update(walked)
        return False

    def choose(self, node: LexborNode) -> None:
        self.chosen.add(node.mem_id)


def _furniture(root: LexborNode) -> list[LexborNode]:
    """The outermost furniture elements under ``root``, in document order; when the three
    queries find more than MAX_SUBTREES (an element found by two counts twice, as there),
    the outermost of the first MAX_SUBTREES elements."""
    stop = root.mem_id
    found = []
    seen = {stop}
    matches = 0
    for node in root.css(_FURNITURE):  # (a node two selectors match comes twice)
        mem = node.mem_id
        if mem in seen:
            continue
        seen.add(mem)
        parts = _parts(node)
        if parts:
            found.append(node)
            matches += parts
    if matches > MAX_SUBTREES:
        del found[MAX_SUBTREES:]
    outer: list[LexborNode] = []
    kept = _Outermost(root)
    for node in found:
        if not kept.inside(node):
            outer.append(node)
            kept.choose(node)
    return outer


def _lengths(texts: list[str]) -> int:
    """The sum of the collapsed lengths of ``texts`` (each as :func:`_length` counts it), in
    a few C-level passes: their words, the spaces between a text's words."""
    words = " ".join(texts).split()
    if not words:
        return 0
    with_words = len(texts) - texts.count("") - sum(map(str.isspace, texts))
    return len("".join(words)) + len(words) - with_words


def _link_lists(root: LexborNode) -> list[LexborNode]:
    """The outermost lists and tables under ``root`` that are mostly links."""
    out: list[LexborNode] = []
    if len(root.css("a")) < MIN_LINKS:  # no list under it can have enough links: one walk,
        return out                     # not one per nested list (deep nesting is quadratic)
    stop = root.mem_id
    chosen = _Outermost(root)
    for node in islice((n for n in root.css(_LISTS) if n.mem_id != stop), MAX_SUBTREES):
        if chosen.inside(node):
            continue
        anchors = node.css("a")
        if len(anchors) < MIN_LINKS:
            continue
        text = _length(node)
        if text and _lengths([anchor.text() for anchor in anchors]) >= LINK_DENSITY * text:
            out.append(node)
            chosen.choose(node)
    return out


def drop_furniture(root: LexborNode, floor: int = 0) -> int:
    """Remove the furniture and link lists under ``root`` (see :mod:`.boilerplate`); the number
    of subtrees removed. ``floor``: a number of characters ``root``'s text is known to hold at
    least (collapsed): when the furniture's is at most MAX_SHARE of it, the text of ``root``
    need not be measured."""
    outer = _furniture(root)
    if outer:
        share = sum(map(_length, outer))
        if share > MAX_SHARE * floor:
            total = _length(root)
            if total and share > MAX_SHARE * total:
                outer = []
    for node in outer:
        node.decompose(recursive=False)
    lists = _link_lists(root)
    for node in lists:
        node.decompose(recursive=False)
    return len(outer) + len(lists)
