"""The common phrase bonus in search: a query whose words form a phrase common in the crawl's
titles and anchor texts prefers the pages holding them in that order; other queries are
unchanged. Bundles are written from HTML by the crawler's page processor."""

from __future__ import annotations

from dataclasses import replace

import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.runtime.workdir import phrases_path
from indexer.core.signals.phrase_counting import write_crawl_phrases
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from ranking.page import explanation_rows

from ..indexer.test_phrases import html
from ..linkgraph.helpers import write_bundle

OUT = "https://docs.test/notes-b.html"
IN = "https://docs.test/notes-a.html"
PAGES = [
    # OUT comes first, so it has the higher Doc Rank; otherwise the two pages are alike (same
    # words, same length, the query's words side by side), except for the words' order
    (OUT, html("Notes", "The context request handler runs first, then the rest follows.")),
    (IN, html("Notes", "The request context handler runs first, then the rest follows.")),
    ("https://docs.test/ctx.html", html("The Request Context", "How it works.")),
    ("https://docs.test/", html("Contents", "Start here.",
                                {"https://docs.test/ctx.html": "Request context"})),
]


def _ranks(result, urls):
    order = [r.url for r in result.results]
    return [order.index(u) for u in urls]


@pytest.fixture
def bundle(tmp_path):
    return write_bundle(tmp_path / "qs0" / "IndexData1", PAGES)


def test_common_phrase_prefers_the_words_in_order(bundle):
    with IndexBundleReader(bundle) as reader:
        searcher = Searcher([LocalShard(reader)])
        before = searcher.search("request context")
        out_rank, in_rank = _ranks(before, [OUT, IN])
        assert out_rank < in_rank  # no lexicon yet: Doc Rank decides between the two
        write_crawl_phrases([bundle])  # "request context": a title and an anchor text
        after = searcher.search("request context")  # the same searcher: no restart
        out_rank, in_rank = _ranks(after, [OUT, IN])
        assert in_rank < out_rank
        by_url = {r.url: r for r in after.results}
        bonus = SearchOptions().common_phrase_bonus  # the default, the query's one phrase held
        assert by_url[IN].explanation["bonuses"]["common_phrase"] == pytest.approx(bonus)
        assert by_url[OUT].explanation["bonuses"]["common_phrase"] == 0.0
        rows = dict(explanation_rows(by_url[IN].explanation)[0])
        assert f"common phrase {bonus:g}" in rows["Bonuses"]
        # the bonus is a Page Options weight: 0 turns it off
        off = Searcher([LocalShard(reader)], SearchOptions(common_phrase_bonus=0.0))
        assert _ranks(off.search("request context"), [OUT, IN]) == _ranks(before, [OUT, IN])


def test_a_query_without_a_common_phrase_is_unchanged(bundle):
    with IndexBundleReader(bundle) as reader:
        searcher = Searcher([LocalShard(reader)])
        queries = ["context handler", "handler request", "request", "rest follows",
                   "context request"]
        before = [searcher.search(q) for q in queries]
        write_crawl_phrases([bundle])
        assert phrases_path(bundle).exists()
        for query, old in zip(queries, before, strict=True):
            new = searcher.search(query)
            assert [(r.url, r.score) for r in new.results] == \
                [(r.url, r.score) for r in old.results], query
            assert all(r.explanation["bonuses"]["common_phrase"] == 0.0 for r in new.results)


def test_phrase_split_by_a_meta_word_or_stop_word_is_not_a_phrase(bundle):
    with IndexBundleReader(bundle) as reader:
        write_crawl_phrases([bundle])
        searcher = Searcher([LocalShard(reader)], replace(SearchOptions(), proximity_weight=0))
        for query in ("request site:docs.test context", "request the context"):
            found = searcher.search(query)
            assert found.results, query
            assert all(r.explanation["bonuses"]["common_phrase"] == 0.0
                       for r in found.results), query
