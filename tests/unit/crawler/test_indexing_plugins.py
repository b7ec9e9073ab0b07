"""The indexing-plugin seam (crawler.core.processing.plugins) and the shipped plugin (api_names)."""

from __future__ import annotations

import dataclasses

import pytest

from crawler.core.definition.crawl import CrawlTimeOptions
from crawler.core.processing.config import DEFAULT_INDEXING_PLUGINS, PageProcessingConfig
from crawler.core.processing.errors import ConfigError
from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.plugins import load_plugin, load_plugins
from crawler.core.processing.plugins.api_names import REGION_WEIGHT, ApiNamesPlugin, defined_names
from indexer.core.ids import DocType
from indexer.core.meta_vocabulary import META_PREFIXES
from indexer.core.text import TextAnalyzer
from tests.fixtures.plugins import REGION_WORD, SUBDOCUMENT_WORD

from .helpers import fixture, html

MARKER = "tests.fixtures.plugins.MarkerPlugin"
API = "crawler.core.processing.plugins.api_names.ApiNamesPlugin"
RECIPE = ("<html><head><title>Soup recipe</title></head><body><h1>Soup recipe</h1>"
          "<p>Boil the leeks with potatoes for twenty minutes.</p></body></html>")


def with_plugins(*paths: str) -> PageProcessingConfig:
    return PageProcessingConfig(indexing_plugins=paths)


def test_plugin_adds_a_region_meta_words_fields_and_a_subdocument():
    plain = html(RECIPE)
    page = html(RECIPE, config=with_plugins(MARKER))
    # the region comes after the page's own positions, with its weight
    stem = TextAnalyzer().terms(REGION_WORD, "en")[0]
    assert page.terms[stem] == (plain.length,)
    assert page.length == plain.length + 3
    assert page.region_weights == (*plain.region_weights, (plain.length + 2, 2.0))
    for term, positions in plain.terms.items():
        assert page.terms[term][:len(positions)] == positions
    assert "class:marked" in page.meta_words and "class:marked" not in plain.meta_words
    assert page.fields["MARKED_BYTES"] == len(RECIPE.encode())
    assert page.body == plain.body and page.description == plain.description  # snippets
    documents = to_index_documents(page)
    assert [d.doc_type for d in documents[:2]] == [DocType.PAGE, DocType.SUBDOC]
    sub = documents[1]
    assert sub.url == "https://example.com/page.html#card"
    assert sub.summary["title"] == "Card of Soup recipe"
    assert sub.summary["source"] == page.url and sub.summary["subdoctype"] == "marker"
    assert TextAnalyzer().terms(SUBDOCUMENT_WORD, "en")[0] in sub.terms
    assert {"class:card", "marker:all", "site:example.com", "lang:en", "safe:true",
            f"info:{sub.url}"} <= set(sub.meta_words)
    assert not any(w.startswith("link:") for w in sub.meta_words)
    assert sub.doc_id != documents[0].doc_id
    # a page the plugin passes over is processed as without it
    other = "<html><head><title>Leeks</title></head><body><p>Leeks.</p></body></html>"
    assert html(other, config=with_plugins(MARKER)) == html(other)


def test_noindex_page_gives_no_subdocument():
    noindex = RECIPE.replace("<head>", '<head><meta name="robots" content="noindex">')
    assert to_index_documents(html(noindex, config=with_plugins(MARKER))) == []


def test_a_failing_plugin_loses_nothing_but_its_output():
    page = html(RECIPE, config=with_plugins("tests.fixtures.plugins.FailingPlugin", MARKER))
    assert any("plugin failing: RuntimeError" in e for e in page.errors)
    assert "class:marked" in page.meta_words  # the next plugin still ran


def test_loading():
    assert load_plugin(MARKER).name == "marker"
    assert load_plugin("tests.fixtures.plugins.marker_instance").name == "marker"
    for bad in ("tests.fixtures.plugins.Missing", "no_such_module.Plugin", "Plugin",
                "tests.fixtures.plugins.NotAPlugin"):
        with pytest.raises(ConfigError):
            load_plugin(bad)
    with pytest.raises(ConfigError, match="same name"):
        load_plugins([MARKER, "tests.fixtures.plugins.marker_instance"])
    with pytest.raises(ConfigError):  # a crawl with a bad plugin does not start
        html(RECIPE, config=with_plugins("no_such_module.Plugin"))


def test_a_site_setting_naming_the_shipped_plugin_by_its_old_module_still_loads():
    old = "crawler.core.plugins.api_names.ApiNamesPlugin"  # before issue 32 moved it
    assert isinstance(load_plugin(old), ApiNamesPlugin)
    assert PageProcessingConfig.from_options(CrawlTimeOptions()).indexing_plugins == \
        DEFAULT_INDEXING_PLUGINS
    assert PageProcessingConfig.from_options(
        CrawlTimeOptions(), indexing_plugins=(MARKER,)).indexing_plugins == (MARKER,)


def test_api_names_of_a_sphinx_page():
    page = html(fixture("python-shlex.html"), url="https://docs.python.org/3/library/shlex.html",
                config=with_plugins(API))
    plain = html(fixture("python-shlex.html"), url="https://docs.python.org/3/library/shlex.html")
    words = [w for w in page.meta_words if w.startswith("api:")]
    assert {"api:shlex", "api:shlex.split", "api:shlex.shlex.get_token"} <= set(words)
    assert len(words) == len(set(words)) and "api" in META_PREFIXES
    assert page.region_weights[-1][1] == REGION_WEIGHT
    # the region holds each name once: "split" once more than in the page's own text
    assert len(page.terms["split"]) == len(plain.terms["split"]) + 1


def test_api_names_of_other_generators():
    markup = b"""<html><body>
    <dl><dt id="GUC-LC-COLLATE"><span class="term"><code class="varname">lc_collate</code>
      (<code class="type">string</code>)</span></dt><dd>Collation.</dd></dl>
    <span id="s-std-setting-CACHES"></span><span id="std-setting-CACHES"></span><h3>CACHES</h3>
    <dt class="sig sig-object std" id="confval-html_theme">html_theme</dt>
    <section id="module-sphinx.builders.xml"><h2>XML</h2></section>
    <dt id="term-generic-view">generic view</dt><dt id="id3">x</dt>
    <dl class="function"><dt id="c.PyFloat_CheckExact">int PyFloat_CheckExact()</dt></dl>
    </body></html>"""
    assert defined_names(markup) == ["c.PyFloat_CheckExact", "sphinx.builders.xml", "CACHES",
                                     "html_theme", "lc_collate"]


def test_api_names_skip_what_is_not_an_indexable_html_page():
    assert html("<p>text</p>", config=with_plugins(API)) == html("<p>text</p>")
    config = dataclasses.replace(with_plugins(API))
    noindex = ('<html><head><meta name="robots" content="noindex"></head><body>'
               '<dt id="shlex.split">split</dt></body></html>')
    assert not any(w.startswith("api:") for w in html(noindex, config=config).meta_words)
    assert ApiNamesPlugin().name == "api"


def test_module_and_target_anchors_begin_a_word() -> None:
    """``id=`` must be an attribute of its own (``data-id`` is one, ``grid`` or ``xid`` not),
    wherever the anchor stands in the markup; definition terms need no word before them."""
    markup = (b'<span xid="module-not.this"></span><div grid="std-setting-NOPE"></div>'
              b'<p data-id="module-kept.one">x</p>text<dt id="os.path.join">join</dt>'
              b'<span id="envvar-PYTHONPATH"></span>')
    assert defined_names(markup) == ["os.path.join", "kept.one", "PYTHONPATH"]
    assert defined_names(b'id="module-first"') == ["first"]  # at the very start


def test_api_names_are_defines_keys_with_their_last_components():
    """Each defined name is a ``defines:`` key as written (lower case, not stemmed), and a
    dotted name's last two and three components are keys too (issue 36: ``Persistent.merge``
    asks for ``celery.worker.state.Persistent.merge``)."""
    markup = ('<html><body><dl><dt id="celery.worker.state.Persistent.merge">merge()</dt>'
              '<dd>Merge.</dd></dl><span id="std-setting-CACHES"></span><h2>CACHES</h2>'
              '</body></html>')
    words = set(html(markup, config=with_plugins(API)).meta_words)
    assert {"defines:celery.worker.state.persistent.merge", "defines:state.persistent.merge",
            "defines:persistent.merge", "defines:caches"} <= words
    assert "defines:merge" not in words  # one component of a dotted name is too many pages'
    assert "api:celery.worker.state.persistent.merge" in words  # the api: words unchanged
