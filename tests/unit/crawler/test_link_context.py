"""Index entries lend their terms to the links in them (crawler.core.processing.processors.link_records)."""

from __future__ import annotations

from lxml import etree

from crawler.core.definition.crawl import CrawlTimeOptions
from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.processors.link_records import MAX_CONTEXT_WORDS, link_records
from indexer.core.ids import DocType

from .helpers import html

# The shapes of PostgreSQL's bookindex.html and of Sphinx's genindex.html (old and new).
BOOK_INDEX = """<html><body><div class="index"><dl>
<dt>retryable error, <a class="indexterm" href="mvcc.html">Serialization Failure Handling</a></dt>
<dt>RETURN NEXT</dt><dd><dl>
  <dt>in PL/pgSQL, <a class="indexterm" href="plpgsql.html#id-1">RETURN NEXT and RETURN QUERY</a></dt>
</dl></dd>
<dt>cursor, <a href="cur.html">Cursors</a>, <a href="decl.html">DECLARE</a></dt>
</dl></div></body></html>"""

GENINDEX = """<html><body><table><tr><td><ul>
<li>table of<ul><li><a href="directives.html#index-0">contents</a></li></ul></li>
<li><a href="glossary.html#term-generic-view"><strong>generic view</strong></a></li>
</ul></td><td><dl>
<dt>thread safety</dt><dd><dl>
  <dt><a href="connections.html#index-0">Connection</a></dt>
  <dt><a href="connections.html#index-2">Transaction</a></dt>
</dl></dd></dl></td></tr></table></body></html>"""

PROSE = """<html><body><ul>
<li>Read the <a href="tutorial.html">tutorial</a> for a long explanation of how every part of
this project fits together with the others</li>
<li>Intro<ul><li>The <a href="deep.html">deep dive</a> explains much more than anyone needs to
know about the subject before starting</li></ul></li>
</ul><p>near <a href="para.html">paragraph link</a> text</p>
<div class="related"><ul><li><a href="ch2.html">Chapter two</a> |</li><li>
<a href="ch1.html">Chapter three</a> &#187;</li></ul></div></body></html>"""


def texts(page: str) -> dict[str, str]:
    processed = html(page, url="https://docs.example.org/index.html")
    return {link.url.rsplit("/", 1)[1]: link.text for link in processed.links}


def test_the_term_before_a_link_in_a_book_index_entry_is_its_text():
    by_target = texts(BOOK_INDEX)
    assert by_target["mvcc.html"] == "retryable error serialization failure handling"
    # a sub-entry: the entry above it, then its own words, then the link's
    assert by_target["plpgsql.html"] == "return next pl pgsql return next return query"
    # several links in one entry share its term; separators are not words
    assert by_target["cur.html"] == "cursor cursors"
    assert by_target["decl.html"] == "cursor declare"


def test_the_heading_of_a_nested_index_list_is_its_links_text():
    by_target = texts(GENINDEX)
    assert by_target["directives.html"] == "table contents"
    assert by_target["glossary.html"] == "generic view"
    # two entries to one page (fragments dropped) join, each with the term above it
    assert by_target["connections.html"] == "thread safety connection .. thread safety transaction"


def test_prose_paragraphs_and_navigation_lend_no_context():
    by_target = texts(PROSE)
    assert by_target["tutorial.html"] == "tutorial"
    assert by_target["deep.html"] == "deep dive"  # "Intro" heads it, but the item is prose
    assert by_target["para.html"] == "paragraph link"
    assert by_target["ch2.html"] == "chapter two"  # separators are not words
    assert by_target["ch1.html"] == "chapter three"


def test_context_longer_than_the_limit_is_dropped_and_at_the_limit_kept():
    words = " ".join(f"w{i}" for i in range(MAX_CONTEXT_WORDS))
    kept = texts(f"<ul><li>{words} <a href='a.html'>target</a></li></ul>")
    assert kept["a.html"] == f"{words} target"
    dropped = texts(f"<ul><li>{words} more <a href='a.html'>target</a></li></ul>")
    assert dropped["a.html"] == "target"


def test_the_stylesheet_and_the_element_walk_give_the_same_records():
    for page in (BOOK_INDEX, GENINDEX, PROSE):
        doc = etree.fromstring(page, etree.HTMLParser())
        fast = list(link_records(doc, fast=True))
        assert fast == link_records(doc, fast=False)
        assert any(record[6] for record in fast) == (page is not PROSE)


def test_every_index_term_of_a_page_reaches_its_link_document():
    # A reference page named by 60 entries of an index: each entry's term is a way to find it,
    # far past Yioop's 200 characters of joined link text.
    entries = "".join(f"<dt>parameter{i:02d}, <a href='config.html#p{i}'>Statement Behavior</a>"
                      f"</dt>" for i in range(60))
    page = html(f"<dl>{entries}</dl>", url="https://docs.example.org/bookindex.html",
                config=_defaults())
    (link,) = page.links
    assert "parameter00" in link.text and "parameter59" in link.text
    documents = to_index_documents(page)
    (link_doc,) = [d for d in documents if d.doc_type == DocType.LINK]
    assert "parameter59" in link_doc.terms


def _defaults():
    from crawler.core.processing.config import PageProcessingConfig

    return PageProcessingConfig.from_options(CrawlTimeOptions())
