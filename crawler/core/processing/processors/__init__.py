"""Page processors, one per family of MIME types, and the table that picks them.

Layer: ``crawler.core.processing.processors``; driven by
:class:`crawler.core.processing.process.PageProcessor`.
"""

from __future__ import annotations

from crawler.core.processing import mime
from crawler.core.processing.processors.base import PageTypeProcessor, ProcessorContext
from crawler.core.processing.processors.feed import FeedProcessor
from crawler.core.processing.processors.html import HtmlProcessor
from crawler.core.processing.processors.image import ImageProcessor
from crawler.core.processing.processors.office import DocumentProcessor, document_processor
from crawler.core.processing.processors.pdf import PdfProcessor
from crawler.core.processing.processors.robots import RobotsProcessor
from crawler.core.processing.processors.sitemap import SitemapProcessor
from crawler.core.processing.processors.text import TextProcessor

_TEXT_TYPES = (
    "text/", "application/json", "application/javascript", "application/x-javascript",
    "application/xml", "application/x-sh", "application/x-python", "application/sql",
)


def processor_for(mime_type: str) -> PageTypeProcessor | None:
    """The processor for a detected MIME type, or None for binary types we cannot read."""
    if mime_type in (mime.HTML, mime.XHTML):
        return HtmlProcessor()
    if mime_type == mime.ROBOTS:
        return RobotsProcessor()
    if mime_type == mime.SITEMAP:
        return SitemapProcessor()
    if mime_type in (mime.RSS, mime.ATOM):
        return FeedProcessor()
    if mime_type == mime.PDF:
        return PdfProcessor()
    document = document_processor(mime_type)
    if document is not None:
        return document
    if mime_type.startswith("image/"):
        return ImageProcessor()
    if mime_type.startswith(_TEXT_TYPES):
        return TextProcessor()
    return None


__all__ = [
    "DocumentProcessor",
    "FeedProcessor",
    "HtmlProcessor",
    "ImageProcessor",
    "PageTypeProcessor",
    "PdfProcessor",
    "ProcessorContext",
    "RobotsProcessor",
    "SitemapProcessor",
    "TextProcessor",
    "processor_for",
]
