"""Office Open XML documents: Word (docx) by python-docx, PowerPoint (pptx) by python-pptx,
Excel (xlsx) by openpyxl.

Layer: ``crawler.core.processing.processors.office``. Each reader fills a
:class:`~.document.DocumentText` (see :mod:`.document` for the limits checked before):

* docx: the body's paragraphs and tables in order (a table row is one block, its cells joined
  by `` | ``; "Title" and "Heading n" paragraphs are headings), each paragraph's hyperlinks
  with their text; title and language from the core properties;
* pptx: each slide's title as a heading, then its shapes' text (groups opened, tables by row),
  run and shape hyperlinks, and the slide's notes;
* xlsx: each worksheet's name as a heading and its rows as blocks (cached values, not formulas;
  at most :data:`.document.MAX_CELLS` cells), links from the worksheets' external hyperlinks.

The libraries are imported on the first document: a fetcher that never meets one does not pay
for them.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

from lxml import etree

from crawler.core.processing.processors.office.document import (
    MAX_CELLS,
    DocumentText,
    checked_archive,
)

_CORE_PROPERTIES = ("http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
                    "core-properties")
_HEADING_STYLE = re.compile(r"heading\s*(\d)", re.IGNORECASE)
_WORKSHEET_RELS = re.compile(r"xl/worksheets/_rels/[^/]+\.rels")
_REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _core(package: Any) -> Any | None:
    """The package's core properties when it has them (the libraries make up a default title,
    "PowerPoint Presentation", when it does not): python-docx's part holds them,
    python-pptx's part is them."""
    try:
        part = package.part_related_by(_CORE_PROPERTIES)
    except (KeyError, ValueError, AttributeError):
        return None
    return getattr(part, "core_properties", part)


def _metadata(doc: DocumentText, core: Any | None) -> None:
    if core is not None:
        doc.title = str(core.title or "")
        doc.lang = str(core.language or "")


def _paragraph_tag(paragraph: Any) -> str:
    try:
        name = paragraph.style.name or "" if paragraph.style is not None else ""
    except (KeyError, ValueError, AttributeError):
        name = ""
    if name.lower() == "title":
        return "h1"
    match = _HEADING_STYLE.match(name)
    return f"h{min(int(match.group(1)), 6)}" if match else "p"


def _paragraph_links(doc: DocumentText, paragraph: Any) -> None:
    for hyperlink in paragraph.hyperlinks:
        try:
            doc.link(hyperlink.url, hyperlink.text)
        except (KeyError, ValueError, AttributeError):  # a link to a relationship not there
            continue


def _table_rows(table: Any) -> Iterator[tuple[str, list[Any]]]:
    """(row text, the row's paragraphs) of a docx table; a merged cell counted once."""
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) not in seen:
                seen.add(id(cell._tc))
                cells.append(cell)
        yield " | ".join(c.text for c in cells), [p for c in cells for p in c.paragraphs]


def read_docx(body: bytes) -> DocumentText:
    # Imported on the first docx (see the module docstring).
    from docx import Document
    from docx.text.paragraph import Paragraph

    document = Document(io.BytesIO(body))
    doc = DocumentText()
    _metadata(doc, _core(document.part.package))
    for item in document.iter_inner_content():
        if doc.full:
            doc.stop()
            break
        if isinstance(item, Paragraph):
            doc.add(item.text, _paragraph_tag(item))
            _paragraph_links(doc, item)
            continue
        for text, paragraphs in _table_rows(item):
            doc.add(text)
            for paragraph in paragraphs:
                _paragraph_links(doc, paragraph)
    return doc


def _shapes(shapes: Any) -> Iterator[Any]:
    """Every shape of a slide, groups opened (without recursion: a hostile file may nest
    deeply)."""
    stack = [iter(shapes)]
    while stack:
        shape = next(stack[-1], None)
        if shape is None:
            stack.pop()
        elif getattr(shape, "shape_type", None) == 6:  # MSO_SHAPE_TYPE.GROUP
            stack.append(iter(shape.shapes))
        else:
            yield shape


def _shape_text(doc: DocumentText, shape: Any, title_id: int | None) -> None:
    try:
        address = shape.click_action.hyperlink.address
    except (AttributeError, KeyError, ValueError):
        address = None
    doc.link(address, getattr(shape, "name", ""))
    if getattr(shape, "has_table", False):
        for row in shape.table.rows:
            doc.add(" | ".join(cell.text for cell in row.cells))
    if not getattr(shape, "has_text_frame", False) or shape.shape_id == title_id:
        return
    for paragraph in shape.text_frame.paragraphs:
        doc.add(paragraph.text)
        for run in paragraph.runs:
            try:
                doc.link(run.hyperlink.address, run.text)
            except (KeyError, ValueError, AttributeError):
                continue


def read_pptx(body: bytes) -> DocumentText:
    # Imported on the first pptx (see the module docstring).
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(body))
    doc = DocumentText()
    _metadata(doc, _core(presentation.part.package))
    for slide in presentation.slides:
        if doc.full:
            doc.stop()
            break
        title = slide.shapes.title
        if title is not None and title.has_text_frame:
            doc.add(title.text_frame.text, "h2")
        title_id = title.shape_id if title is not None else None
        for shape in _shapes(slide.shapes):
            _shape_text(doc, shape, title_id)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            doc.add(slide.notes_slide.notes_text_frame.text)
    return doc


def _worksheet_links(body: bytes) -> Iterator[str]:
    """The external hyperlink targets of an xlsx's worksheets (openpyxl's read-only mode,
    which streams the cells, does not read them)."""
    with checked_archive(body) as archive:
        for name in archive.namelist():
            if not _WORKSHEET_RELS.fullmatch(name):
                continue
            root = etree.fromstring(archive.read(name), _SAFE_XML)
            for rel in root.iter(f"{_REL_NS}Relationship"):
                if rel.get("TargetMode") == "External" and \
                        (rel.get("Type") or "").endswith("/hyperlink"):
                    yield rel.get("Target") or ""


def read_xlsx(body: bytes) -> DocumentText:
    # Imported on the first xlsx (see the module docstring).
    from openpyxl import load_workbook

    workbook = load_workbook(io.BytesIO(body), read_only=True, data_only=True,
                             keep_links=False)
    doc = DocumentText()
    try:
        doc.title = str(workbook.properties.title or "")
        doc.lang = str(workbook.properties.language or "")
        cells = 0
        for sheet in workbook.worksheets:
            doc.add(sheet.title, "h2")
            for row in sheet.iter_rows(values_only=True):
                cells += len(row)
                if cells > MAX_CELLS:
                    doc.stop(f"cells cut at {MAX_CELLS}")
                if doc.full or doc.cut:
                    break
                doc.add(" | ".join(str(v) for v in row if v is not None and str(v).strip()))
            if doc.cut:
                break
    finally:
        workbook.close()
    for target in _worksheet_links(body):
        doc.link(target)
    return doc
