"""indexer.core.signals.phrase_counting: a bundle's phrase counts, each finished partition's
phrases worked out once and cached, equal to reading every summary of the bundle."""

from __future__ import annotations

import dataclasses
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import indexer.core.signals.phrase_counting as counting
from crawler.core.processing.indexing import to_index_documents
from indexer.core.bundle.member_scan import iter_member_summaries
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.ids import DocType
from indexer.core.signals.phrases import phrase_hash, text_phrases
from indexer.core.text import TextAnalyzer

from ..linkgraph.helpers import page
from .test_phrases import SITE

MORE = [(f"https://flask.example/more{i}.html",
         f"<title>Request Context {i % 3} | Flask Documentation</title><p>text {i}</p>"
         f'<a href="/app{i % 4}.html">Application Context</a>'
         f'<a href="/more{i + 1}.html">Request context lifetime</a>') for i in range(30)]


def _write(path: Path) -> Path:
    """Pages and link documents in several partitions; the first page stored again, with a new
    title, in the last partition (only that copy counts)."""
    documents = [doc for url, body in SITE + MORE for doc in to_index_documents(page(url, body))]
    again = dataclasses.replace(documents[0], summary={**documents[0].summary,
                                                       "title": "Blueprint Factories"})
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=40)) as writer:
        writer.append(documents)
        writer.append([again])
    return path


def _reference(path: Path) -> Counter:
    """Every summary read, each doc id once (newest copy): the counts as the lexicon defines
    them (a text counts a phrase once)."""
    analyzer = TextAnalyzer()
    counts: Counter = Counter()
    with IndexBundleReader(path) as reader:
        for doc_type, _, summary in iter_member_summaries(reader):
            if doc_type == DocType.LOCATION or not summary:
                continue
            text = summary.get("description") if doc_type == DocType.LINK else summary.get("title")
            lang = str(summary.get("lang") or "en")
            for phrase in text_phrases(str(text or ""), lang, analyzer,
                                       analyzer.stop_terms(lang)):
                counts[phrase_hash(phrase)] += 1
    return counts


def _as_counter(counts) -> Counter:
    return Counter(dict(zip(counts.hashes.tolist(), counts.counts.tolist(), strict=True)))


def test_counts_equal_reading_every_summary_with_and_without_the_cache(tmp_path, monkeypatch):
    bundle = _write(tmp_path / "b")
    expected = _reference(bundle)
    first = counting.count_bundle_phrases(bundle)
    with IndexBundleReader(bundle) as reader:
        numbers = [p.number for p in reader.partitions]
    cached = sorted(p.name for p in (bundle / counting.CACHE_DIR).iterdir())
    assert len(numbers) >= 3
    # finished partitions are cached, the active one is not
    assert cached == [f"partition_{n}.npz" for n in numbers[:-1]]
    analysed: list[int] = []
    analyse = counting._analyse
    monkeypatch.setattr(counting, "_analyse",
                        lambda reader, number, analyzer: analysed.append(number)
                        or analyse(reader, number, analyzer))
    second = counting.count_bundle_phrases(bundle)
    assert analysed == [numbers[-1]]  # only the active partition is read again
    for counts in (first, second):
        assert _as_counter(counts) == expected
        assert counts.documents == first.documents
        assert counts.texts == first.texts
    assert expected[phrase_hash(["blueprint", "factori"])] >= 1  # the newer copy's title


@pytest.mark.parametrize("damage", ["garbage", "other_partition", "old_version"])
def test_a_cache_that_does_not_fit_is_worked_out_again(tmp_path, damage):
    bundle = _write(tmp_path / "b")
    expected = _reference(bundle)
    counting.count_bundle_phrases(bundle)
    folder = bundle / counting.CACHE_DIR
    target = folder / "partition_0.npz"
    if damage == "garbage":
        target.write_bytes(b"not a zip file")
    elif damage == "other_partition":
        shutil.copy(folder / "partition_1.npz", target)
    else:
        with np.load(target) as data:
            arrays = dict(data)
        arrays["version"] = arrays["version"] + 1
        np.savez(target, **arrays)
    assert _as_counter(counting.count_bundle_phrases(bundle)) == expected
    with IndexBundleReader(bundle) as reader:  # and the cache is right again
        assert counting._load(target) is not None
        assert counting._same_ids(counting._load(target).ids, reader.doc_map(0).member_ids)
