"""The definition and topic bonuses (ranking.core.shard.definitions): a page holding the
``defines:`` or ``topic:`` key of the whole query gets its bonus, in the pruned search as in
the exhaustive one (issue 36)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ranking.core.options import SearchOptions
from ranking.core.query.parser import QueryParser
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.definitions import name_query_key, query_key
from ranking.core.shard.local import LocalShard

from .helpers import build, text_doc
from .test_exact_topk import reference

NAMER = "https://a.test/changelog.html"
DEFINER = "https://b.test/state.html"
SECTION = "https://c.test/decoding.html"


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    docs = [
        # names Persistent.merge often, in passing
        text_doc(NAMER, "Changelog", "persistent merge persistent merge. merge persistent "
                 "state. replication slot replication slot slot replication"),
        # defines celery.worker.state.Persistent.merge, once
        text_doc(DEFINER, "worker state", "Persistent merge. Other words here and there, "
                 "many of them, to make the page long enough. Replication.",
                 meta=("defines:persistent.merge", "defines:state.persistent.merge")),
        # has a section headed "Replication Slots"
        text_doc(SECTION, "Logical decoding", "Concepts. Replication slots keep changes. "
                 "A slot is named. Many other words fill this page to make it long.",
                 meta=("topic:replic_slot",)),
    ]
    reader = build(tmp_path_factory.mktemp("definitions") / "b", docs)
    yield reader
    reader.close()


def urls(reader, query: str, options: SearchOptions) -> list[str]:
    return [r.url for r in Searcher([LocalShard(reader, name="s")], options).search(
        query, snippets=False).results]


def test_the_page_defining_the_name_comes_first(reader) -> None:
    options = SearchOptions()
    assert urls(reader, "Persistent.merge", options)[0] == DEFINER
    off = replace(options, definition_bonus=0.0)
    assert urls(reader, "Persistent.merge", off)[0] == NAMER
    result = Searcher([LocalShard(reader, name="s")], options).search(
        "Persistent.merge", snippets=False).results[0]
    assert result.explanation["bonuses"]["definition"] == options.definition_bonus


def test_the_page_with_the_heading_comes_first(reader) -> None:
    options = SearchOptions(topic_bonus=20.0)
    assert urls(reader, "replication slot", options)[0] == SECTION
    assert urls(reader, "replication slot", replace(options, topic_bonus=0.0))[0] == NAMER


def test_pruned_search_equals_the_exhaustive_one(reader) -> None:
    for options in (SearchOptions(min_results_to_group=1), SearchOptions(topic_bonus=20.0)):
        for query in ("Persistent.merge", "replication slot", "merge"):
            assert urls(reader, query, options) == [
                r.url for r in reference(reader, options).search(query, snippets=False).results]


def test_which_queries_have_a_key() -> None:
    parser = QueryParser()
    assert name_query_key(parser.parse("Persistent.merge")) == "persistent.merge"
    assert name_query_key(parser.parse("CACHES")) == "caches"
    for query in ("replication slot", "CACHES site:b.test", '"CACHES"', "-CACHES"):
        assert name_query_key(parser.parse(query)) is None, query
    assert query_key(parser.parse("Persistent.merge")) == "persist_merg"
    assert query_key(parser.parse("preparing a query")) == "prepar_queri"
    assert query_key(parser.parse("replication slot site:b.test")) == "replic_slot"
    assert query_key(parser.parse('"replication slot"')) is None  # a quoted phrase
    assert query_key(parser.parse("replication | slot")) is None  # two disjuncts
