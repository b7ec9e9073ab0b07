"""What the office and e-book readers share: the text they hand over, the archive checks
they run first, and the extraction made from that text.

Layer: ``crawler.core.processing.processors.office``. A reader (:mod:`.ooxml`,
:mod:`.opendocument`, :mod:`.epub`) takes a document's bytes and fills a
:class:`DocumentText`: its title and language from the document's own metadata, its text as
blocks in reading order (headings tagged ``h1``..``h6``, so that whole-page indexing weighs them
as the HTML processor's), and its hyperlinks with their text. :class:`DocumentProcessor` turns
that into an :class:`~crawler.core.processing.page.Extraction` as the other processors do: the
language from the document's declaration, the ``Content-Language`` header, the url and the text
test; the configured summarizer; links through the page's
:class:`~crawler.core.processing.links.LinkCollector`; the title from the metadata, else the
first heading, else the text's first short line.

Hostile documents. Every format here is a zip archive of XML parts, read by a library that
trusts the archive. Before any library sees it, :func:`checked_archive` refuses an archive
that is not one (or was cut by the byte range: a zip keeps its table of contents at its end),
is encrypted, lists more than :data:`MAX_MEMBERS` members or declares more than
:data:`MAX_UNPACKED_BYTES` unpacked bytes (a zip bomb); Python's zipfile never inflates a
member past its declared size, so the declared total bounds the memory the libraries may
fill. Text stops at :data:`MAX_DOCUMENT_CHARS` characters, spreadsheets at
:data:`MAX_CELLS` cells. The XML parsers under the libraries (libxml2, expat) refuse entity
expansion attacks themselves, and the page's CPU budget (``PAGE_CPU_SECONDS``) bounds the
time. A refused or unreadable document is an extraction with one clear error and nothing
else: the page keeps its url facts and the crawl goes on.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from crawler.core.processing.config import MAX_TITLE_LEN
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage
from crawler.core.processing.processors.base import (
    ProcessorContext,
    plain_language,
    summarize_and_index,
)
from crawler.core.processing.summarizers import TextBlock

MAX_MEMBERS = 5_000
MAX_UNPACKED_BYTES = 48 * 2**20
MAX_DOCUMENT_CHARS = 1_000_000
MAX_CELLS = 200_000
_NON_WORD = re.compile(r"\W+")


class DocumentError(Exception):
    """A document refused or unreadable; the message says why, for the page's errors."""


@dataclass(slots=True)
class DocumentText:
    """What a reader found in one document: ``title`` and ``lang`` from its metadata ("" when
    it has none), ``blocks`` of text in reading order, ``links`` as (href, anchor text)."""

    title: str = ""
    lang: str = ""
    blocks: list[TextBlock] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    chars: int = 0
    cut: str = ""  # why the text stops short ("" when it is whole)

    @property
    def full(self) -> bool:
        """Whether :data:`MAX_DOCUMENT_CHARS` characters are in: readers stop reading."""
        return self.chars >= MAX_DOCUMENT_CHARS

    def add(self, text: str, tag: str = "p") -> None:
        """One block of text (spaces collapsed; an empty one is dropped), cut at the limit."""
        text = " ".join(text.split())
        if not text or self.full:
            if text:
                self.stop()
            return
        room = MAX_DOCUMENT_CHARS - self.chars
        if len(text) > room:
            text = text[:room]
            self.stop()
        self.blocks.append(TextBlock(text, tag, self.chars))
        self.chars += len(text) + 1

    def stop(self, why: str = f"text cut at {MAX_DOCUMENT_CHARS} characters") -> None:
        """Record why the text stops short (the first reason is kept)."""
        self.cut = self.cut or why

    def link(self, href: str | None, text: str = "") -> None:
        if href and href.strip():
            self.links.append((href.strip(), " ".join((text or "").split())))

    def first_heading(self) -> str:
        return next((b.text for b in self.blocks if b.tag[:1] == "h"), "")


def checked_archive(body: bytes) -> zipfile.ZipFile:
    """``body`` opened as a zip archive once it passed the checks of the module docstring;
    :class:`DocumentError` saying which one failed otherwise."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise DocumentError(
            f"not a readable zip archive ({exc}); a document longer than the crawl's byte "
            "range is cut before its table of contents") from None
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise DocumentError(f"archive lists {len(members)} members, over the limit of "
                            f"{MAX_MEMBERS}")
    if any(info.flag_bits & 0x1 for info in members):
        raise DocumentError("document is encrypted")
    unpacked = sum(info.file_size for info in members)
    if unpacked > MAX_UNPACKED_BYTES:
        raise DocumentError(f"archive unpacks to {unpacked} bytes, over the limit of "
                            f"{MAX_UNPACKED_BYTES} (a zip bomb, or a document too large)")
    return archive


Reader = Callable[[bytes], DocumentText]


def read_document(reader: Reader, body: bytes) -> tuple[DocumentText, str]:
    """(the document's text, "") or (empty text, the error); never raises on content."""
    try:
        checked_archive(body).close()
        return reader(body), ""
    except DocumentError as exc:
        return DocumentText(), str(exc)
    except Exception as exc:  # the libraries raise many types on damaged documents
        return DocumentText(), f"document not readable: {type(exc).__name__}: {exc}"[:300]


class DocumentProcessor:
    """The processor of one document format (``reader``); immutable."""

    __slots__ = ("format", "reader")

    def __init__(self, format_name: str, reader: Reader) -> None:
        self.format = format_name
        self.reader = reader

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        doc, error = read_document(self.reader, body)
        if error:
            return Extraction(hash_text=page.url, errors=(f"{self.format}: {error}",))
        text = "\n".join(block.text for block in doc.blocks)
        declared = (doc.lang, page.header("content-language"))
        lang, source = plain_language(text, page.url, ctx, declared)
        collector = LinkCollector(page.url, None, ctx.config.max_links_to_extract)
        for href, anchor in doc.links:
            if collector.full:
                break
            collector.add(href, anchor, "a")
        summary, indexed = summarize_and_index(doc.blocks, lang, ctx)
        title = " ".join(doc.title.split()) or doc.first_heading() or _first_short_line(doc)
        extraction = Extraction(
            title=title[:MAX_TITLE_LEN], sentences=summary, body=indexed,
            links=collector.links(lang), lang=lang, lang_source=source,
            hash_text=_NON_WORD.sub("", text) or page.url)
        if doc.cut:
            extraction = replace(extraction, errors=(f"{self.format}: {doc.cut}",))
        return extraction


def _first_short_line(doc: DocumentText) -> str:
    first = doc.blocks[0].text if doc.blocks else ""
    return first if len(first) <= MAX_TITLE_LEN else ""
