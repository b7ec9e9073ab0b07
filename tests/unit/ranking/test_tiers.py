"""The short barrel (ranking.core.postings.tiers): a query's first n matches plus its first n matches
among fancy hits (title and anchor words), after Brin and Page's hit lists and barrels."""

from __future__ import annotations

from dataclasses import replace

from indexer.core.documents.document import fancy_words
from ranking.core.options import SearchOptions
from ranking.core.postings.tiers import fancy_query
from ranking.core.query.parser import QueryParser
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from .helpers import Doc, build, text_doc

ANSWER = "https://answer.example/guide.html"


def _docs(fancy: bool) -> list[Doc]:
    """40 pages that mention the words in passing, then (crawled last) the page titled with
    them; its title words are fancy hits when ``fancy``."""
    docs = [text_doc(f"https://p{i}.example/page.html", f"Page {i}",
                     "A note on widget assembly with many other words around it.")
            for i in range(40)]
    answer = text_doc(ANSWER, "Widget assembly", "How the parts fit together.")
    if fancy:
        answer = replace(answer, meta=tuple(fancy_words(["widget", "assembl"])))
    return docs + [answer]


def _urls(tmp_path, fancy: bool, exact: bool = False) -> list[str]:
    reader = build(tmp_path / "IndexData1", _docs(fancy))
    options = SearchOptions(min_results_to_group=10, link_score_weight=0.0)
    return [r.url for r in Searcher([LocalShard(reader, exact=exact)], options).search(
        "widget assembly").results]


def test_a_title_match_past_the_first_n_is_a_candidate(tmp_path):
    """The bounded search (``exact=False``) finds it through the short barrel; the default,
    exact search without it (ranking.core.shard.exact)."""
    assert ANSWER not in _urls(tmp_path / "plain", fancy=False)  # the seed's first n only
    assert _urls(tmp_path / "fancy", fancy=True)[0] == ANSWER
    assert _urls(tmp_path / "exact", fancy=False, exact=True)[0] == ANSWER


def test_fancy_query_requires_every_word_as_a_fancy_hit():
    parsed = QueryParser().parse("widget assembly site:answer.example")
    fancy = fancy_query(parsed)
    assert fancy is not None
    (conjunct,) = fancy.disjuncts
    assert conjunct.terms == parsed.disjuncts[0].terms
    assert set(fancy_words(conjunct.terms)) <= set(conjunct.meta)
    assert "site:answer.example" in conjunct.meta
    assert fancy_query(QueryParser().parse("site:answer.example")) is None
