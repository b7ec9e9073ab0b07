"""Page furniture left out of a page's text: navigation, footers, sidebars, permalink marks.

Layer: ``crawler.core.processing.processors``. The HTML processor takes a page's links from the
whole page (navigation still feeds the crawl) but its text, which is indexed and summarised, from
the page without its furniture: ``nav`` and ``footer`` elements, elements whose ARIA role is
``navigation``, and the parts documentation generators (Sphinx, its themes) mark by class: the
sidebar (``sphinxsidebar``, its table of contents and quick search), the relation bar
(``related``: "index | modules | next | previous"), the footer and the ``¶`` permalinks
(``headerlink``). Their words are the same on every page of a site, or name other pages: indexed,
they make every page match its neighbours' titles; shown, they are snippet debris.

Link lists go too: a list or table (``ul``, ``ol``, ``dl``, ``table``) of at least three links
whose text is mostly anchor text (``LINK_DENSITY``, by characters: boilerpipe's link density)
is a table of contents, a back-of-book index or a menu. Its words describe the pages it links
to, and the index already files them under those pages (each link's anchor text is a link
document of its target): left in, they make a contents page match every query its entries
answer. The page keeps its title, headings and running text.

Contract: :func:`drop_furniture` removes those subtrees in place, keeping the text that follows
each one (its tail); the structural furniture stays when it holds most of the page's text (a
page written entirely inside a ``nav``, say). A few XPath passes over the tree: linear in the
page's size for ordinary markup, bounded by ``MAX_SUBTREES`` for hostile markup.
"""

from __future__ import annotations

from itertools import islice

from lxml import etree


def _class(name: str, value: str = "@class") -> str:
    return f"contains(concat(' ', normalize-space({value}), ' '), ' {name} ')"


def _classes(*names: str, value: str = "@class") -> str:
    """Predicates: the class attribute ``value`` (of the element, or ``.`` on the attribute
    itself) holds one of the tokens ``names``. A plain ``contains(@class, name)`` first (it
    holds whenever the token test does), so that the dearer token test runs only on the few
    elements that pass it."""
    cheap = " or ".join(f"contains({value}, '{name}')" for name in names)
    exact = " or ".join(_class(name, value) for name in names)
    return f"[{cheap}][{exact}]"


# ``descendant::`` steps with a name test (libxml2 tests the name while it walks; ``.//`` or a
# predicate per element costs several times more), merged in document order.
FURNITURE = etree.XPath(
    "descendant::nav | descendant::footer | descendant::*[@role='navigation'] | "
    f"descendant::div{_classes('sphinxsidebar', 'related', 'footer')}"
    f" | descendant::a{_classes('headerlink')}")
# The same elements in three queries, each in document order: their union is what FURNITURE
# finds, at less than half its cost. Attribute steps with a predicate on the attribute
# (``@role[.='navigation']/..``) test the few elements that have the attribute, not every
# element, and libxml2 merges three node sets for less than five.
_FURNITURE_PARTS = (
    etree.XPath("descendant::nav | descendant::footer | descendant::*/@role[.='navigation']/.."),
    etree.XPath("descendant::div/@class"
                f"{_classes('sphinxsidebar', 'related', 'footer', value='.')}/.."),
    etree.XPath(f"descendant::a/@class{_classes('headerlink', value='.')}/.."),
)
LISTS = ("ul", "ol", "dl", "table")
LINK_DENSITY = 0.7  # share of a list's characters in anchors above which it is a link list
MIN_LINKS = 3
MAX_SHARE = 0.8  # furniture holding more of the page's text than this is kept
MAX_SUBTREES = 2000  # a hostile page's thousands of nav elements: the first ones go


def _length(el: etree._Element) -> int:
    """The length of ``el``'s text (its XPath string value) with white space collapsed. The
    text serialisation is that string value (every descendant text node, in order; no tail),
    at a third of the cost of an XPath ``string()`` call."""
    words = etree.tostring(el, method="text", encoding=str, with_tail=False).split()
    return sum(map(len, words)) + len(words) - 1 if words else 0  # (the spaces between)


def _outermost(found: list[etree._Element]) -> list[etree._Element]:
    """``found`` (in document order) without the elements inside another one of them."""
    outer: list[etree._Element] = []
    kept: set[etree._Element] = set()
    for el in found[:MAX_SUBTREES]:
        if not any(anc in kept for anc in el.iterancestors()):
            outer.append(el)
            kept.add(el)
    return outer


def _furniture(root: etree._Element) -> list[etree._Element]:
    """:func:`_outermost` of what FURNITURE finds under ``root``, from its three parts. Not
    in document order: an element is outermost when none of its ancestors was found (in
    document order an ancestor comes first, and the topmost found one is kept), and the
    subtrees are disjoint, so their lengths and their removal do not depend on the order.
    More than MAX_SUBTREES found: FURNITURE itself, whose first ones are taken."""
    found = [el for query in _FURNITURE_PARTS for el in query(root)]
    if len(found) > MAX_SUBTREES:
        return _outermost([el for el in FURNITURE(root) if el is not root])
    if len(found) <= 1:
        return found
    distinct = set(found)
    return [el for el in dict.fromkeys(found)
            if not any(anc in distinct for anc in el.iterancestors())]


def _link_lists(root: etree._Element) -> list[etree._Element]:
    """The outermost lists and tables under ``root`` that are mostly links (see the module)."""
    out: list[etree._Element] = []
    chosen: set[etree._Element] = set()
    for el in islice(root.iterdescendants(*LISTS), MAX_SUBTREES):
        if any(anc in chosen for anc in el.iterancestors()):
            continue
        anchors = list(el.iter("a"))
        if len(anchors) < MIN_LINKS:
            continue
        text = _length(el)
        if text and sum(map(_length, anchors)) >= LINK_DENSITY * text:
            out.append(el)
            chosen.add(el)
    return out


def _remove(el: etree._Element) -> None:
    """Remove ``el``, keeping its tail text where it stood."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        previous = el.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


def drop_furniture(root: etree._Element) -> int:
    """Remove the furniture and link lists under ``root`` (see the module); the number of
    subtrees removed."""
    outer = _furniture(root)
    if outer:
        total = _length(root)
        if total and sum(map(_length, outer)) > MAX_SHARE * total:
            outer = []
    for el in outer:
        _remove(el)
    lists = _link_lists(root)
    for el in lists:
        _remove(el)
    return len(outer) + len(lists)
