"""The shard's url features from a partition's url columns (UrlFeatures.of_columns) are those it
reads from the summary heads of a partition without them: the same features in every language,
the same score bounds and the same top 10; and with the columns the first query of a frequent
word reads no summary head, and its region weights decode every doc_map entry at once
(docs/exact-topk.md, section 9)."""

from __future__ import annotations

import random
import shutil
import sys

import numpy as np
import pytest

from indexer.core.bundle.layout import (
    URL_COLUMNS,
    read_partition_manifest,
    write_partition_manifest,
)
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DocType
from indexer.core.partition.doc_map import DocMap
from ranking.core.options import SearchOptions
from ranking.core.postings.iterators import Budget, collect
from ranking.core.postings.plan import build_plan
from ranking.core.query.parser import query_word_terms
from ranking.core.search.pipeline import Searcher
from ranking.core.shard import exact
from ranking.core.shard.local import LocalShard
from ranking.core.shard.regions import PartitionRegions

from .helpers import Doc, build

WORDS = ["run", "dog", "cat", "page", "html", "index", "wiki", "bücher", "the", "a"]
HOSTS = ["www.run-dog.test", "de.wikipedia.org", "127.0.0.7", "bücher.example.de", "cat.co.uk",
         "page.test", "www.the_index.test"]


def corpus(seed: int, n: int = 300) -> list[Doc]:
    """Pages whose urls hold the query words in hosts and paths (with extensions, queries,
    underscores, upper case, non-ASCII words), and link documents under some of them."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        host = rng.choice(HOSTS)
        r = rng.random()
        if r < 0.2:
            path = "/"
        elif r < 0.3:
            path = f"/?q={rng.choice(WORDS)}"
        else:
            segs = [rng.choice(WORDS).title() if rng.random() < 0.3 else rng.choice(WORDS)
                    for _ in range(rng.randint(1, 3))]
            ext = rng.choice([".html", ".HTML", ".php", "", "/", ".pdf", "_running.htm"])
            path = "/" + "/".join(segs) + f"{i}{ext}"
        words = tuple(rng.choices(WORDS, k=rng.randint(2, 30)))
        docs.append(Doc(f"http://{host}{path}", words, title_len=rng.randint(0, 3)))
    for j in range(n // 10):
        target = rng.choice(docs)
        docs.append(Doc(target.url, tuple(rng.choices(WORDS, k=2)), doc_type=DocType.LINK,
                        text_key=f"l{j}"))
    return docs


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """The same crawl twice: as written (with url columns), and with its MANIFESTs naming no
    url columns, as a partition written before them."""
    base = tmp_path_factory.mktemp("urlcols")
    build(base / "with", corpus(7), partition_docs=120).close()
    shutil.copytree(base / "with", base / "without")
    for number in range(3):
        manifest = read_partition_manifest(base / "without", number)
        assert URL_COLUMNS in manifest["files"]
        manifest["files"].pop(URL_COLUMNS)
        write_partition_manifest(base / "without", number, manifest)
    with IndexBundleReader(base / "with") as a, IndexBundleReader(base / "without") as b:
        assert all(a.url_columns(p.number) is not None for p in a.partitions)
        assert all(b.url_columns(p.number) is None for p in b.partitions)
        yield a, b


class Counting:
    """Counts a reader's summary head reads."""

    def __init__(self, reader: IndexBundleReader, monkeypatch) -> None:
        self.reads = 0
        real = reader.summary_head

        def head(partition: int, index: int, size: int = 2048) -> tuple[str, str]:
            self.reads += 1
            return real(partition, index, size)
        monkeypatch.setattr(reader, "summary_head", head)


@pytest.mark.parametrize("one_by_one", [0, 10**6])
@pytest.mark.parametrize("lang", ["en", "de", "fr", ""])
def test_column_features_are_the_summaries(bundles, lang: str, one_by_one: int,
                                           monkeypatch) -> None:
    """The features from the columns, a whole partition at once (UrlFeatures.of_columns) or
    entry by entry (add_columns, a few entries missing, half of them first), are those of
    the summaries' urls."""
    monkeypatch.setattr(LocalShard, "URL_ENTRIES_ONE_BY_ONE", one_by_one)
    with_cols, without = bundles
    a, b = LocalShard(with_cols, name="a"), LocalShard(without, name="b")
    for part in with_cols.partitions:
        every = np.arange(with_cols.doc_map(part.number).n)
        a._features(part.number, every[::2], lang)
        fa = a._features(part.number, every, lang)
        fb = b._features(part.number, every, lang)
        assert fa.known.all() and fb.known.all()
        for name in ("root", "cld", "wiki", "slashes", "host_len", "path_len"):
            assert np.array_equal(getattr(fa, name), getattr(fb, name)), name
        words_a = {v: k for k, v in a._word_ids.items()}
        words_b = {v: k for k, v in b._word_ids.items()}
        for at, length in (("host_at", "host_len"), ("path_at", "path_len")):
            for i in every.tolist():
                sa, sb = getattr(fa, at)[i], getattr(fb, at)[i]
                n = int(getattr(fa, length)[i])
                assert [words_a[w] for w in fa.words[sa:sa + n].tolist()] == \
                    [words_b[w] for w in fb.words[sb:sb + n].tolist()]
        assert fa.root.any() and fa.cld.any() and fa.wiki.any() and fa.path_len.any()


QUERIES = ["run", "dog cat", "html", "page index", '"run dog"', "wiki", "bücher", "the",
           "cat page html"]


def test_same_bounds_and_top_10_with_and_without_columns(bundles, monkeypatch) -> None:
    monkeypatch.setattr(exact, "SCORE_ALL", 0)  # bounds and pruning on this small index
    with_cols, without = bundles
    options = SearchOptions()
    a, b = LocalShard(with_cols, name="s"), LocalShard(without, name="s")
    for q in QUERIES:
        parsed = Searcher([a], options).parser.parse(q)
        terms, _ = query_word_terms(parsed)
        got = []
        for shard in (a, b):
            plan = build_plan(shard.reader, parsed.disjuncts, Budget(0.0), shard.filter_keys,
                              shard.decoded_list, phrase_filters=False)
            block, _ = collect(plan.root, sys.maxsize)
            got.append(exact._row_bounds(shard, parsed, block, terms, options)[1])
        assert got[0].shape[1] > 0, q
        assert np.array_equal(got[0], got[1]), q
        top = [[(r.url, r.score) for r in Searcher([s], options).search(q, snippets=False)
                .results] for s in (LocalShard(with_cols, name="s"),
                                    LocalShard(without, name="s"))]
        assert top[0] and top[0] == top[1], q


def test_first_query_reads_no_summary_head(bundles, monkeypatch) -> None:
    """The first query of a word most entries hold: no head read with the columns; one per
    bounded entry without them."""
    monkeypatch.setattr(exact, "SCORE_ALL", 0)
    reads = []
    for reader in bundles:
        counter = Counting(reader, monkeypatch)
        shard = LocalShard(reader, name="s")
        parsed = Searcher([shard]).parser.parse("the")
        stats = exact.Pruning()
        with shard.lock:
            exact.exact_matches(shard, parsed, 10, SearchOptions(), stats)
        assert stats.matches > 100
        reads.append(counter.reads)
    assert reads[0] == 0
    assert reads[1] >= 100


def test_regions_decode_every_entry_at_once(bundles, monkeypatch) -> None:
    """A partition's region weights come from its doc_map decoded at once, no
    position_score_list decoded one entry at a time, and are those the entry-by-entry
    decode gives (the path of a doc_map whose bytes the array decoder refuses)."""
    reader, _ = bundles
    calls = [0]
    real = DocMap.position_score_list

    def one(self, index):
        calls[0] += 1
        return real(self, index)
    monkeypatch.setattr(DocMap, "position_score_list", one)
    fast = [PartitionRegions(reader, p.number) for p in reader.partitions]
    assert calls[0] == 0
    monkeypatch.setattr(DocMap, "position_score_columns", lambda self: None)
    slow = [PartitionRegions(reader, p.number) for p in reader.partitions]
    assert calls[0] == sum(reader.doc_map(p.number).n for p in reader.partitions)
    for a, b in zip(fast, slow, strict=True):
        for name in PartitionRegions.__slots__:
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert a.classifier.shape == b.classifier.shape
