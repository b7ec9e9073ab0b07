"""The scale benchmark's synthetic web (bench/synthetic_corpus.py) and one whole run of
bench/scale_bench.py at a tiny size, in real processes (writer, dictionary updater)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import synthetic_corpus as sc  # noqa: E402

from indexer.core.text import TextAnalyzer  # noqa: E402
from ranking.core.query import QueryParser  # noqa: E402


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


@pytest.mark.timeout(120)
def test_scale_bench_runs_and_prints_its_targets(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "scale_bench.py"), "--docs", "300,600",
         "--runs", "1", "--work", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for name in ("600_1shard", "600_2shards", "300_1shard"):
        for figure in ("documents", "build", "bytes_per_doc", "writer_peak_rss",
                       "updater_peak_rss", "open", "query_p50", "query_p95", "query_p99",
                       "query_phrase_p95", "query_one_word_p50"):
            assert any(line.startswith(f"{name}_{figure}") for line in lines), (name, figure)
    assert "600_1shard_documents: 600 docs" in lines
    assert "600_2shards_documents: 600 docs" in lines
    targets = [line for line in lines if line.startswith("target: ")]
    assert len(targets) == 3
    assert all(re.search(r" (met|NOT met)$", t) for t in targets)
    assert not list(tmp_path.iterdir())  # bundles removed without --keep
