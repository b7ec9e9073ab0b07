"""The sections plugin (crawler.core.processing.plugins.sections): the anchors and headings of
a page's headed sections in its ``sections`` field, which the search reads to link a result
to the sections that match (issue 36)."""

from __future__ import annotations

from crawler.core.processing.config import DEFAULT_INDEXING_PLUGINS, PageProcessingConfig
from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.plugins.sections import MIN_SECTIONS, SectionsPlugin, page_sections
from indexer.core.documents.sections import FIELD, decode_sections, encode_sections
from indexer.core.ids import DocType

from .helpers import html

SECTIONS = "crawler.core.processing.plugins.sections.SectionsPlugin"

SPHINX = """<html><head><title>Built-in Types</title></head><body>
<section id="built-in-types"><h1>Built-in Types<a class="headerlink" href="#built-in-types">¶</a></h1>
<p>The principal built-in types.</p>
<section id="set-types"><h2><a class="toc-backref" href="#id7">Set Types</a> &mdash; set, frozenset<a
 class="headerlink" href="#set-types-set-frozenset" title="Permalink to this heading">¶</a></h2>
<p>A set object is an unordered collection of distinct hashable objects.</p>
<pre>s = {1, 2}</pre><p>Common uses include membership testing and set intersection.</p>
</section>
<section id="mapping"><h3>Mapping Types<a class="headerlink" href="#typesmapping">¶</a></h3>
<p>A mapping object maps hashable values to arbitrary objects.</p></section>
</section></body></html>"""

DOCBOOK = """<html><head><title>Logical Decoding Concepts</title></head><body>
<div class="sect1" id="LOGICALDECODING-EXPLANATION"><div class="titlepage"><div><div>
<h2 class="title" style="clear: both">49.2. Logical Decoding Concepts</h2></div></div></div>
<div class="sect2" id="LOGICALDECODING-REPLICATION-SLOTS"><div class="titlepage"><div><div>
<h3 class="title">49.2.2. Replication Slots</h3></div></div></div>
<p>A slot represents a stream of changes that can be replayed to a client.</p></div>
<h3 class="title"><a id="_the_shell_prompt"/>1.1.1. The shell prompt</h3><p>Prompt.</p>
<h2 id="_synopsis">SYNOPSIS</h2><p>git add [--verbose]</p>
<p>Loose text</p><h4>No anchor here</h4><p>Orphan text.</p>
</div></body></html>"""


def test_sphinx_sections_take_the_permalink_not_the_toc_backref() -> None:
    assert page_sections(SPHINX.encode()) == [
        ("set-types-set-frozenset", "Set Types — set, frozenset"),
        ("typesmapping", "Mapping Types")]


def test_docbook_and_asciidoc_anchors() -> None:
    assert page_sections(DOCBOOK.encode()) == [
        ("LOGICALDECODING-EXPLANATION", "Logical Decoding Concepts"),
        ("LOGICALDECODING-REPLICATION-SLOTS", "Replication Slots"),
        ("_the_shell_prompt", "The shell prompt"),
        ("_synopsis", "SYNOPSIS")]  # the anchorless h4 is no section


def test_short_pages_and_unusable_anchors() -> None:
    one = '<h2 id="only">Only</h2><p>Just one section.</p>'
    assert MIN_SECTIONS == 2 and page_sections(one.encode()) == []
    same = '<h2 id="a">A</h2><p>x</p><h2 id="a">Again</h2><p>y</p><h2 id="b c">Bad id</h2>'
    assert page_sections(same.encode()) == []  # one usable anchor only
    empty = '<h2 id="a"> </h2><h2 id="b">B</h2><h2 id="c">C</h2>'
    assert page_sections(empty.encode()) == [("b", "B"), ("c", "C")]


def test_the_field_in_the_stored_summary_and_no_other_document() -> None:
    page = html(SPHINX, config=PageProcessingConfig(indexing_plugins=(SECTIONS,)))
    documents = to_index_documents(page)
    assert [d.doc_type for d in documents if d.url == page.url] == [DocType.PAGE]
    summary = documents[0].summary
    assert decode_sections(summary) == page_sections(SPHINX.encode())
    plain = html(SPHINX)
    assert (page.terms, page.length, page.meta_words) == \
        (plain.terms, plain.length, plain.meta_words)  # nothing searchable changes
    assert SectionsPlugin.name == "section" and SECTIONS in DEFAULT_INDEXING_PLUGINS
    assert html("<p>no sections</p>",
                config=PageProcessingConfig(indexing_plugins=(SECTIONS,))).fields.get(FIELD) \
        is None


def test_the_field_codec() -> None:
    text = encode_sections([("a", "First  heading"), ("b c", "Bad anchor"), ("d", ""),
                            ("e", "Second\theading")])
    assert decode_sections({"fields": {FIELD: text}}) == [("a", "First heading"),
                                                          ("e", "Second heading")]
    assert decode_sections({}) == [] and decode_sections({"fields": {FIELD: 3}}) == []
