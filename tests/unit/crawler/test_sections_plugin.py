"""The sections plugin (crawler.core.processing.plugins.sections): each headed section of a
long page, with its anchor, as a sub-document at ``<page url>#<anchor>`` (issue 36)."""

from __future__ import annotations

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.plugins.sections import (
    MAX_WORDS,
    MIN_SECTIONS,
    SectionsPlugin,
    page_sections,
)
from indexer.core.ids import DocType
from indexer.core.meta_vocabulary import META_PREFIXES

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
    sections = page_sections(SPHINX.encode())
    assert [(s.key, s.title) for s in sections] == [
        ("set-types-set-frozenset", "Set Types — set, frozenset"),
        ("typesmapping", "Mapping Types")]
    first = sections[0]
    assert first.text.startswith("A set object is an unordered collection")
    assert "set intersection" in first.text and "s = {1, 2}" not in first.text  # code out
    assert "mapping object" not in first.text  # up to the next heading only
    assert first.fields["level"] == 2 and sections[1].fields["level"] == 3


def test_docbook_and_asciidoc_anchors() -> None:
    sections = page_sections(DOCBOOK.encode())
    assert [(s.key, s.title) for s in sections] == [
        ("LOGICALDECODING-EXPLANATION", "Logical Decoding Concepts"),
        ("LOGICALDECODING-REPLICATION-SLOTS", "Replication Slots"),
        ("_the_shell_prompt", "The shell prompt"),
        ("_synopsis", "SYNOPSIS")]
    assert sections[1].text == "A slot represents a stream of changes that can be replayed " \
                               "to a client."
    assert sections[3].text == "git add [--verbose] Loose text"  # the anchorless h4 ends it


def test_short_pages_and_long_sections() -> None:
    one = '<h2 id="only">Only</h2><p>Just one section.</p>'
    assert MIN_SECTIONS == 2 and page_sections(one.encode()) == []
    words = " ".join(f"w{i}" for i in range(MAX_WORDS + 50))
    two = f'<h2 id="a">A</h2><p>{words}</p><h2 id="b">B</h2><p>b</p>'
    sections = page_sections(two.encode())
    assert len(sections[0].text.split()) == MAX_WORDS
    same = '<h2 id="a">A</h2><p>x</p><h2 id="a">Again</h2><p>y</p><h2 id="b c">Bad id</h2>'
    assert page_sections(same.encode()) == []  # one usable anchor only


def test_sections_become_records_filed_under_the_page() -> None:
    page = html(SPHINX, config=PageProcessingConfig(indexing_plugins=(SECTIONS,)))
    documents = to_index_documents(page)
    assert not [d for d in documents if d.doc_type == DocType.SUBDOC]
    records = [d for d in documents if d.summary.get("relation") == "record"]
    assert [d.doc_type for d in records] == [DocType.LINK, DocType.LINK]
    assert {d.url for d in records} == {page.url}  # grouped with the page, as anchor text is
    assert [d.summary["anchor"] for d in records] == [
        "https://example.com/page.html#set-types-set-frozenset",
        "https://example.com/page.html#typesmapping"]
    first = records[0]
    assert first.summary["description"] == "Set Types — set, frozenset"  # the heading
    assert first.summary["kind"] == "section" and "source" not in first.summary
    assert "section:all" in first.meta_words and "section" in META_PREFIXES
    assert not any(w.startswith(("link:", "source:")) for w in first.meta_words)
    assert first.length == len(first.terms["set"]) + 2 and first.doc_id != records[1].doc_id
    plain = html(SPHINX)
    assert (page.terms, page.length) == (plain.terms, plain.length)  # the page itself as is
    assert SectionsPlugin.name == "section"


def test_a_section_that_is_a_list_of_links_is_left_out() -> None:
    index = ('<h2 id="A">A</h2><ul><li><a href="x.html#abs">abs() (built-in function)</a></li>'
             '<li><a href="y.html">abc (module)</a></li></ul>'
             '<h2 id="prose">Prose</h2><p>Some words about <a href="z.html">zones</a> here.</p>'
             '<h2 id="more">More</h2><p>Plain text.</p>')
    assert [s.key for s in page_sections(index.encode())] == ["prose", "more"]
