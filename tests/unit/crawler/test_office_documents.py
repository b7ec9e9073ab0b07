"""Office and e-book documents as page types (issue 37, item 4): each format's text, title,
language and links, its detection from the content when the server sends a generic type, and
hostile files (zip bombs, lying sizes, cut, encrypted or crowded archives, huge space runs)
refused with one clear error while the page keeps its url facts."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest
from odf import text as odf_text
from odf.opendocument import OpenDocumentText

from crawler.core.processing import mime
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.processors.office.document import (
    MAX_DOCUMENT_CHARS,
    MAX_MEMBERS,
    DocumentText,
)
from tests.fixtures.office_documents import MAKERS, make_docx, make_odt, zip_bomb

TYPES = {"docx": mime.DOCX, "pptx": mime.PPTX, "xlsx": mime.XLSX, "odt": mime.ODT,
         "ods": mime.ODS, "odp": mime.ODP, "epub": mime.EPUB}
LINKED = ("docx", "pptx", "xlsx", "odt", "epub")
TARGET = "https://example.org/annual/target.html"


def process(url: str, body: bytes, content_type: str = ""):
    return PageProcessor(PageProcessingConfig()).process(
        FetchedPage(url, body, 200, {"Content-Type": content_type}, fetched_at=1_700_000_000.0))


@pytest.mark.parametrize("kind", sorted(TYPES))
def test_each_format_gives_text_title_language_and_links(kind):
    body = MAKERS[kind](f"Fixture {kind} title", "quokkaword", TARGET, "target page")
    page = process(f"https://a.org/files/doc.{kind}", body, TYPES[kind])
    assert page.errors == ()
    assert page.mime_type == TYPES[kind]
    assert page.title == f"Fixture {kind} title"
    assert page.lang.startswith("en")
    assert "quokkaword" in page.terms and "quokkaword" in page.description
    if kind in LINKED:
        assert TARGET in [link.url for link in page.links]
    assert f"filetype:{kind}" in page.meta_words


@pytest.mark.parametrize("kind", sorted(TYPES))
@pytest.mark.parametrize("content_type", ["", "application/octet-stream", "application/zip",
                                          "application/msword"])
def test_formats_are_told_from_the_content_under_a_generic_type(kind, content_type):
    body = MAKERS[kind](f"Fixture {kind}", "quokkaword")
    assert mime.detect_mime_type("https://a.org/download?id=7", content_type, body) == \
        TYPES[kind]


def test_docx_reads_headings_tables_and_link_text():
    page = process("https://a.org/report.docx", make_docx("Report", "wombat", TARGET,
                                                          "the full figures"), mime.DOCX)
    assert page.lang == "en-GB"
    assert "quarter | revenue" in page.description
    link = next(link for link in page.links if link.url == TARGET)
    assert "figures" in link.text


def test_an_old_office_file_keeps_its_type():
    old_word = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600)  # an OLE compound file
    assert mime.detect_mime_type("https://a.org/old.doc", "application/msword", old_word) == \
        "application/msword"
    page = process("https://a.org/old.doc", old_word, "application/msword")
    assert page.media == "binary" and page.errors == ()


def test_a_plain_zip_is_binary_without_error():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("readme.txt", "hello")
    page = process("https://a.org/files.zip", out.getvalue(), "application/zip")
    assert page.mime_type == mime.ZIP and page.media == "binary" and page.errors == ()


def test_a_zip_bomb_is_refused_before_any_library_reads_it():
    page = process("https://a.org/bomb.docx", zip_bomb(megabytes=200), mime.DOCX)
    assert page.url == "https://a.org/bomb.docx"
    assert len(page.errors) == 1 and "over the limit" in page.errors[0]
    assert page.errors[0].startswith("docx: archive unpacks to")
    assert page.description == "" and page.terms == {}


def _lying(body: bytes, size: int) -> bytes:
    """``body`` with every declared uncompressed size (local and central headers) set to
    ``size``: an archive that claims to be small."""
    data = bytearray(body)
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = data.find(signature)
        while start != -1:
            data[start + offset:start + offset + 4] = struct.pack("<I", size)
            start = data.find(signature, start + 4)
    return bytes(data)


def test_an_archive_lying_about_its_size_inflates_no_more_than_it_declares():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"\0" * 30 * 2**20)
    page = process("https://a.org/liar.docx", _lying(out.getvalue(), 1000), mime.DOCX)
    assert len(page.errors) == 1 and page.errors[0].startswith("docx: document not readable")


def test_a_document_cut_by_the_byte_range_says_so():
    body = make_docx("Report", "wombat")
    page = PageProcessor(PageProcessingConfig(byte_range=len(body) // 2)).process(
        FetchedPage("https://a.org/cut.docx", body, 200, {"Content-Type": mime.DOCX}))
    assert len(page.errors) == 1 and "byte range" in page.errors[0]


def test_encrypted_and_crowded_archives_are_refused():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for number in range(MAX_MEMBERS + 1):
            archive.writestr(f"word/part{number}.xml", "")
    crowded = process("https://a.org/crowded.docx", out.getvalue(), mime.DOCX)
    assert "members, over the limit" in crowded.errors[0]
    body = bytearray(make_docx("Secret", "wombat"))
    start = body.find(b"PK\x01\x02")
    while start != -1:  # the encrypted flag on every member
        body[start + 8] |= 1
        start = body.find(b"PK\x01\x02", start + 4)
    secret = process("https://a.org/secret.docx", bytes(body), mime.DOCX)
    assert secret.errors == ("docx: document is encrypted",)


def test_a_huge_declared_space_run_is_one_space():
    document = OpenDocumentText()
    paragraph = odf_text.P(text="before")
    paragraph.addElement(odf_text.S(c=1_000_000_000))
    paragraph.addText("after numbat")
    document.text.addElement(paragraph)
    out = io.BytesIO()
    document.write(out)
    page = process("https://a.org/spaces.odt", out.getvalue(), mime.ODT)
    assert page.errors == () and "numbat" in page.terms
    assert "before after numbat" in page.description


def test_damaged_document_inside_a_good_archive_is_an_error_value():
    page = process("https://a.org/wrong.odt", make_docx("Not ODF", "wombat"), mime.ODT)
    assert len(page.errors) == 1 and page.errors[0].startswith("odt: document not readable")
    page = process("https://a.org/other.odt", make_odt("Real", "wombat"), mime.ODT)
    assert page.errors == ()


def test_text_stops_at_the_limit_and_says_why():
    doc = DocumentText()
    doc.add("a" * (MAX_DOCUMENT_CHARS - 10))
    doc.add("b" * 100)
    doc.add("c")
    assert doc.full and doc.cut == f"text cut at {MAX_DOCUMENT_CHARS} characters"
    assert [len(block.text) for block in doc.blocks] == [MAX_DOCUMENT_CHARS - 10, 9]
