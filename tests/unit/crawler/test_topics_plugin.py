"""The topics plugin (crawler.core.processing.plugins.topics): a page's headings and the terms
it defines as ``topic:`` keys a whole query matches (issue 36)."""

from __future__ import annotations

from crawler.core.processing.config import DEFAULT_INDEXING_PLUGINS, PageProcessingConfig
from crawler.core.processing.plugins.topics import (
    TopicsPlugin,
    defined_terms,
    headings,
    label_text,
)
from indexer.core.meta_vocabulary import INTERNAL_PREFIXES
from indexer.core.signals.definitions import MAX_KEY_TERMS, definition_key
from indexer.core.text import TextAnalyzer

from .helpers import html

TOPICS = "crawler.core.processing.plugins.topics.TopicsPlugin"

DOCBOOK = """<html><head><title>14.1. Using EXPLAIN</title></head><body>
<div class="sect1" id="USING-EXPLAIN"><h2 class="title">14.1. Using <code>EXPLAIN</code></h2>
<p>PostgreSQL devises a <em class="firstterm">query plan</em> for each query it receives.
The structure of a plan is a tree of <em class="firstterm">plan nodes</em>.</p>
<h3 class="title">14.1.1. <code>EXPLAIN</code> Basics</h3><p>Basics.</p>
<h2>Chapter 29. Monitoring Disk Usage</h2><h3>F.39. seg</h3><h3>Examples</h3>
<dl><dt id="GLOSSARY-AGGREGATE"><span class="glossterm">Aggregate function (routine)</span></dt>
<dd class="glossdef">A function.</dd></dl>
<p>Use <a class="glossterm" href="glossary.html#GLOSSARY-ACID">ACID transactions</a>.</p>
</div></body></html>"""

SPHINX = """<html><body><h1>Glossary<a class="headerlink" href="#glossary">¶</a></h1>
<dl class="glossary simple"><dt id="term-generic-view">generic view<a class="headerlink"
 href="#term-generic-view" title="Permalink to this term">¶</a></dt><dd>A view.</dd></dl>
<p>A <dfn>covering index</dfn> holds every column.</p>
<h2>Documentation Strings<a class="headerlink" href="#documentation-strings">¶</a></h2>
</body></html>"""


def keys(markup: str) -> set[str]:
    return set(TopicsPlugin().keys(markup.encode(), "en"))


def test_headings_without_their_numbers_and_permalinks() -> None:
    assert headings(DOCBOOK.encode()) == [
        "Using EXPLAIN", "EXPLAIN Basics", "Monitoring Disk Usage", "seg", "Examples"]
    assert headings(SPHINX.encode()) == ["Glossary", "Documentation Strings"]
    assert label_text(b"5.4.6. Exclusion Constraints") == "Exclusion Constraints"
    assert label_text(b"Appendix F. Additional Modules") == "Additional Modules"
    assert label_text(b"pg_sleep() (function)") == "pg_sleep"


def test_defined_terms_of_docbook_sphinx_and_html() -> None:
    assert defined_terms(DOCBOOK.encode()) == ["query plan", "plan nodes", "Aggregate function"]
    assert defined_terms(SPHINX.encode()) == ["covering index", "generic view"]
    assert "ACID transactions" not in defined_terms(DOCBOOK.encode())  # a use, not a definition


def test_keys_of_two_terms_or_more_as_the_index_analyses_them() -> None:
    got = keys(DOCBOOK)
    assert {"topic:use_explain", "topic:explain_basic", "topic:monitor_disk_usag",
            "topic:queri_plan", "topic:plan_node", "topic:aggreg_function"} <= got
    assert not {"topic:seg", "topic:exampl"} & got  # one-word labels are no keys
    assert {"topic:generic_view", "topic:cover_index", "topic:document_string"} <= keys(SPHINX)
    assert "topic" in INTERNAL_PREFIXES


def test_definition_key_drops_stop_words_as_the_query_parser_does() -> None:
    analyzer = TextAnalyzer()
    stop = analyzer.stop_terms("en")
    assert definition_key(analyzer.terms("preparing a query", "en"), stop) == "prepar_queri"
    assert definition_key(analyzer.terms("the who", "en"), stop) == "the_who"  # all stop words
    assert definition_key(["a"] * (MAX_KEY_TERMS + 1), frozenset()) is None
    assert definition_key(["x"], frozenset(), min_terms=2) is None
    assert definition_key([], frozenset()) is None


def test_the_plugin_on_a_page_and_by_default() -> None:
    page = html(DOCBOOK, config=PageProcessingConfig(indexing_plugins=(TOPICS,)))
    assert "topic:queri_plan" in page.meta_words
    assert TOPICS in DEFAULT_INDEXING_PLUGINS
    assert not any(w.startswith("topic:") for w in html("<p>Using EXPLAIN</p>").meta_words)
    noindex = DOCBOOK.replace("<head>", '<head><meta name="robots" content="noindex">')
    page = html(noindex, config=PageProcessingConfig(indexing_plugins=(TOPICS,)))
    assert not any(w.startswith("topic:") for w in page.meta_words)
