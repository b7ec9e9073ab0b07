"""Classifier scores as a rank score: the scores a crawl stored in each doc_map entry, by
classifier slot, times Page Options' weights, added as the ``classifier`` bonus beside Doc
Rank (values worked out by hand)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from .helpers import index_document, text_doc

# (url, scores by slot): slot 1 is the classifier weighed below
PAGES = [
    ("https://a.example/plain", ()),                 # crawled without classifiers
    ("https://b.example/one-slot", (0.9,)),           # only slot 0
    ("https://c.example/low", (0.2, 0.25)),
    ("https://d.example/high", (0.0, 0.75)),
    ("https://e.example/wide", (0.5, 0.5, 0.125)),
]
OPTIONS = SearchOptions(link_score_weight=0.0)


def bundle(tmp_path) -> IndexBundleReader:
    docs = [replace(index_document(text_doc(url, "Garden shed", "a garden shed for tools")),
                    classifier_scores=scores) for url, scores in PAGES]
    with IndexBundleWriter(tmp_path / "b", BundleConfig(max_partition_docs=2)) as writer:
        writer.append(docs)  # three partitions: the scores are read in each
    return IndexBundleReader(tmp_path / "b")


def bonuses(reader, weights) -> dict[str, float]:
    found = Searcher([LocalShard(reader)], replace(OPTIONS, classifier_weights=weights)) \
        .search("garden shed", num=10)
    return {r.url: r.explanation["bonuses"]["classifier"] for r in found.results}


def test_weight_times_the_score_of_each_slot(tmp_path):
    reader = bundle(tmp_path)
    assert bonuses(reader, (0.0, 2.0)) == pytest.approx({
        "https://a.example/plain": 0.0, "https://b.example/one-slot": 0.0,
        "https://c.example/low": 0.5, "https://d.example/high": 1.5,
        "https://e.example/wide": 1.0})
    # several slots add up; weights past an entry's last score count nothing
    assert bonuses(reader, (1.0, 2.0, 8.0)) == pytest.approx({
        "https://a.example/plain": 0.0, "https://b.example/one-slot": 0.9,
        "https://c.example/low": 0.7, "https://d.example/high": 1.5,
        "https://e.example/wide": 0.5 + 1.0 + 1.0})


def test_no_weights_no_bonus_and_a_weight_reorders(tmp_path):
    reader = bundle(tmp_path)
    assert set(bonuses(reader, ()).values()) == {0.0}
    assert set(bonuses(reader, (0.0, 0.0)).values()) == {0.0}
    heavy = Searcher([LocalShard(reader)], replace(OPTIONS, classifier_weights=(0.0, 50.0)))
    urls = [r.url for r in heavy.search("garden shed", num=10).results]
    assert urls[:3] == ["https://d.example/high", "https://e.example/wide",
                        "https://c.example/low"]
