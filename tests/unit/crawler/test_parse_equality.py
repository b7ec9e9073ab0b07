"""The HTML processor's two trees give the same index documents (crawler.core.processing.
processors.lexbor_tree and .lxml_tree): lexbor's, which parses most pages, and lxml's, the
reference, on the fixture pages (real pages of the local web, the CMS pages of the built-in
scrapers' tests) and on hand-made markup; the scrapers' pre-test on lexbor's tree lets through
every page a built-in scraper matches; and the byte-level helpers of the lexbor path.

``bench/parse_equality.py`` makes the same comparison over the whole local web."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest

from bench.parse_equality import differences, lxml_only, plain
from crawler.core.processing.builtin_scrapers import BUILTIN_SCRAPERS
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.processors import html as html_module
from crawler.core.processing.processors.html_bytes import (
    MAX_LEXBOR_TAGS,
    MAX_UNCHECKED_TAGS,
    clean,
    closed_empty_tags,
    deep_or_large,
)
from crawler.core.processing.processors.lexbor_tree import LexborTree
from crawler.core.processing.processors.lxml_tree import LxmlTree
from crawler.core.processing.scrapers import ScraperSet
from indexer.core.text import TextAnalyzer
from tests.fixtures.cms_pages import ALL_PAGES

from .helpers import FIXTURES

API = "crawler.core.processing.plugins.api_names.ApiNamesPlugin"
DEFAULTS = PageProcessingConfig(scrapers=BUILTIN_SCRAPERS, indexing_plugins=(API,))
NO_SCRAPERS = PageProcessingConfig(scrapers=(), indexing_plugins=(API,))


def _documents(body: bytes, url: str, config: PageProcessingConfig) -> list[dict]:
    processor = PageProcessor(config, TextAnalyzer())
    page = processor.process(FetchedPage(url, body, 200, {"Content-Type": "text/html"},
                                         fetched_at=1.7e9))
    return [plain(doc) for doc in to_index_documents(page, processor.analyzer)]


def _same(body: str | bytes, url: str = "https://example.com/a/page.html",
          config: PageProcessingConfig = NO_SCRAPERS) -> None:
    data = body.encode() if isinstance(body, str) else body
    new = _documents(data, url, config)
    with lxml_only():
        reference = _documents(data, url, config)
    assert differences(reference, new) == []
    assert new == reference


def _tree_of(body: str | bytes) -> LexborTree | LxmlTree | None:
    data = clean(body if isinstance(body, str) else None,
                 body if isinstance(body, bytes) else None)[1]
    return html_module.parse_tree(data, True, ScraperSet(), "")


FIXTURE_URLS = {
    "python-shlex.html": "https://docs.python.org/3/library/shlex.html",
    "postgresql-sql-delete.html": "https://www.postgresql.org/docs/15/sql-delete.html",
    "django-pagination.html": "https://docs.djangoproject.com/en/3.2/topics/pagination.html",
    "debian-reference-pr01.zh-tw.html":
        "https://www.debian.org/doc/manuals/debian-reference/pr01.zh-tw.html",
    "debian-reference-pr01.fr.html":
        "https://www.debian.org/doc/manuals/debian-reference/pr01.fr.html",
    "debian-reference-index.ja.html":
        "https://www.debian.org/doc/manuals/debian-reference/index.ja.html",
}


@pytest.mark.parametrize("name", sorted(FIXTURE_URLS))
def test_real_pages_give_the_same_documents(name):
    with open(os.path.join(FIXTURES, name), "rb") as handle:
        body = handle.read()
    assert isinstance(_tree_of(body), LexborTree)
    _same(body, FIXTURE_URLS[name], DEFAULTS)


@pytest.mark.parametrize("make", ALL_PAGES, ids=lambda make: make.__name__)
def test_cms_pages_give_the_same_documents_without_scrapers(make):
    page = make()
    _same(page.html, page.url, NO_SCRAPERS)


@pytest.mark.parametrize("make", ALL_PAGES, ids=lambda make: make.__name__)
def test_a_page_a_builtin_scraper_matches_passes_the_pre_test(make):
    """Every page a built-in signature matches (on lxml's tree) passes its candidates (on
    lexbor's): it is then parsed by lxml and scraped as before."""
    page = make()
    data = clean(page.html, None)[1]
    scrapers = ScraperSet(BUILTIN_SCRAPERS)
    reference = LxmlTree.parse(data)
    assert scrapers.choose(reference.doc, page.html) is not None
    tree = LexborTree.parse(data)
    assert scrapers.may_match(tree.has_element, page.html)
    assert isinstance(html_module.parse_tree(data, True, scrapers, page.html), LxmlTree)


def test_a_page_no_scraper_matches_stays_with_lexbor():
    body = "<html><head><meta name=generator content='Sphinx'></head><body><p>x</p></body>"
    scrapers = ScraperSet(BUILTIN_SCRAPERS)
    assert isinstance(html_module.parse_tree(clean(body, None)[1], True, scrapers, body),
                      LexborTree)


def test_an_admin_xpath_signature_without_candidates_sends_every_page_to_lxml():
    admin = replace(BUILTIN_SCRAPERS[0], name="Mine", candidates="")
    scrapers = ScraperSet((admin,))
    body = "<html><body><p>nothing of Drupal</p></body></html>"
    assert isinstance(html_module.parse_tree(clean(body, None)[1], True, scrapers, body),
                      LxmlTree)


_PAGES = {
    "sphinx furniture": """<!DOCTYPE html><html lang="en"><head><title>Mod — Docs</title>
        <meta name="description" content="The module."></head><body>
        <div class="related" role="navigation"><ul><li><a href="/i">index</a></li>
        <li><a href="/m">modules</a> |</li><li><a href="/n">next</a></li></ul></div>
        <div class="body"><h1>Mod<a class="headerlink" href="#m">¶</a></h1>
        <p>The module does things. It does them well!</p><dl><dt id="mod.f">mod.f(x)</dt>
        <dd><p>Return <code>x</code> twice; see <a href="#g">g</a>.</p></dd></dl></div>
        <div class="sphinxsidebar" role="navigation"><h3>Contents</h3><ul>
        <li><a href="#a">A</a></li><li><a href="#b">B</a></li><li><a href="#c">C</a></li></ul>
        </div><div class="footer">© Copyright.</div></body></html>""",
    "nested furniture": """<html><body><p>Some running text of the page, long enough.</p>
        <div class="related"><nav><a href="/n">next page</a></nav><a class="headerlink"
        href="#x">¶</a> words</div><div role="navigation"><div class="footer">f</div></div>
        <p>More text after.</p><footer>foot</footer></body></html>""",
    "furniture is most of the page": """<html><body><nav><p>Lots and lots of navigation
        words here in the nav, more than the page.</p></nav><p>Small.</p></body></html>""",
    "link list and index entries": """<html><body><p>Intro text for the index.</p><ul>
        <li>retryable error, <a href="/s.html">Serialization</a></li>
        <li>table of <ul><li><a href="/c.html">contents</a></li><li><a href="/d">d</a></li>
        </ul></li></ul><dl><dt>thread safety</dt><dd><dl><dt><a href="/conn">Connection</a>
        </dt></dl></dd></dl><table><tr><td><a href="/1">one</a></td><td><a href="/2">two</a>
        </td><td><a href="/3">three</a></td></tr></table></body></html>""",
    "docbook empty anchors": """<html><head><title>Preface</title></head><body><div>
        <h1 class="title"><a id="_preface"/>Preface</h1><p>Text <a id="x"/>with <a
        href="ch01.html">a link</a> and more.</p><div class="toc"><p><b>Table</b></p><dl>
        <dt><span><a href="a.html">A</a></span></dt><dt><a href="b.html">B</a></dt>
        <dt><a href="c.html">C</a></dt></dl></div></div></body></html>""",
    "links of every kind": """<html><head><base href="https://other.example/dir/">
        <link rel="canonical" href="page.html"></head><body><p><a href="x.html" rel="nofollow">
        no</a> <a href="y.html" title="Why">  </a> <a href="z.html"><img src="i.png"
        alt="Zed image"> </a> <area href="/map" alt="Map area"> <img src="/pic.png"
        alt="A picture"> <iframe src="/frame.html" title="Framed"></iframe>
        <a href="mailto:x@y.z">mail</a> <a href="#top">top</a></p></body></html>""",
    "code and breaks": """<html><body><p>Call <code>f()</code> or <kbd>Ctrl</kbd>.<br>Then
        <tt>g</tt>.</p><pre>line one
        line two <b>bold</b></pre><p>After<br/>break.</p><div>Loose <span>inline</span> text
        <p>para</p> tail text</div></body></html>""",
    "title from a heading": "<html><body><h2> </h2><h3>The Heading</h3><p>Body.</p></body>",
    "head only": "<html><head><title>Only a title</title></head></html>",
    "explicit empty body": "<html><head><title>T</title></head><body>\n</body></html>",
    "frameset": """<html><head><title>Frames</title></head><frameset cols="50%,50%">
        <frame src="/left.html"><frame src="/right.html"></frameset></html>""",
    "meta refresh": """<html><head><meta http-equiv="refresh" content="0; url=/new.html">
        <title>Moved</title></head><body><p>Moved.</p></body></html>""",
    "languages": """<?xml version="1.0" encoding="utf-8"?><html lang="fr"><head>
        <meta http-equiv="content-language" content="de"><meta charset></head><body>
        <p>Le texte est en français, bien sûr.</p></body></html>""",
    "language from the text": """<html><body><p>Der schnelle braune Fuchs springt über den
        faulen Hund, und die Katze schläft auf dem Sofa in der Küche, weil es warm ist.</p>
        </body></html>""",
    "scripts and styles": """<html><head><style>p{}</style><script>var a="<div/>";</script>
        <noscript><meta name="robots" content="noindex"></noscript></head><body>
        <template><p>hidden</p></template><script>x()</script><p>Shown text.</p>
        <noscript><p>No script.</p></noscript></body></html>""",
    "entities and comments": """<html><body><p>Caf&eacute; &amp; cr&egrave;me<!-- c -->
        &#x41;&#66; &nbsp; done.</p></body></html>""",
    "svg title": """<html><body><svg><title>Icon</title><a href="/svg">s</a></svg>
        <p>Text.</p></body></html>""",
    "nesting three hundred deep": "<html><body>" + "<div><span>" * 300 + "deep words"
        + "</span></div>" * 300 + "</body></html>",
    "unclosed paragraphs and items": """<html><body><p>One<p>Two<ul><li>a<li>b</ul>
        <dl><dt>t<dd>d</dl><table><tr><td>c1<td>c2<tr><td>c3</table></body></html>""",
    "nested link lists": "<html><body><p>Intro paragraph with some words.</p>"
        + "<ul>" + "".join(f"<li><a href='/p{i}'>Page {i}</a><ul><li><a href='/p{i}/s'>"
                           f"Sub {i}</a></li></ul></li>" for i in range(20))
        + "</ul><p>Closing paragraph after the list.</p></body></html>",
}


@pytest.mark.parametrize("name", sorted(_PAGES))
def test_hand_made_markup_gives_the_same_documents(name):
    assert isinstance(_tree_of(_PAGES[name]), LexborTree)
    _same(_PAGES[name])


@pytest.mark.parametrize("body", [b"", b"   ", b"<!-- only a comment -->", b"<!DOCTYPE html>",
                                  b"<?xml version='1.0'?>", b"<html></html>"])
def test_a_page_without_content_is_left_to_lxml(body):
    assert not isinstance(_tree_of(body), LexborTree)
    _same(body)


@pytest.mark.parametrize(("before", "after"), [
    (b"<p><a id=x />t</p>", b"<p><a id=x /></a>t</p>"),
    (b"<p><a id=x/>t</p>", b"<p><a id=x/>t</p>"),  # the value is "x/": not an empty tag
    (b'<p><a href="x"/>t', b'<p><a href="x"/></a>t'),
    (b"<div class='a/b' />t", b"<div class='a/b' /></div>t"),
    (b"<p><a b/>t", b"<p><a b/></a>t"),
    (b"<script src=x.js/>", b"<script src=x.js/>"),  # the value is "x.js/": not empty
    (b'<script src="x.js"/>', b'<script src="x.js"/></script>'),
    (b"<p><a href=x/>t</p>", b"<p><a href=x/>t</p>"),
    (b"<br/><img src='a'/><meta charset='utf-8'/><hr />", b"<br/><img src='a'/>"
     b"<meta charset='utf-8'/><hr />"),
    (b"<title>a<b/></title><b/>", b"<title>a<b/></title><b/></b>"),
])
def test_empty_element_tags_of_elements_that_are_not_void_are_closed(before, after):
    assert closed_empty_tags(before) == after


@pytest.mark.parametrize("unit", [b"<div>", b"<b><i>", b"<a href='/x'>", b"<table><tr><td>",
                                  b"<ul><li>", b"<span><div></span>"])
def test_unclosed_nesting_is_left_to_lxml(unit):
    body = unit * (MAX_UNCHECKED_TAGS + 1) + b"deep text"
    assert deep_or_large(body)
    assert isinstance(_tree_of(body), LxmlTree)


def test_the_largest_pages_are_left_to_lxml():
    body = b"<html><body>" + b"<p>para</p>" * (MAX_LEXBOR_TAGS // 2) + b"</body></html>"
    assert deep_or_large(body)


@pytest.mark.parametrize("unit", [b"<b></x>", b"<ul><li></x></x>", b"<div></x>",
                                  b"<table><tr><td></x></x></x>",
                                  b"<ul><li><a href=/x>x</a><a href=/y>y</a><a href=/z>z</a>"
                                  b"</x></x>"])
def test_end_tags_that_close_nothing_stay_cheap_with_lexbor(unit):
    """Nesting that the tag counts do not show (each end tag closes nothing) costs lexbor's
    parser and the walks their quadratic worst case, bounded by MAX_LEXBOR_TAGS."""
    body = unit * (MAX_LEXBOR_TAGS // unit.count(b"<")) + b"deep text"
    assert not deep_or_large(body)
    start = time.thread_time()
    page = PageProcessor(PageProcessingConfig()).process(
        FetchedPage("https://example.com/", body, 200, {"Content-Type": "text/html"}))
    assert time.thread_time() - start < 2.0
    assert not page.errors


@pytest.mark.parametrize("unit", [b"<p>para</p>", b"<div><span>x</span> <b>y</b></div>"])
def test_long_balanced_pages_stay_with_lexbor(unit):
    body = b"<html><body>" + unit * (MAX_LEXBOR_TAGS // unit.count(b"<") - 10) + \
        b"</body></html>"
    assert not deep_or_large(body)
    assert isinstance(_tree_of(body), LexborTree)


@pytest.mark.parametrize("unit", [b"<li>item", b"<p>para", b"<tr><td>a<td>b",
                                  b"<div><span>x</span><br></div>"])
def test_unclosed_flat_markup_stays_with_lexbor_up_to_the_unchecked_size(unit):
    """Start tags without end tags (implicitly closed, or void) count as nesting: lexbor
    parses such a page up to MAX_UNCHECKED_TAGS tags, lxml a longer one."""
    count = MAX_UNCHECKED_TAGS // unit.count(b"<") - 10
    assert isinstance(_tree_of(b"<html><body>" + unit * count), LexborTree)
    assert isinstance(_tree_of(b"<html><body>" + unit * count * 2), LxmlTree)
