"""Zero-result fallback (ranking.core.search.relax): the relaxed queries, and the search over a real
bundle: partial matches ranked by the number of query words, operators honoured, a spelling
correction searched when it has results."""

from __future__ import annotations

import pytest

from indexer.core.text import TextAnalyzer
from ranking.core.query.parser import QueryParser
from ranking.core.search.pipeline import Searcher
from ranking.core.search.relax import MAX_LEVELS, MAX_SUBSETS, relaxations, search_with_fallback
from ranking.core.shard.local import LocalShard
from tests.unit.ranking.helpers import build, text_doc

ANALYZER = TextAnalyzer()
PARSER = QueryParser(ANALYZER)


def relaxed(query: str, absent: frozenset[str] = frozenset()) -> list[str]:
    parsed = PARSER.parse(query)
    return [r.query for r in relaxations(
        query, parsed, lambda w: ANALYZER.query_terms(w, parsed.lang),
        lambda t: 0 if t in absent else 5)]


def test_drop_one_word_then_two():
    levels = relaxed("alpha beta gamma")
    assert levels[0] == ("alpha beta safe:true lang:en | alpha gamma safe:true lang:en | "
                         "beta gamma safe:true lang:en")
    assert levels[1] == "alpha safe:true lang:en | beta safe:true lang:en | " \
                        "gamma safe:true lang:en"


def test_absent_words_are_dropped_first():
    assert relaxed("alpha beta zzzz", absent=frozenset(ANALYZER.query_terms("zzzz", "en")))[0] \
        == "alpha beta safe:true lang:en"


def test_operators_are_kept_in_every_conjunction():
    levels = relaxed('alpha beta -gamma "exact words" site:a.test')
    assert levels[0] == ('alpha -gamma "exact words" site:a.test | '
                         'beta -gamma "exact words" site:a.test')
    assert levels[-1] == '-gamma "exact words" site:a.test'  # the phrase alone


@pytest.mark.parametrize("query", ["alpha | beta gamma", "alpha", "-alpha beta", "site:a.test"])
def test_nothing_to_relax(query):
    assert relaxed(query) == []


def test_bounded_work():
    levels = relaxed(" ".join(f"word{c}" for c in "abcdefghijkl"))
    assert len(levels) <= MAX_LEVELS
    assert all(len(level.split(" | ")) <= MAX_SUBSETS for level in levels)


@pytest.fixture
def searcher(tmp_path):
    docs = [
        text_doc("https://a.test/one", "threading", "threading basics"),
        text_doc("https://a.test/two", "locks", "threading with locks"),
        text_doc("https://a.test/three", "queue", "queue module"),
        text_doc("https://b.test/four", "threading elsewhere", "threading on another host"),
    ]
    return Searcher([LocalShard(build(tmp_path / "b", docs))])


def test_partial_matches_rank_by_words_held(searcher):
    assert searcher.search("threading locks queue").total == 0
    result = search_with_fallback(searcher, "threading locks queue")
    assert result.fallback == "partial" and result.query == "threading locks queue"
    urls = [r.url for r in result.results]
    assert urls[0] == "https://a.test/two"  # two of the three words
    assert set(urls) >= {"https://a.test/one", "https://a.test/three"}


def test_fallback_honours_negation_and_meta_words(searcher):
    result = search_with_fallback(searcher, "threading zebra -locks")
    assert result.fallback == "partial"
    assert "https://a.test/two" not in [r.url for r in result.results]
    assert [r.url for r in result.results]
    sited = search_with_fallback(searcher, "threading zebra site:b.test")
    assert [r.url for r in sited.results] == ["https://b.test/four"]
    nothing = search_with_fallback(searcher, "zebra giraffe site:b.test")
    assert nothing.fallback == "" and not nothing.results


def test_a_correction_with_results_is_searched(searcher):
    result = search_with_fallback(searcher, "threadinng locks",
                                  correct=lambda q: q.replace("threadinng", "threading"))
    assert result.fallback == "corrected" and result.searched == "threading locks"
    assert [r.url for r in result.results] == ["https://a.test/two"]
    # a correction without results: the partial matches of the query as typed
    partial = search_with_fallback(searcher, "threading zebra", correct=lambda q: "zebras")
    assert partial.fallback == "partial"


def test_a_query_with_results_is_untouched(searcher):
    result = search_with_fallback(searcher, "threading locks", correct=lambda q: "queue")
    assert result.fallback == "" and [r.url for r in result.results] == ["https://a.test/two"]
    assert result.as_dict()["fallback"] is None
    assert result.as_dict()["searched"] == "threading locks"
