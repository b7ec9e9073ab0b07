"""The scale benchmark's synthetic web (bench/synthetic_corpus.py); the whole benchmark runs in
tests/integration/bench/test_scale_bench.py."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import synthetic_corpus as sc  # noqa: E402

from indexer.core.text import TextAnalyzer  # noqa: E402
from ranking.core.query.parser import QueryParser  # noqa: E402


def test_words_are_their_own_terms() -> None:
    """Documents carry the words as terms unanalysed, so the analyser must leave every word
    as it is: else a query would ask for a stem the index does not hold."""
    analyzer = TextAnalyzer()
    ranks = [*range(3000), *range(10**6, 10**6 + 500), sc.VOCABULARY - 1]
    assert all(analyzer.terms(sc.spell(r), "en") == [sc.spell(r)] for r in ranks)
    assert len({sc.spell(r) for r in ranks}) == len(ranks)


def test_pages_depend_on_seed_and_number_only() -> None:
    small, big = sc.Corpus(2000), sc.Corpus(50_000)
    assert small.page_words(123) == big.page_words(123)
    assert small.hosts.url(123) == big.hosts.url(123)
    assert sc.query_mix(small) == sc.query_mix(big)
    assert sc.Corpus(2000, seed=7).page_words(123) != small.page_words(123)


def test_page_document_is_the_crawlers_page_document() -> None:
    corpus = sc.Corpus(2000)
    page = corpus.page(17)
    doc = sc.page_document(page)
    assert doc.url == page.url and doc.length == len(page.words)
    assert all(list(doc.terms[w]) == [i for i, v in enumerate(page.words) if v == w]
               for w in page.words)
    assert f"site:{page.host}" in doc.meta_words
    assert {f"link:{link.url}" for link in page.links} <= set(doc.meta_words)
    assert doc.summary["body"].split() == list(page.words[page.title_len:])
    assert 0 < len(page.links) <= 50


def test_query_mix_kinds_and_words_parse_unchanged() -> None:
    corpus = sc.Corpus(5000)
    queries = sc.query_mix(corpus, per_kind=10)
    assert [len(q.split()) for q in queries[:30]] == [1] * 10 + [2] * 10 + [3] * 10
    assert all(q.startswith('"') and q.endswith('"') for q in queries[30:])
    parser = QueryParser(TextAnalyzer())
    for q in queries[:30]:
        assert parser.parse(q).disjuncts[0].terms == tuple(q.split())
