"""The PDF processor (pypdf).

Layer: ``crawler.core.processing.processors``. Text is read page by page until ``MAX_PDF_PAGES``
pages or ``MAX_PDF_CHARS`` characters; then it is processed as plain text (paragraphs, language,
summary). The title is the document's metadata title, else the text's first short line. Link
annotations (``/URI`` actions) become links. A PDF cut by the byte range is read as far as pypdf
can; a PDF pypdf cannot open at all gives an extraction with an error.
"""

from __future__ import annotations

import io
import logging
from dataclasses import replace

from crawler.core.processing.config import MAX_TITLE_LEN
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage
from crawler.core.processing.processors.base import ProcessorContext
from crawler.core.processing.processors.text import text_extraction

log = logging.getLogger(__name__)
MAX_PDF_PAGES = 50
MAX_PDF_CHARS = 200_000


def _read_pdf(body: bytes) -> tuple[str, str, list[str], list[str]]:
    """(title, text, link uris, errors); never raises."""
    # Optional dependency, imported on the first PDF: pypdf is only needed for PDFs, and a
    # fetcher (or a test) that never meets one neither needs it installed nor pays its import.
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    errors: list[str] = []
    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        title = ""
        try:
            meta = reader.metadata
            title = str(meta.title or "") if meta is not None else ""
        except (PyPdfError, ValueError, TypeError, KeyError, AttributeError):
            pass
        parts: list[str] = []
        uris: list[str] = []
        size = 0
        for number, page in enumerate(reader.pages):
            if number >= MAX_PDF_PAGES or size >= MAX_PDF_CHARS:
                break
            try:
                text = page.extract_text() or ""
            except Exception as exc:  # pypdf raises many types on damaged pages
                errors.append(f"page {number + 1}: {type(exc).__name__}")
                continue
            parts.append(text)
            size += len(text)
            try:
                for annot in page.get("/Annots") or []:
                    action = annot.get_object().get("/A")
                    uri = action.get_object().get("/URI") if action is not None else None
                    if uri:
                        uris.append(str(uri))
            except Exception:  # damaged annotation dictionaries: links are optional
                pass
        return title, "\n\n".join(parts)[:MAX_PDF_CHARS], uris, errors
    except Exception as exc:  # an unreadable PDF is a processing error value, not a crash
        return "", "", [], [f"pdf not readable: {type(exc).__name__}: {exc}"[:200]]


class PdfProcessor:
    """Stateless."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        title, text, uris, errors = _read_pdf(body)
        extraction = text_extraction(page.url, text, ctx, (page.header("content-language"),))
        collector = LinkCollector(page.url, None, ctx.config.max_links_to_extract)
        for uri in uris:
            collector.add(uri, "", "a")
        links = collector.links(extraction.lang) + tuple(
            link for link in extraction.links if link.url not in set(uris))
        title = " ".join(title.split())[:MAX_TITLE_LEN] or extraction.title
        return replace(extraction, title=title, links=links, errors=tuple(errors))
