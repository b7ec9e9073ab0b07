"""The link elements of an HTML page, each with its text and the index entry it sits in.

Layer: ``crawler.core.processing.processors``. :func:`link_records` reads every ``a``, ``area``,
``frame``, ``iframe`` and ``img`` of a parsed page in document order, as
:class:`LinkRecord` tuples: tag, href (or src), rel, text (an ``a``'s text, an ``area``'s or
``img``'s alt), title attribute, the alts of an ``a``'s images, and the link's *entry
context*.

Entry context. A back-of-book index (PostgreSQL's ``bookindex.html``, Sphinx's
``genindex.html``, Python's module index) puts the indexed term outside the link: the term
is the entry's own text and the link, named after the section it points at, follows it
(``<dt>retryable error, <a>Serialization Failure Handling</a></dt>``), or the term heads a
nested list of links (``<li>table of <ul><li><a>contents</a></li></ul></li>``; ``<dt>thread
safety</dt><dd><dl><dt><a>Connection</a></dt>...``). Those terms are what a reader looks the
page up by, so they belong with the link's text, as Yioop takes a window of the parent node's
text for a link whose own text is too short, and
as the anchor-window literature does. The context of a link whose parent element is a list
item (``li``) or a definition term (``dt``) is

* the item's own text outside the link (its text nodes, not its children's), and
* the lead text of the entry the item's list is nested in: the enclosing ``li``'s own text, or
  the ``dt`` before the enclosing ``dd``,

each kept only when it is short (at most :data:`MAX_CONTEXT_WORDS` words): a longer one is
prose around a link, not an index term. Links in running text, tables or navigation have no
context.

Speed: one XSLT pass writes all records as a single string that a regular expression cuts up
(no Python loop over elements); a page whose text holds the marker characters takes the
element-by-element path, which gives the same records.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator

from lxml import etree

LINK_TAGS = ("a", "area", "frame", "iframe", "img")
MAX_CONTEXT_WORDS = 8  # an entry's own text longer than this is prose, not an index term

# (tag, href, rel, text, title, image alts, entry context)
LinkRecord = tuple[str, str, str, str, str, str, str]

_OPEN, _SEP, _PART = "\ue000", "\ue001", "\ue002"
_FIELDS = 7  # a record's fields: _FIELDS - 1 separators each (the context's two parts: +1)

# The entry an element's link belongs to: the own text nodes of the link's parent li/dt, then
# (after _PART) the lead text of the entry its list is nested in.
_CONTEXT = (
    '<xsl:for-each select="parent::li/text()|parent::dt/text()"><xsl:value-of select="."/>'
    '</xsl:for-each>&#xe002;<xsl:for-each select="parent::li/parent::ul/parent::li/text()|'
    'parent::li/parent::ol/parent::li/text()|'
    'parent::dt/parent::dl/parent::dd/preceding-sibling::dt[1]/text()">'
    '<xsl:value-of select="."/></xsl:for-each>')
_NO_CONTEXT = "&#xe002;"

_XSLT = f"""<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="text" encoding="UTF-8"/>
<xsl:template match="text()"/>
<xsl:template match="a">&#xe000;a&#xe001;<xsl:value-of select="@href"/>&#xe001;<xsl:value-of
 select="@rel"/>&#xe001;<xsl:value-of select="."/>&#xe001;<xsl:value-of
 select="@title"/>&#xe001;<xsl:for-each select=".//img"><xsl:value-of
 select="@alt"/><xsl:text> </xsl:text></xsl:for-each>&#xe001;{_CONTEXT}<xsl:apply-templates/>
</xsl:template>
<xsl:template match="area">&#xe000;area&#xe001;<xsl:value-of select="@href"/>&#xe001;<xsl:value-of
 select="@rel"/>&#xe001;<xsl:value-of select="@alt"/>&#xe001;<xsl:value-of
 select="@title"/>&#xe001;&#xe001;{_NO_CONTEXT}<xsl:apply-templates/></xsl:template>
<xsl:template match="frame|iframe|img">&#xe000;<xsl:value-of
 select="local-name()"/>&#xe001;<xsl:value-of select="@src"/>&#xe001;&#xe001;<xsl:value-of
 select="@alt"/>&#xe001;<xsl:value-of select="@title"/>&#xe001;&#xe001;{_NO_CONTEXT}<xsl:apply-templates/>
</xsl:template>
</xsl:stylesheet>"""

_RECORD = re.compile(f"{_OPEN}([^{_OPEN}]*)")
_WORDY = re.compile(r"[^\W_]")
_local = threading.local()


def _stylesheet() -> etree.XSLT:
    """The compiled stylesheet, one per thread (an XSLT object is not shared across threads)."""
    sheet: etree.XSLT | None = getattr(_local, "sheet", None)
    if sheet is None:
        sheet = _local.sheet = etree.XSLT(etree.XML(_XSLT))
    return sheet


def entry_context(own: str, lead: str) -> str:
    """The context words of a link from its entry's ``own`` text and the ``lead`` text of the
    entry above it, the lead first (``"RETURN NEXT in PL/pgSQL,"``): each part's words (tokens
    with a letter or digit: separators such as ``,``, ``|`` or ``»`` between links are not
    words), kept when there are at most MAX_CONTEXT_WORDS of them. A link whose own entry has
    more words than that is in prose, and has no context at all."""
    parts = []
    for text in (own, lead):
        words = [w for w in text.split() if _WORDY.search(w)]
        if len(words) > MAX_CONTEXT_WORDS:
            if text is own:
                return ""  # a link in prose: the entry above it says nothing of it
            continue
        parts.insert(0, " ".join(words))
    return " ".join(part for part in parts if part)


def link_records(doc: etree._Element, fast: bool = True) -> Iterable[LinkRecord]:
    """Every link record of the page ``doc`` in document order (see the module docstring).
    ``fast=False`` (the page's text may hold the marker characters) reads element by
    element."""
    records = _by_stylesheet(doc) if fast else None
    return records if records is not None else _by_element(doc)


def alone(element: etree._Element) -> bool:
    """False for a root element with top-level siblings (a broken page can parse so): XSLT
    would read the siblings too, the element's own ``iter`` does not."""
    return (element.getparent() is not None
            or (element.getprevious() is None and element.getnext() is None))


def _by_stylesheet(doc: etree._Element) -> Iterator[LinkRecord] | None:
    """The records from one XSLT pass, made as they are read (a page with tens of thousands
    of links would hold as many tuples); ``None`` if that failed."""
    if not alone(doc):
        return None
    try:
        stream = str(_stylesheet()(doc))
    except etree.XSLTError:
        return None
    # The text cannot hold the markers (the caller takes this path only for pages without
    # them), so this is a check of the stylesheet.
    opened = stream.count(_OPEN)
    if stream.count(_SEP) != (_FIELDS - 1) * opened or stream.count(_PART) != opened:
        return None
    return (_record(match.group(1).split(_SEP)) for match in _RECORD.finditer(stream))


def _record(fields: list[str]) -> LinkRecord:
    own, _, lead = fields[6].partition(_PART)
    return (fields[0], fields[1], fields[2], fields[3], fields[4], fields[5],
            entry_context(own, lead) if own or lead else "")


def _own_text(element: etree._Element | None) -> str:
    """The text nodes of ``element`` itself (before its first child and after each child)."""
    if element is None:
        return ""
    parts = [element.text or ""]
    parts.extend(child.tail or "" for child in element)
    return "".join(parts)


def _lead_element(item: etree._Element) -> etree._Element | None:
    """The entry above list item or term ``item``: the ``li`` its ``ul``/``ol`` is in, or the
    ``dt`` before the ``dd`` its ``dl`` is in."""
    up = item.getparent()
    if up is None:
        return None
    if item.tag == "li" and up.tag in ("ul", "ol"):
        outer = up.getparent()
        return outer if outer is not None and outer.tag == "li" else None
    if item.tag == "dt" and up.tag == "dl":
        dd = up.getparent()
        if dd is None or dd.tag != "dd":
            return None
        term = dd.getprevious()
        while term is not None and term.tag != "dt":
            term = term.getprevious()
        return term
    return None


def _by_element(doc: etree._Element) -> list[LinkRecord]:
    """The same records, element by element."""
    records: list[LinkRecord] = []
    for element in doc.iter(*LINK_TAGS):
        tag = element.tag
        context = ""
        if tag == "a":
            alts = "".join(f"{img.get('alt') or ''} " for img in element.iter("img"))
            text = "".join(element.itertext())
            item = element.getparent()
            if item is not None and item.tag in ("li", "dt"):
                context = entry_context(_own_text(item), _own_text(_lead_element(item)))
        else:
            alts, text = "", element.get("alt") or ""
        records.append((tag, element.get("src" if tag in ("frame", "iframe", "img") else "href")
                        or "", element.get("rel") or "", text, element.get("title") or "", alts,
                        context))
    return records
