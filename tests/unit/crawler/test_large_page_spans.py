"""Pages over LARGE_PAGE_BYTES are parsed without their <span> tags (a memory guard: a
source-code view's tree is mostly spans). The output must be the page's output with the spans
parsed, unless a scraper could read them, and hostile markup must stay cheap."""

from __future__ import annotations

import dataclasses
import time

import pytest

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.processors import html as html_module
from crawler.core.processing.processors import html_bytes
from crawler.core.processing.scrapers import ScraperConfig

from .helpers import html

CONFIG = PageProcessingConfig(byte_range=4_000_000, max_links=100_000,
                              max_links_to_extract=100_000, max_description_len=100_000)


def _source_view(lines: int) -> str:
    """A page shaped like rustdoc's source views: a title and links wrapped in spans, then a
    <pre> of numbered lines with a span per token, and paragraphs with inline spans."""
    rows = "\n".join(
        f'<span id="{i}">{i}</span> <span class="kw">fn</span> '
        f'<span class="ident">item_{i}</span>(<span class="ident">x</span>: '
        f'<span class="ty">u{i % 64}</span>) <span class="op">-&gt;</span> '
        f'<span class="ty">bool</span> {{ <span class="kw">true</span> }}'
        for i in range(lines))
    return (
        '<!DOCTYPE html><html lang="en"><head><title><span>Source of</span> '
        'avx.rs</title><meta name="description" content="Source of the core_arch crate.">'
        '</head><body><nav><a href="/index.html"><span class="logo">Home</span> page</a>'
        '<span title="a > b">tricky attribute</span></nav>'
        '<p>The <span class="em">intrinsics</span> of <a href="/core/arch/index.html">'
        '<span>core::arch</span></a>, and <SPAN CLASS="X">upper case</SPAN> tags.</p>'
        f'<div class="example-wrap"><pre class="rust">{rows}</pre></div>'
        '<p>Last paragraph mentions <span>finalword</span>.</p></body></html>')


def _fields(page) -> dict:
    return {f.name: getattr(page, f.name) for f in dataclasses.fields(page)}


def test_a_large_page_gives_the_same_output_with_its_spans_left_out(monkeypatch):
    body = _source_view(16_000)
    assert len(body) > html_bytes.LARGE_PAGE_BYTES
    guarded = html(body, config=CONFIG)
    monkeypatch.setattr(html_module, "LARGE_PAGE_BYTES", 1 << 60)  # parse every span
    plain = html(body, config=CONFIG)
    assert _fields(guarded) == _fields(plain)
    assert [(d.url, d.terms) for d in to_index_documents(guarded)] == \
        [(d.url, d.terms) for d in to_index_documents(plain)]
    assert guarded.title == "<span>Source of</span> avx.rs"  # a title's content is raw text
    assert "finalword" in guarded.terms and "item_0" in guarded.terms
    assert {link.url for link in guarded.links} >= {"https://example.com/index.html",
                                                   "https://example.com/core/arch/index.html"}


def test_spans_stay_when_a_scraper_could_read_them():
    body = _source_view(16_000).replace(
        "<body>", '<body><span class="author">Ferris</span>')
    scraper = ScraperConfig(name="author", signature="core_arch", priority=1,
                            extract_fields=(("AUTHOR", '//span[@class="author"]'),))
    page = html(body, config=dataclasses.replace(CONFIG, scrapers=(scraper,)))
    assert page.scraper == "author"
    assert "Ferris" in str(page.fields)


@pytest.mark.parametrize("unit", ["<span ", "<span a='", "</span", "<span\n" + "x" * 600])
def test_unclosed_span_tags_cost_a_bounded_time(unit):
    body = "<html><body><p>" + unit * (3_000_000 // len(unit)) + "</p></body></html>"
    start = time.thread_time()
    page = html(body, config=CONFIG)
    assert time.thread_time() - start < 2.0
    assert page.status == 200


def test_spans_are_removed_piece_by_piece_as_in_one_pass(monkeypatch):
    """The removal works in pieces cut before a "<"; tags that straddle where a piece would
    end, quoted ">" and unclosed spans come out as from one substitution over the page."""
    body = _source_view(3_000).encode() + b"<span a='x>y'>q</span><span b=\"" + b"z" * 300
    monkeypatch.setattr(html_bytes, "_SPAN_PIECE", 97)  # many pieces, cut everywhere
    at = html_bytes.TITLE_END.search(body).end()
    assert html_bytes.without_spans(body) == \
        body[:at] + html_bytes.SPAN_TAG.sub(b"", body[at:])


@pytest.mark.parametrize("body", [
    _source_view(200),
    '<?xml version="1.0" xml:lang="fr"?><html><head><title>T\x07it\x1fre</title></head>'
    "<body><p>Caf\u00e9 \U0001f980 crab \ue001marker\ue000 &#xe000; text</p>"
    '<a href="/x">x\ue002</a></body></html>',
    "<html><body><p>&#57344; reference to a marker</p><a href='/y'>y</a></body></html>",
])
def test_a_utf8_body_gives_what_its_decoded_text_gives(body):
    """A UTF-8 body is processed from its bytes (its decoded text is let go): the same
    extraction as from the text."""
    processor = html_module.HtmlProcessor()
    ctx = PageProcessor(CONFIG).context
    url = "https://example.com/p.html"
    from_text = processor.extract_text(url, body, ctx)
    from_bytes = processor.extract(
        FetchedPage(url, body.encode(), 200, {"content-type": "text/html"}, fetched_at=1.0),
        body.encode(), ctx)
    assert from_bytes.encoding == "utf-8"
    assert dataclasses.replace(from_bytes, encoding=from_text.encoding) == from_text
    assert from_text.links
