from __future__ import annotations

import gzip
import struct
import zlib

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.ids import DocType


def process(url: str, body: bytes, content_type: str = "", status: int = 200, **headers: str):
    all_headers = {"Content-Type": content_type, **headers}
    return PageProcessor(PageProcessingConfig()).process(
        FetchedPage(url, body, status, all_headers, fetched_at=1_700_000_000.0))


def test_robots_txt():
    body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: https://a.org/s.xml\n"
    page = process("https://a.org/robots.txt", body, "text/plain")
    assert page.mime_type == "text/robot"
    assert page.robots is not None and page.robots.crawl_delay == 2.0
    assert page.robots.sitemaps == ("https://a.org/s.xml",)
    assert [(link.url, link.kind) for link in page.links] == [("https://a.org/s.xml", "sitemap")]


SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://a.org/1.html</loc></url><url><loc> https://a.org/2.html </loc></url>
</urlset>"""


def test_sitemap_and_gzipped_sitemap_and_index():
    for body, ctype in ((SITEMAP, "application/xml"), (gzip.compress(SITEMAP),
                                                       "application/x-gzip")):
        page = process("https://a.org/sitemap.xml", body, ctype)
        assert page.is_sitemap
        assert [link.url for link in page.links] == ["https://a.org/1.html", "https://a.org/2.html"]
    index = b"<sitemapindex><sitemap><loc>https://a.org/s1.xml.gz</loc></sitemap></sitemapindex>"
    page = process("https://a.org/sitemap_index.xml", index, "text/xml")
    assert page.title == "sitemap index" and page.links[0].url == "https://a.org/s1.xml.gz"


def test_sitemap_links_are_not_pruned():
    urls = b"".join(b"<url><loc>https://a.org/%d</loc></url>" % i for i in range(120))
    page = process("https://a.org/sitemap.xml", b"<urlset>" + urls + b"</urlset>", "text/xml")
    assert len(page.links) == 120


def test_rss_and_atom_feeds():
    rss = b"""<rss version="2.0"><channel><title>News feed</title><language>fr</language>
    <description>Latest news</description>
    <item><title>First story</title><link>https://a.org/1</link>
    <description>&lt;p&gt;Story &lt;b&gt;one&lt;/b&gt; text&lt;/p&gt;</description></item>
    </channel></rss>"""
    page = process("https://a.org/feed", rss, "application/rss+xml")
    assert page.title == "News feed" and page.lang == "fr" and page.media == "feed"
    assert "Story one text" in page.description
    assert page.links[0].url == "https://a.org/1" and page.links[0].text == "first story"
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom title</title>
    <entry><title>Entry one</title><link href="https://a.org/e1"/><summary>Summary words</summary>
    </entry></feed>"""
    page = process("https://a.org/atom", atom, "text/xml")
    assert page.mime_type == "application/atom+xml" and page.title == "Atom title"
    assert page.links[0].url == "https://a.org/e1"


def _pdf(text: str) -> bytes:
    """A minimal one-page PDF with ``text`` and a link annotation (xref offsets computed)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> /Annots [6 0 R] >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] "
        b"/A << /S /URI /URI (https://linked.org/doc) >> >>",
        b"<< /Title (PDF title here) >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 7 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return out


def test_pdf():
    page = process("https://a.org/doc.pdf", _pdf("Portable document words"), "application/pdf")
    assert page.title == "PDF title here"
    assert "Portable document words" in page.description
    assert "portabl" in page.terms
    assert "https://linked.org/doc" in [link.url for link in page.links]
    assert "filetype:pdf" in page.meta_words


def test_broken_pdf_is_an_error_value():
    page = process("https://a.org/bad.pdf", b"%PDF-1.4 garbage" * 10, "application/pdf")
    assert page.errors and page.url == "https://a.org/bad.pdf"


def _png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + header + struct.pack(
        ">I", zlib.crc32(b"IHDR" + header))


def test_images():
    page = process("https://a.org/img/red_cat-photo.png", _png(800, 600), "image/png")
    assert page.title == "red cat photo"
    assert page.media == "image-medium" and "media:image-medium" in page.meta_words
    assert process("https://a.org/p.png", _png(1, 1), "").media == "image-tracking"


def test_plain_text():
    body = b"Plain title\n\nSome plain text about https://a.org/linked.html here.\n"
    page = process("https://a.org/file.txt", body, "text/plain; charset=utf-8")
    assert page.title == "Plain title"
    assert page.links[0].url == "https://a.org/linked.html"


def test_http_redirect_is_a_location_record():
    page = process("https://a.org/old", b"", "text/html", status=301, Location="/new")
    assert page.doc_type == DocType.LOCATION
    assert page.location == "https://a.org/new"
    assert "location:https://a.org/new" in page.meta_words


def test_unknown_binary():
    page = process("https://a.org/x.bin", bytes(range(256)) * 10, "application/x-thing")
    assert page.media == "binary" and page.description == ""
