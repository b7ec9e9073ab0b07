"""Office and e-book documents: Word, PowerPoint and Excel (Office Open XML), OpenDocument text,
spreadsheets and presentations, and EPUB books, each read by its well-kept library into text,
title, links and language (Yioop's page processors for these types; issue 37).

Layer: ``crawler.core.processing.processors``. :func:`document_processor` gives the processor of
a MIME type of :mod:`crawler.core.processing.mime` (None for others); every one is a
:class:`.document.DocumentProcessor` over one reader, and shares its checks of hostile files.
"""

from __future__ import annotations

from crawler.core.processing import mime
from crawler.core.processing.processors.office.document import (
    DocumentError,
    DocumentProcessor,
    DocumentText,
    Reader,
)
from crawler.core.processing.processors.office.epub import read_epub
from crawler.core.processing.processors.office.ooxml import read_docx, read_pptx, read_xlsx
from crawler.core.processing.processors.office.opendocument import read_opendocument

READERS: dict[str, tuple[str, Reader]] = {
    mime.DOCX: ("docx", read_docx),
    mime.PPTX: ("pptx", read_pptx),
    mime.XLSX: ("xlsx", read_xlsx),
    mime.ODT: ("odt", read_opendocument),
    mime.ODS: ("ods", read_opendocument),
    mime.ODP: ("odp", read_opendocument),
    mime.EPUB: ("epub", read_epub),
}
_PROCESSORS = {kind: DocumentProcessor(name, reader) for kind, (name, reader) in READERS.items()}


def document_processor(mime_type: str) -> DocumentProcessor | None:
    """The processor of an office or e-book MIME type; None for any other type."""
    return _PROCESSORS.get(mime_type)


__all__ = ["READERS", "DocumentError", "DocumentProcessor", "DocumentText",
           "document_processor"]
