"""The seed's common phrases: the lexicon built from a crawl's titles and anchor texts (real
bundles written from HTML by the crawler's page processor), its file and its loader. The
in-order matching behind the bonus is tests/unit/ranking/test_phrase_scoring.py."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

from indexer.core.runtime.workdir import phrases_path
from indexer.core.signals.phrase_counting import (
    build_phrase_lexicon,
    count_bundle_phrases,
    write_crawl_phrases,
)
from indexer.core.signals.phrases import (
    DEFAULT_MIN_COUNT,
    CachedPhraseLexicon,
    PhraseCounts,
    PhraseLexicon,
    PhraseLexiconError,
    phrase_hash,
    text_phrases,
)
from indexer.core.text import TextAnalyzer
from ranking.core.query.parser import QueryParser

from ..linkgraph.helpers import write_bundle

A = np.array
ANALYZER = TextAnalyzer()
STOP = QueryParser(ANALYZER).stop_terms("en")


def html(title: str, body: str = "", links: dict[str, str] | None = None) -> str:
    anchors = "".join(f'<a href="{u}">{t}</a> ' for u, t in (links or {}).items())
    return f"<html><head><title>{title}</title></head><body><p>{body}</p>{anchors}</body></html>"


SITE = [
    ("https://docs.test/ctx.html", html("The Request Context — Flask Documentation",
                                        "How it works.")),
    ("https://docs.test/app.html", html("The Application Context — Flask Documentation",
                                        "Where the app lives.")),
    ("https://docs.test/", html("Contents", "Start here.",
                                {"https://docs.test/ctx.html": "Request context",
                                 "https://docs.test/app.html": "application context",
                                 "https://docs.test/other.html": "Blueprints and views"})),
]


def test_text_phrases_cut_at_separators_and_stop_words():
    got = text_phrases("The Request Context — Flask Documentation (latest)", "en", ANALYZER,
                       STOP)
    assert got == {("request", "context"), ("flask", "document")}
    assert text_phrases("Views | Flask: a Python web framework", "en", ANALYZER, STOP) == {
        ("python", "web"), ("web", "framework"), ("python", "web", "framework")}
    # contiguous parts of a longer run, 2 to 4 terms; no phrase spans a stop word
    got = text_phrases("request context object lifetime rules and views", "en", ANALYZER, STOP)
    assert ("request", "context", "object", "lifetim") in got
    assert ("context", "object") in got and ("lifetim", "rule") in got
    assert not any(len(p) > 4 for p in got)
    assert not any("and" in p or "view" in p for p in got)
    assert text_phrases("Flask", "en", ANALYZER, STOP) == set()
    # ": , ." cut only before a space: std::collections stays one run
    assert ("std", "collect", "hashmap") in text_phrases("std::collections::HashMap - Rust",
                                                           "en", ANALYZER, STOP)


def test_lexicon_of_a_crawl_from_titles_and_anchors(tmp_path):
    bundle = write_bundle(tmp_path / "b", SITE)
    lexicon = build_phrase_lexicon([bundle])
    # "request context": a title and an anchor; "flask documentation": two titles;
    # "application context": a title and an anchor
    assert lexicon.count_of(["request", "context"]) == 2
    assert lexicon.count_of(["flask", "document"]) == 2
    assert lexicon.count_of(["applic", "context"]) == 2
    # seen once only: not common
    assert lexicon.count_of(["blueprint"]) == 0
    assert lexicon.count_of(["request", "context", "flask"]) == 0  # spans a separator
    assert len(lexicon) == 3
    assert lexicon.meta["min_count"] == DEFAULT_MIN_COUNT
    assert lexicon.meta["texts"] == 3 + 3  # three titles, three anchor texts
    # K = 1 keeps every candidate
    assert build_phrase_lexicon([bundle], min_count=1).count_of(["blueprint", "and"]) == 0
    assert build_phrase_lexicon([bundle], min_count=1).count_of(["the", "request"]) == 0
    with pytest.raises(ValueError):
        build_phrase_lexicon([bundle], min_count=0)


def test_counts_of_shards_merge_as_one_crawl(tmp_path):
    one = write_bundle(tmp_path / "qs0", SITE[:1])
    two = write_bundle(tmp_path / "qs1", SITE[1:])
    whole = build_phrase_lexicon([write_bundle(tmp_path / "all", SITE)])
    merged = PhraseCounts.merge([count_bundle_phrases(one), count_bundle_phrases(two)])
    lexicon = merged.lexicon()
    assert lexicon.hashes.tolist() == whole.hashes.tolist()
    assert lexicon.counts.tolist() == whole.counts.tolist()
    assert build_phrase_lexicon([one, two]).hashes.tolist() == whole.hashes.tolist()
    # a phrase needs two texts: neither shard alone has "flask documentation" twice
    assert count_bundle_phrases(one).lexicon().count_of(["flask", "document"]) == 0


def test_write_read_round_trip_and_checks(tmp_path):
    bundle = write_bundle(tmp_path / "b", SITE)
    lexicon = write_crawl_phrases([bundle])
    again = PhraseLexicon.load(phrases_path(bundle))
    assert again.hashes.tolist() == lexicon.hashes.tolist()
    assert again.counts.tolist() == lexicon.counts.tolist()
    assert again.lengths.tolist() == lexicon.lengths.tolist() == [2, 2, 2]
    assert again.meta == lexicon.meta
    with pytest.raises(PhraseLexiconError, match="no phrases file"):
        PhraseLexicon.load(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(PhraseLexiconError, match="unreadable"):
        PhraseLexicon.load(bad)
    newer = tmp_path / "newer.npz"
    np.savez(newer, format=np.array("phrases"), version=np.array(99), hashes=np.zeros(0, "u8"),
             counts=np.zeros(0, "u4"), lengths=np.zeros(0, "u1"), meta=np.array("{}"))
    with pytest.raises(PhraseLexiconError, match="newer"):
        PhraseLexicon.load(newer)
    unsorted = tmp_path / "unsorted.npz"
    np.savez(unsorted, format=np.array("phrases"), version=np.array(1),
             hashes=np.array([5, 3], "u8"), counts=np.array([2, 2], "u4"),
             lengths=np.array([2, 2], "u1"), meta=np.array("{}"))
    with pytest.raises(PhraseLexiconError, match="not sorted"):
        PhraseLexicon.load(unsorted)


def test_cached_lexicon_reloads_on_change_and_is_quiet_without_file(tmp_path, caplog):
    path = tmp_path / "phrases.npz"
    cache = CachedPhraseLexicon(path)
    with caplog.at_level(logging.DEBUG, logger="indexer.core.signals.phrases"):
        assert cache.get() is None  # not built yet: the normal state, nothing logged
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    first = PhraseLexicon(A([phrase_hash(["a", "b"])], "u8"), A([2], "u4"), A([2], "u1"))
    first.save(path)
    assert cache.get() is not None and len(cache.get()) == 1
    assert cache.get() is cache.get()  # loaded once per file version
    second = PhraseLexicon(np.sort(A([phrase_hash(["a", "b"]), phrase_hash(["c", "d"])], "u8")),
                           A([2, 3], "u4"), A([2, 2], "u1"))
    second.save(path)
    os.utime(path, ns=(1, 1))  # a new version even within the clock's resolution
    assert len(cache.get()) == 2
    path.write_bytes(b"garbage")
    with caplog.at_level(logging.WARNING, logger="indexer.core.signals.phrases"):
        assert cache.get() is None
        assert cache.get() is None
    assert len([r for r in caplog.records if "unusable" in r.getMessage()]) == 1
    assert "unreadable" in (cache.error or "")


def test_phrases_in_query_runs_keep_the_longest():
    hashes = [phrase_hash(p) for p in (["request", "context"], ["request", "context", "object"],
                                       ["app", "factori"], ["context", "object"])]
    lexicon = PhraseLexicon(np.sort(A(hashes, "u8")), A([2] * 4, "u4"), A([2] * 4, "u1"))
    runs = [("flask", "request", "context", "object"), ("app", "factori"), ("context",)]
    assert lexicon.phrases_in(runs) == [("request", "context", "object"), ("app", "factori")]
    assert lexicon.phrases_in([("request", "context")]) == [("request", "context")]
    assert lexicon.phrases_in([("context", "request")]) == []
    assert PhraseLexicon(np.zeros(0, "u8"), np.zeros(0, "u4"),
                         np.zeros(0, "u1")).phrases_in(runs) == []
