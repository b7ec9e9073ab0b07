"""EPUB e-books by ebooklib.

Layer: ``crawler.core.processing.processors.office``. ebooklib reads the package (after the
archive checks of :mod:`.document`); the chapters are read in spine order (the book's reading
order; the navigation document left out), each XHTML chapter as the HTML processor reads a page's body (lexbor's tree,
:mod:`..lexbor_tree`: scripts and styles stripped, headings and paragraphs as blocks). Links are
the chapters' links to the web (``http`` and ``https``); links between the book's own files
name no page a crawler could fetch. Title and language are the package's Dublin Core
``title`` and ``language``.
"""

from __future__ import annotations

import io

from crawler.core.processing.encoding import decode
from crawler.core.processing.processors.html import hash_text
from crawler.core.processing.processors.html_bytes import clean
from crawler.core.processing.processors.lexbor_tree import LexborTree
from crawler.core.processing.processors.office.document import DocumentText

_WEB = ("http://", "https://")


def _first(book: object, name: str) -> str:
    values = book.get_metadata("DC", name)  # type: ignore[attr-defined]
    return str(values[0][0] or "") if values else ""


def _chapter(doc: DocumentText, content: bytes) -> None:
    text, _ = decode(content, "application/xhtml+xml")
    _, data = clean(text)
    tree = LexborTree.parse(data)
    if tree is None:
        return
    tree.strip()
    for tag, href, _rel, anchor, *_ in tree.link_records():
        if tag == "a" and href.strip().lower().startswith(_WEB):
            doc.link(href, anchor)
    blocks, _ = tree.text_blocks(0, len(hash_text(tree.text())))
    for block in blocks:
        doc.add(block.text, block.tag)


def read_epub(body: bytes) -> DocumentText:
    # Imported on the first e-book: ebooklib is only needed for EPUB files.
    import ebooklib
    from ebooklib import epub

    book = epub.read_epub(io.BytesIO(body), {"ignore_ncx": True})
    doc = DocumentText(title=_first(book, "title"), lang=_first(book, "language"))
    for idref, *_ in book.spine:
        if doc.full:
            doc.stop()
            break
        item = book.get_item_with_id(idref)
        # the navigation document repeats the chapters' titles: a table of contents, not text
        if item is not None and item.get_type() == ebooklib.ITEM_DOCUMENT and \
                not isinstance(item, epub.EpubNav):
            _chapter(doc, item.get_content())
    return doc
