"""Whole-page indexing (issue 16): every word of the page is searchable, weighted by region, while
the displayed description stays the summary; the "summary only" profile keeps the seed's
behaviour; a page's first region is always its title's."""

from __future__ import annotations

from lxml import etree

from crawler.core.definition.crawl import CrawlTimeOptions
from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.indexing import page_summary, to_index_documents
from crawler.core.processing.page import ScoredSentence
from crawler.core.processing.processors import boilerplate
from crawler.core.processing.summarizers import TextBlock, indexed_body
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import IndexBundleWriter
from indexer.core.documents.document import fancy_words
from indexer.core.text import TextAnalyzer
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from .helpers import html

FILLER = " ".join(f"Paragraph {i} explains how the frobnicator assembles its widgets in order."
                  for i in range(120))
LONG_PAGE = (f"<title>Quickstart</title><h1>Quickstart</h1><p>{FILLER}</p>"
             "<h2>Building urls</h2><p>Use url_for to build a url to a view.</p>"
             f"<p>{FILLER}</p>")
SUMMARY_ONLY = PageProcessingConfig.from_options(CrawlTimeOptions(index_whole_page=False))


def _region_of(page, term: str) -> float:
    """The region weight of the first position of ``term`` in ``page``."""
    position = page.terms[term][0]
    for end, weight in page.region_weights:
        if position <= end:
            return weight
    raise AssertionError(f"{term} is past the last region")


def test_a_word_past_the_summary_is_indexed_by_default():
    page = html(LONG_PAGE)
    assert len(page.description) <= PageProcessingConfig().max_description_len
    assert "url_for" not in page.description
    stem = TextAnalyzer().terms("url_for", "en")[0]
    assert stem in page.terms
    assert "url_for" in page.body
    assert page_summary(page)["body"] == page.body


def test_summary_only_indexes_title_and_summary():
    page = html(LONG_PAGE, config=SUMMARY_ONLY)
    stem = TextAnalyzer().terms("url_for", "en")[0]
    assert stem not in page.terms
    assert page.body == ""
    assert not CrawlTimeOptions(index_whole_page=False).index_whole_page
    assert CrawlTimeOptions().index_whole_page  # the default is the whole page


def test_summary_sentences_weigh_more_than_the_rest_of_the_page():
    page = html(LONG_PAGE)
    summary_word = TextAnalyzer().terms("Paragraph 0", "en")[0]
    late_word = TextAnalyzer().terms("view", "en")[0]
    assert _region_of(page, summary_word) > _region_of(page, late_word)
    # the heading the summarizer did not choose weighs more than body text
    heading = TextAnalyzer().terms("Building", "en")[0]
    assert _region_of(page, heading) > _region_of(page, late_word)
    # consecutive sentences of one weight share a region: a few regions, not one a sentence
    assert len(page.region_weights) < 60


def test_indexed_body_keeps_summary_weights_and_joins_equal_runs():
    blocks = [TextBlock("Alpha one. Beta two. Gamma three.", "p", 0),
              TextBlock("Heading here", "h2", 40), TextBlock("Delta four. Eps five.", "p", 60)]
    body = indexed_body(blocks, (ScoredSentence("Beta two.", 2.5),), 0.5, 1.5)
    assert [(b.text, b.weight) for b in body] == [
        ("Alpha one.", 0.5), ("Beta two.", 2.5), ("Gamma three.", 0.5), ("Heading here", 1.5),
        ("Delta four. Eps five.", 0.5)]


def test_nosnippet_page_stores_no_body():
    page = html('<meta name="robots" content="nosnippet"><title>T</title><p>Secret words.</p>')
    assert "body" not in page_summary(page)


def test_a_page_without_a_title_has_an_empty_title_region():
    page = html("<p>Lonely sentence without any title at all.</p>"
                "<p>Another sentence follows here.</p>")
    assert page.title == ""
    title_weight = PageProcessingConfig().title_weight
    assert page.region_weights[0] == (-1, title_weight)
    assert all(end >= 0 for end, _ in page.region_weights[1:])


def test_a_title_less_page_is_not_scored_as_a_title(tmp_path):
    """Region 0 is read as the title at search time: the first sentence of a page without a
    title must not get the title's weight and bonus (before, it did)."""
    untitled = html("<p>Frobnicator calibration steps for the lab bench.</p>"
                    "<p>Further details follow in the manual.</p>",
                    url="https://a.example/untitled.html")
    titled = html("<title>Lab manual</title><p>Frobnicator calibration steps for the lab "
                  "bench.</p><p>Further details follow in the manual.</p>",
                  url="https://b.example/titled.html")
    with IndexBundleWriter(tmp_path / "IndexData1") as writer:
        writer.append([*to_index_documents(untitled), *to_index_documents(titled)])
    reader = IndexBundleReader(tmp_path / "IndexData1")
    options = SearchOptions(link_score_weight=0.0)
    result = Searcher([LocalShard(reader)], options).search("frobnicator calibration")
    by_url = {r.url: r.explanation for r in result.results}
    untitled_exp = by_url["https://a.example/untitled.html"]
    assert untitled_exp["bonuses"]["title_keyword"] == 0.0
    title_weight = options.title_weight
    assert all(t["f"] < title_weight for t in untitled_exp["relevance"]["terms"])


SPHINX_PAGE = """<html><head><title>os — Miscellaneous interfaces</title></head><body>
<div class="related" role="navigation"><h3>Navigation</h3><ul><li><a href="genindex.html">index
</a></li><li><a href="py-modindex.html">modules</a> |</li><li><a href="io.html">next</a></li>
</ul></div>
<div class="body"><h1>os — Miscellaneous interfaces<a class="headerlink" href="#os">¶</a></h1>
<p>This module provides a portable way of using operating system dependent functionality.</p>
</div>
<div class="sphinxsidebar"><h3>Previous topic</h3><p><a href="allos.html">Generic Operating
System Services</a></p><h3>Quick search</h3></div>
<footer>© Copyright 2001-2023, Python Software Foundation.</footer>
</body></html>"""


def test_page_furniture_is_left_out_of_the_text_but_its_links_are_kept():
    page = html(SPHINX_PAGE, url="https://docs.python.org/3/library/os.html")
    indexed = f"{page.description} {page.body}"
    assert "portable way" in indexed
    for debris in ("Navigation", "Previous topic", "Quick search", "¶", "Copyright",
                   "Generic Operating"):
        assert debris not in indexed, debris
    assert TextAnalyzer().terms("generic", "en")[0] not in page.terms
    linked = {link.url.rsplit("/", 1)[1] for link in page.links}
    assert {"genindex.html", "py-modindex.html", "io.html", "allos.html"} <= linked


def test_a_page_written_inside_its_navigation_keeps_its_text():
    page = html("<html><head><title>T</title></head><body><nav><p>All of this page's words "
                "are inside a nav element.</p></nav><p>Short.</p></body></html>")
    assert "inside a nav" in page.description


def test_title_and_anchor_words_are_posted_as_fancy_hits():
    page = html('<title>Binary Strings</title><p>Functions on bytea values.</p>'
                '<a href="/bitstring.html">Bit string functions</a>')
    page_doc, link_doc = to_index_documents(page)[:2]
    analyzer = TextAnalyzer()
    lang = page.lang
    assert set(fancy_words(analyzer.terms("Binary Strings", lang))) <= set(page_doc.meta_words)
    assert "fancy:" + analyzer.terms("bytea", lang)[0] not in page_doc.meta_words  # plain hit
    assert set(fancy_words(analyzer.terms("Bit string functions", lang))) <= \
        set(link_doc.meta_words)


def test_a_definition_term_weighs_as_a_heading():
    """A term being defined (``dt``: a Sphinx signature, a PostgreSQL setting) is the page's
    subject as a heading is, not running text."""
    blocks = [TextBlock("Intro text here.", "p", 0), TextBlock("os.pathsep", "dt", 20),
              TextBlock("The character used to separate search path components.", "dd", 40)]
    body = indexed_body(blocks, (), 0.5, 1.5)
    assert [(b.text, b.weight) for b in body] == [
        ("Intro text here.", 0.5), ("os.pathsep", 1.5),
        ("The character used to separate search path components.", 0.5)]


def test_furniture_parts_find_what_the_furniture_query_finds():
    """drop_furniture's three queries find FURNITURE's outermost elements, nested ones and
    elements two branches find (a div.related with role=navigation) included."""
    doc = etree.fromstring(
        '<html><body><div class="related x" role="navigation"><a class="headerlink">¶</a>'
        '<nav><p>in</p></nav></div><p>Text <a class=" headerlink ">¶</a></p>'
        '<div class="footerish">kept</div><ul role="navigation"><li>a</li></ul>'
        '<div class="sphinxsidebar"><footer>f</footer></div><span role="navigationx">s</span>'
        '</body></html>', etree.HTMLParser())
    body = doc.find("body")
    expected = boilerplate._outermost(list(boilerplate.FURNITURE(body)))
    found = boilerplate._furniture(body)
    assert len(found) == len(expected) == 4
    assert set(found) == set(expected)
