"""Page processors, one per family of MIME types, and the table that picks them.

Layer: ``crawler.core.processors``; driven by :class:`crawler.core.process.PageProcessor`.
"""

from __future__ import annotations

from .. import mime
from .base import PageTypeProcessor, ProcessorContext
from .feed import FeedProcessor
from .html import HtmlProcessor
from .image import ImageProcessor
from .pdf import PdfProcessor
from .robots import RobotsProcessor
from .sitemap import SitemapProcessor
from .text import TextProcessor

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
    if mime_type.startswith("image/"):
        return ImageProcessor()
    if mime_type.startswith(_TEXT_TYPES):
        return TextProcessor()
    return None


__all__ = [
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
