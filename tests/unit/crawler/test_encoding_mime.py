from __future__ import annotations

from crawler.core.processing.encoding import decode
from crawler.core.processing.mime import detect_mime_type


def test_encoding_from_header_then_meta_then_detection():
    assert decode("café".encode("latin-1"), "text/html; charset=ISO-8859-1") == ("café", "cp1252")
    assert decode('<meta charset="windows-1251">Привет'.encode("cp1251"))[0].endswith("Привет")
    text, codec = decode("日本語のテキストです。これはテストの文章です。".encode("shift_jis"))
    assert "日本語" in text
    assert decode(b"\xef\xbb\xbfhi") == ("hi", "utf-8-sig")


def test_decode_never_fails():
    for body in (b"\xff\xfe\xfa\x00\x81", bytes(range(256)), b"", "é".encode()[:1]):
        text, codec = decode(body, "text/html; charset=no-such-charset")
        assert isinstance(text, str) and codec


def test_labels_of_codecs_that_cannot_decode_text_are_ignored():
    """Python has codecs named like these, but "undefined" always raises and the others are
    not text encodings: a page declaring one is decoded as if it declared nothing."""
    body = "<meta charset=undefined><p>café".encode()
    for label in ("undefined", "base64", "rot13", "hex", "zlib"):
        assert decode(body, f"text/html; charset={label}") == (body.decode(), "utf-8")
    text, codec = decode(b"<meta charset='undefined'><p>caf\xe9")  # detection decides
    assert text.startswith("<meta charset='undefined'><p>caf") and codec != "undefined"


def test_mime_type_from_headers_then_content():
    assert detect_mime_type("http://a/robots.txt", "text/html", b"") == "text/robot"
    assert detect_mime_type("http://a/s", "text/xml", b"<?xml version='1.0'?><urlset>") == (
        "application/x-sitemap")
    assert detect_mime_type("http://a/s", "application/xml", b"<sitemapindex>") == (
        "application/x-sitemap")
    assert detect_mime_type("http://a/f", "", b"<rss version='2.0'>") == "application/rss+xml"
    assert detect_mime_type("http://a/f", "text/xml", b"<feed xmlns='x'>") == (
        "application/atom+xml")
    assert detect_mime_type("http://a/", "", b"<!DOCTYPE html><html>") == "text/html"
    assert detect_mime_type("http://a/f", "application/octet-stream", b"%PDF-1.4") == (
        "application/pdf")
    assert detect_mime_type("http://a/f", "", b"\x89PNG\r\n\x1a\nxxxx") == "image/png"
    assert detect_mime_type("http://a/f", "text/html; charset=utf-8", b"x") == "text/html"
    assert detect_mime_type("http://a/s.gz", "application/x-gzip", b"\x1f\x8b...") == (
        "application/gzip")
    assert detect_mime_type("http://a/f", "", b"plain words") == "text/plain"
