"""Safe XML parsing for sitemaps and feeds: no network, no entity expansion, recovering.

Layer: ``crawler.core.processing.processors``.
"""

from __future__ import annotations

from lxml import etree


def parse_xml(body: bytes) -> etree._Element | None:
    """The root element of an XML document, however broken, or None."""
    parser = etree.XMLParser(
        recover=True, resolve_entities=False, no_network=True, remove_comments=True,
        remove_pis=True, huge_tree=False, load_dtd=False,
    )
    try:
        return etree.fromstring(body, parser)
    except (etree.XMLSyntaxError, ValueError):
        return None


def local(tag: object) -> str:
    """A tag without its namespace, lower case ('' for comments and the like)."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def child_text(element: etree._Element, name: str) -> str:
    """Text of the first child called ``name`` (any namespace)."""
    for child in element:
        if local(child.tag) == name:
            return " ".join("".join(child.itertext()).split())
    return ""
