"""MIME types: from the HTTP headers, then from the content itself.

Layer: ``crawler.core``. :func:`detect_mime_type` picks the type that chooses a page processor.
Besides real MIME types it returns two of our own: ``text/robot`` for ``/robots.txt``
(as Yioop does), and ``application/x-sitemap`` for sitemaps and sitemap indexes. A zip archive
sent with a generic or zip type is told apart by what it holds: an OpenDocument or EPUB file by
its leading ``mimetype`` member, an Office Open XML document by its main part's name
(:func:`zip_kind`).
"""

from __future__ import annotations

import io
import re
import zipfile
from urllib.parse import urlsplit

ROBOTS = "text/robot"
SITEMAP = "application/x-sitemap"
HTML = "text/html"
XHTML = "application/xhtml+xml"
PLAIN = "text/plain"
RSS = "application/rss+xml"
ATOM = "application/atom+xml"
PDF = "application/pdf"
XML = "application/xml"
OCTET = "application/octet-stream"
ZIP = "application/zip"
# office and e-book documents (crawler.core.processing.processors.office)
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
ODT = "application/vnd.oasis.opendocument.text"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
ODP = "application/vnd.oasis.opendocument.presentation"
EPUB = "application/epub+zip"
_MIMETYPE_MEMBER = frozenset({ODT, ODS, ODP, EPUB})
# an Office Open XML document's main part, at the place every producer puts it
_OOXML_MAIN_PARTS = (("word/document.xml", DOCX), ("ppt/presentation.xml", PPTX),
                     ("xl/workbook.xml", XLSX))

_GENERIC = {"", OCTET, "application/unknown", "binary/octet-stream", "unknown/unknown",
            "application/x-download", "application/force-download"}
_XML_TYPES = {"text/xml", "application/xml", "application/rdf+xml", "application/x-xml"}
# a zip archive under these is told apart by its content: servers send zip types, and the
# older Office types for the newer (zip) files
_ZIP_TYPES = {ZIP, "application/x-zip-compressed", "application/x-zip", "application/msword",
              "application/vnd.ms-excel", "application/vnd.ms-powerpoint"}
_GZIP_TYPES = {"application/gzip", "application/x-gzip", "application/x-gunzip",
               "application/gzipped", "application/gzip-compressed", "gzip/document"}
_SNIFF_WINDOW = 2048
_ROOT_TAG = re.compile(rb"<(?!\?|!)\s*([a-zA-Z][\w:.-]*)")
_MAGIC = (
    (b"%PDF-", PDF),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
)


def header_mime_type(content_type: str) -> str:
    """The lower-case ``type/subtype`` of a Content-Type header value ('' when none)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_gzip(body: bytes) -> bool:
    return body[:2] == b"\x1f\x8b"


def zip_kind(body: bytes) -> str:
    """The document type of a zip archive: :data:`ODT`, :data:`ODS`, :data:`ODP` or
    :data:`EPUB` from its first member, ``mimetype`` stored uncompressed (as both standards
    require); :data:`DOCX`, :data:`PPTX` or :data:`XLSX` from its main part's name in the
    archive's table of contents; else :data:`ZIP` (also for an archive too damaged to list)."""
    if body[26:28] == b"\x08\x00" and body[30:38] == b"mimetype" and body[8:10] == b"\x00\x00":
        start = 38 + int.from_bytes(body[28:30], "little")
        size = int.from_bytes(body[18:22], "little")
        declared = body[start:start + min(size, 100)].decode("ascii", "replace").strip()
        if declared in _MIMETYPE_MEMBER:
            return declared
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return ZIP
    for part, kind in _OOXML_MAIN_PARTS:
        if part in names:
            return kind
    return ZIP


def _xml_kind(head: bytes) -> str | None:
    """The processor type of an XML document from its root element."""
    for match in _ROOT_TAG.finditer(head):
        tag = match.group(1).lower().split(b":")[-1]
        if tag in (b"urlset", b"sitemapindex"):
            return SITEMAP
        if tag in (b"rss", b"rdf"):
            return RSS
        if tag == b"feed":
            return ATOM
        if tag == b"html":
            return HTML
        if tag == b"svg":
            return "image/svg+xml"
        return XML
    return None


def sniff(body: bytes, url: str = "") -> str:
    """The MIME type the content itself shows."""
    head = body[:_SNIFF_WINDOW]
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if head.startswith(b"PK\x03\x04"):
        return zip_kind(body)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if is_gzip(head):
        return "application/gzip"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if stripped.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return HTML
    if stripped.startswith(b"<"):
        kind = _xml_kind(stripped)
        if kind is not None and kind != XML:
            return kind
        if re.search(rb"<(html|head|body|div|p|a|title|meta|table)\b", stripped):
            return HTML
        if kind is not None:
            return kind
    if not head:
        return PLAIN
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return PLAIN if controls <= len(head) // 100 else OCTET


def detect_mime_type(url: str, content_type: str, body: bytes) -> str:
    """The type that picks the processor: headers first, then content sniffing.

    ``/robots.txt`` is always ``text/robot``; XML and gzip are refined by their content
    (sitemap, RSS, Atom); a generic or missing header is replaced by the sniffed type, and so
    is a zip type or an older Office type over a zip archive (the documents that are zip
    archives, :func:`zip_kind`).
    """
    try:
        path = urlsplit(url).path
    except ValueError:
        path = ""
    if path == "/robots.txt":
        return ROBOTS
    declared = header_mime_type(content_type)
    if declared in _ZIP_TYPES:
        return zip_kind(body) if body.startswith(b"PK\x03\x04") else declared
    if declared in _GENERIC or declared in _GZIP_TYPES or declared in _XML_TYPES or \
            declared == "text/plain" and body.lstrip()[:1] == b"<":
        sniffed = sniff(body, url)
        if sniffed == "application/gzip" or (declared in _GZIP_TYPES and is_gzip(body)):
            return "application/gzip"
        if declared in _XML_TYPES and sniffed == PLAIN:
            return XML
        return sniffed if sniffed != OCTET or declared in _GENERIC else declared
    if declared in ("application/rss+xml", "application/rdf+xml"):
        return RSS
    return declared
