"""OpenDocument files (odt, ods, odp) by odfpy.

Layer: ``crawler.core.processing.processors.office``. odfpy loads the document (after the
archive checks of :mod:`.document`); the body is then walked in document order, without
recursion (a hostile file may nest deeply): each ``text:h`` is a heading of its outline level,
each ``text:p`` a paragraph, each table row one block of its cells joined by `` | ``
(spreadsheets), slides' frames give their paragraphs; ``text:a`` elements are the links, with
their text. Title and language are the metadata's ``dc:title`` and ``dc:language``. The text of
an element is read here, not with odfpy's ``teletype``, which writes out a ``text:s`` space run
of any declared length.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from crawler.core.processing.processors.office.document import DocumentText

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_XLINK = "http://www.w3.org/1999/xlink"
_DC = "http://purl.org/dc/elements/1.1/"
_HEADING = (_TEXT, "h")
_PARAGRAPH = (_TEXT, "p")
_LINK = (_TEXT, "a")
_ROW = (_TABLE, "table-row")
_CELL = (_TABLE, "table-cell")
_SPACES = {(_TEXT, "s"), (_TEXT, "tab"), (_TEXT, "line-break")}
_ELEMENT, _TEXT_NODE = 1, 3


def _children(node: Any) -> Iterator[Any]:
    return iter(getattr(node, "childNodes", ()))


def inner_text(element: Any) -> str:
    """The text under ``element``: its text nodes in order, a space for each ``text:s``,
    ``text:tab`` and ``text:line-break``."""
    parts: list[str] = []
    stack = [_children(element)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
        elif node.nodeType == _TEXT_NODE:
            parts.append(node.data)
        elif node.nodeType == _ELEMENT:
            if node.qname in _SPACES:
                parts.append(" ")
            else:
                stack.append(_children(node))
    return "".join(parts)


def _heading_tag(element: Any) -> str:
    try:
        level = int(element.getAttrNS(_TEXT, "outline-level") or 1)
    except (TypeError, ValueError):
        level = 1
    return f"h{min(max(level, 1), 6)}"


def _walk(doc: DocumentText, body: Any) -> None:
    """Blocks and links of the body (see the module docstring). A paragraph, heading or row
    inside another (a text box in a frame) is part of the outer block, not a block again; a
    link inside a link gives its target only (each element's text is read once)."""
    stack: list[tuple[Iterator[Any], bool, bool]] = [(_children(body), False, False)]
    while stack and not doc.full:
        node = next(stack[-1][0], None)
        if node is None:
            stack.pop()
            continue
        if getattr(node, "nodeType", None) != _ELEMENT:
            continue
        _, in_block, in_link = stack[-1]
        name = node.qname
        if name == _LINK:
            doc.link(node.getAttrNS(_XLINK, "href"), "" if in_link else inner_text(node))
            in_link = True
        elif not in_block and name in (_HEADING, _PARAGRAPH):
            doc.add(inner_text(node), _heading_tag(node) if name == _HEADING else "p")
            in_block = True
        elif not in_block and name == _ROW:
            doc.add(" | ".join(text for cell in _children(node) if getattr(cell, "qname", None)
                               == _CELL and (text := inner_text(cell).strip())))
            in_block = True
        stack.append((_children(node), in_block, in_link))
    if stack:
        doc.stop()


def _metadata(doc: DocumentText, meta: Any) -> None:
    for node in _children(meta):
        if getattr(node, "nodeType", None) != _ELEMENT:
            continue
        if node.qname == (_DC, "title") and not doc.title:
            doc.title = inner_text(node)
        elif node.qname == (_DC, "language") and not doc.lang:
            doc.lang = inner_text(node).strip()


def read_opendocument(body: bytes) -> DocumentText:
    # Imported on the first OpenDocument file: odfpy is only needed for them.
    from odf.opendocument import load

    document = load(io.BytesIO(body))
    doc = DocumentText()
    _metadata(doc, document.meta)
    _walk(doc, document.body)
    return doc
