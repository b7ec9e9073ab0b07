"""Issue 34, item 9: the cached page's document is sanitised, so that no script can run in it
even without the frame's sandbox and CSP (tests/browser/test_cached_xss_browser.py loads it in
Chromium with neither), while the page stays readable."""

from __future__ import annotations

import lxml.html
import pytest

from ranking.cached import frame_document
from ranking.core.display.sanitize import sanitize_page, url_as_read
from tests.fixtures.xss_vectors import VECTORS, executable_constructs, vector_pages
from tests.web.hardening_index import build_index
from tests.web.test_search_page import work as work  # the fixture, re-exported for pytest

URL = "http://xss.example.test/dir/page.html"
WORDS = ["img", "alert", "style", "script", "link", "before"]
READABLE = (
    '<!doctype html><html><head><title>Readable</title><style>p{color:red}</style></head><body>'
    '<h1 id="top" class="big">Brakes and bells</h1>'
    '<p style="color:#336;text-align:center;position:fixed">Adjusting <b>brakes</b> &amp; '
    '<i>bells</i> &lt;safely&gt;.</p>'
    '<ul><li><a href="next.html">next page</a></li>'
    '<li><a href="https://other.example.test/x?a=1&amp;b=2" title="elsewhere">other site</a>'
    '</li><li><a href="#top">top</a></li><li><a href="mailto:a@b.test">mail</a></li></ul>'
    '<table><tr><th>part</th><td colspan="2">pads</td></tr></table>'
    '<img src="pics/brake.png" alt="a brake" width="40">'
    '<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline">'
    "<pre><code>tighten(bolt)</code></pre><noscript><p>Enable scripts to see more.</p></noscript>"
    "</body></html>")


@pytest.mark.parametrize("page", vector_pages(), ids=[str(n) for n in range(len(VECTORS))])
def test_checker_sees_each_vector_in_the_raw_page(page):
    assert executable_constructs(f"<html><body>{page}</body></html>")


@pytest.mark.parametrize("page", vector_pages(), ids=[str(n) for n in range(len(VECTORS))])
def test_served_document_holds_nothing_executable(page):
    served = frame_document(page.encode(), URL, "text/html", WORDS)
    assert executable_constructs(served) == []
    root = lxml.html.document_fromstring(served)
    assert [b.get("href") for b in root.iter("base")] == [URL]  # only ours, in our head
    assert root.xpath("//base/parent::head") and not root.body.xpath(".//meta")
    assert "before" in root.body.text_content()  # the page's text is still there


def test_the_issue_vector_is_cut_out_of_the_served_cached_page(client, work):
    url = "http://xss.example.test/svg.html"
    build_index(work, {url: "<html><head><title>Svg threading page</title></head><body>"
                            "<p>Threading inside svg</p><svg><style><img src=x "
                            "onerror=alert(document.domain)></style></svg>"
                            "<math><mtext><table><mglyph><style><img src=x onerror=alert(2)>"
                            "</style></mglyph></table></mtext></math></body></html>"})
    frame = client.get("/cache/frame", {"url": url, "q": "threading"})
    assert frame.status_code == 200
    body = frame.content.decode()
    assert executable_constructs(body) == []
    assert "onerror" not in body and "<svg" not in body.lower() and "<style" not in body
    # an HTML5 parser, as a browser, reads the <img> out of the <svg>: kept, without handler
    assert '<img src="x">' in body
    assert '<mark style="background-color:#ffeb3b;color:#000">Threading</mark>' in body


def test_a_plain_page_stays_readable():
    served = frame_document(READABLE.encode(), URL, "text/html", ["brakes"])
    root = lxml.html.document_fromstring(served)
    body = root.body
    assert executable_constructs(served) == []
    assert [h.text_content() for h in body.xpath("//h1[@id='top'][@class='big']")] == [
        "Brakes and bells"]
    assert body.xpath("//p/@style") == ["color:#336;text-align:center"]  # no position:fixed
    assert body.xpath("//p//mark/text()") == ["brakes"]
    assert "Adjusting brakes & bells <safely>." in body.xpath("string(//p)")
    assert body.xpath("//a/@href") == ["next.html", "https://other.example.test/x?a=1&b=2",
                                       "#top", "mailto:a@b.test"]
    assert body.xpath("//a[@title='elsewhere']") and body.xpath("//td[@colspan='2']")
    assert body.xpath("//img/@src") == ["pics/brake.png", "data:image/png;base64,iVBORw0KGgo="]
    assert body.xpath("//img/@alt") == ["a brake", "inline"]
    assert body.xpath("//pre/code/text()") == ["tighten(bolt)"]
    assert "Enable scripts to see more." in body.text_content()  # noscript's fall-back text
    assert "Readable" not in body.text_content() and "color:red" not in served
    # relative links resolve against the original page, and open outside the frame
    assert root.xpath("//head/base/@href") == [URL] and root.xpath("//head/base/@target")


def test_text_documents_stay_escaped_text():
    served = frame_document(b"<script>alert(1)</script> brakes", URL, "text/plain", ["brakes"])
    assert executable_constructs(served) == []
    assert "&lt;script&gt;alert(1)&lt;/script&gt; <mark" in served


@pytest.mark.parametrize("value, read", [
    ("java\tscript:x", "javascript:x"), ("\x01 JAVASCRIPT:x ", "javascript:x"),
    ("ja\nva\rscript:x", "javascript:x"), ("http://a/ b", "http://a/ b")])
def test_urls_are_read_as_browsers_read_them(value, read):
    assert url_as_read(value) == read


@pytest.mark.parametrize("style", [
    "width:expression(alert(1))", "background:url(javascript:alert(1))",
    "color:red;behavior:url(x.htc)", "width:exp\\72 ession(alert(1))",
    "color:red/*x*/;width:e/**/xpression(alert(1))", "-moz-binding:url(x.xml#y)"])
def test_style_that_can_load_or_run_anything_is_dropped(style):
    out = sanitize_page(f'<p style="{style}">x</p>')
    assert out == "<p>x</p>"


def test_sanitiser_keeps_raster_data_images_only():
    out = sanitize_page('<img src="data:image/gif;base64,R0lGOD=">'
                        '<img src="data:image/svg+xml;base64,PHN2Zz4=">'
                        '<a href="data:image/png;base64,iVBO">x</a>')
    root = lxml.html.fragment_fromstring(out, create_parent="div")
    assert root.xpath("//img/@src") == ["data:image/gif;base64,R0lGOD="]
    assert root.xpath("//a/@href") == []
