"""Issue 18: the cached page links only web urls, and its highlighter marks text nodes only:
attribute values that hold the query words and markup-like text stay inert attribute text."""

from __future__ import annotations

import lxml.html
import pytest

from ranking import cached
from ranking.core.display.sanitize import sanitize_page
from tests.web.hardening_index import build_index
from tests.web.test_search_page import work as work  # the fixture, re-exported for pytest

ATTRS_URL = "http://attrs.example.test/tricky.html"
TRICKY_PAGE = (
    '<!doctype html><html lang="en"><head><title>Tricky threading attributes</title>'
    '<meta http-equiv="refresh" content="0; url=http://elsewhere.test/"></head><body>'
    '<h1>Tricky threading attributes</h1>'
    '<p title="threading &quot;&gt;<img src=x onerror=alert(1)> threading">'
    "First paragraph about threading.</p>"
    "<a href=\"/next\" data-note='a > b <b class=\"x\">threading</b> onclick=\"alert(2)\"'>"
    "threading link</a>"
    '<img alt="threading > <script>alert(3)</script> locks" src="data:,">'
    '<div class="<mark>threading</mark>" data-x=">threading<">Locks and threading text.</div>'
    "<p>plain threading text &amp; <b>bold threading</b> &lt;i&gt;threading&lt;/i&gt;</p>"
    "<!-- threading in a comment --> <textarea>threading in a textarea</textarea>"
    "</body></html>")


@pytest.fixture
def tricky(work):
    build_index(work, {ATTRS_URL: TRICKY_PAGE})
    return work


def _shape(root, skip=("mark", "meta", "base")):
    """(tag, attributes) of every element in document order, leaving out ``skip``."""
    return [(el.tag, sorted(el.attrib.items())) for el in root.iter()
            if isinstance(el.tag, str) and el.tag not in skip]


def test_highlight_marks_text_nodes_only_never_attributes(client, tricky):
    frame = client.get("/cache/frame", {"url": ATTRS_URL, "q": "threading locks"})
    assert frame.status_code == 200
    body = frame.content.decode()
    served = lxml.html.document_fromstring(body)
    original = lxml.html.fragment_fromstring(sanitize_page(TRICKY_PAGE), create_parent="body")
    # the elements and attribute values the sanitiser keeps of the page, highlighted or not:
    # nothing in an attribute value became markup, nothing was cut out of one
    assert _shape(served.body) == _shape(original)
    assert served.xpath("//p[@title]/@title") == [
        'threading "><img src=x onerror=alert(1)> threading']
    marks = [m.text_content().lower() for m in served.iter("mark")]
    assert marks and set(marks) <= {"threading", "locks"}
    for mark in served.iter("mark"):
        assert not any(a.tag in ("title", "textarea", "script", "style")
                       for a in mark.iterancestors())
    # text nodes, and only they, were marked: the paragraph, the link, the div, the bold
    assert served.xpath("//p[1]//mark") and served.xpath("//a//mark")
    assert served.xpath("//div//mark") and served.xpath("//b//mark")
    assert 'http-equiv="refresh"' not in body and "elsewhere.test" not in body
    assert "&lt;i&gt;" in body  # escaped text stays escaped text


@pytest.mark.parametrize("page", [TRICKY_PAGE, '<p title="a > threading">x</p>',
                                  "<p a='>'>threading</p><div", "<x\"y>threading</x\"y>",
                                  "<p>&#x110000; &bogus threading &#65;</p>"])
def test_rewritten_page_keeps_attribute_text_inert(page):
    out = cached.highlight_html(page, ["threading"])
    served = lxml.html.fragment_fromstring(out, create_parent="div")
    original = lxml.html.fragment_fromstring(page, create_parent="div")
    kept = _shape(original, skip=("meta",))
    # every element written is one of the page's, attributes unchanged (odd tags may be dropped)
    assert all(item in kept for item in _shape(served))
    for el in served.iter():
        for value in el.attrib.values():
            assert "<mark" not in value or "<mark" in page


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JaVaScRiPt:alert(document.cookie)",
                                 " javascript:alert(1)", "data:text/html,<script>x</script>",
                                 "vbscript:msgbox(1)", "file:///etc/passwd", "//evil.test/",
                                 "http:", "mailto:a@b.test"])
def test_cache_links_only_web_urls(client, tricky, url):
    response = client.get("/cache", {"url": url, "q": "threading"})
    assert response.status_code in (400, 404)
    page = response.content.decode()
    assert "No cached copy" in page
    assert "only http and https pages have a cached copy" in page or url.startswith("http")
    root = lxml.html.document_fromstring(page)
    for href in root.xpath("//a/@href") + root.xpath("//base/@href"):
        assert not href.strip().lower().startswith(("javascript:", "data:", "vbscript:", "file:"))
        assert href.strip() != url.strip()
    frame = client.get("/cache/frame", {"url": url})
    assert frame.status_code == 404 and b"javascript" not in frame.content.lower()


def test_cache_of_a_web_url_still_links_it(client, tricky):
    response = client.get("/cache", {"url": ATTRS_URL, "q": "threading"})
    assert response.status_code == 200
    assert f'href="{ATTRS_URL}"' in response.content.decode()
