"""A shard's query-independent caches (decoded lists with their position regions, url
features, result heads) give exactly the candidates and results of a shard without them."""

from __future__ import annotations

import random

import numpy as np
import pytest

from indexer.core.ids import DocType
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from .helpers import Doc, build, text_doc

WORDS = ("thread", "queue", "lock", "pool", "event", "python", "docs", "library", "timer")
QUERIES = ("thread", "thread queue", "lock pool event", "python thread", "docs library",
           "queue | timer", "thread -lock", '"thread queue"', "library timer thread",
           "site:docs.python.org thread", "nothingmatches")


class UncachedShard(LocalShard):
    """Every list decoded block by block on every query, url items recomputed, heads,
    summaries, redirect sources and term statistics read."""

    DECODED_POSTINGS = 0
    HEAD_CACHE = 0
    DOCUMENT_CACHE = 0

    def bonuses(self, inputs):
        self._url_features.clear()
        return super().bonuses(inputs)

    def collection_stats(self):
        return self.reader.collection_stats()


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    rnd = random.Random(11)
    docs = []
    for i in range(240):
        host = ("docs.python.org", "thread.test", "www.queue.example")[i % 3]
        path = "/".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 3)))
        title = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 4)))
        body = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 40)))
        docs.append(text_doc(f"https://{host}/{path}?p={i}", title, body))
    for i in range(30):  # anchor text folded into pages
        url = docs[i].url
        docs.append(Doc(url, ("thread", "queue"), doc_type=DocType.LINK,
                        summary={"url": url, "title": url, "description": "thread queue",
                                 "source": f"https://x.test/{i}", "kind": "a"}))
    return build(tmp_path_factory.mktemp("caches") / "b", docs, partition_docs=70)


def test_candidates_equal_with_and_without_caches(reader):
    cached, plain = LocalShard(reader), UncachedShard(reader)
    a, b = Searcher([cached]), Searcher([plain])
    for _ in range(2):  # the second round reads every cache
        for q in QUERIES:
            parsed = a.parser.parse(q)
            got = cached.candidates(q, parsed, 200, a.options)
            want = plain.candidates(q, parsed, 200, b.options)
            for name in ("doc_ids", "partition", "index", "doc_rank", "relevance", "proximity",
                         "doc_length", "freq", "term_relevance", "bonuses"):
                assert np.array_equal(getattr(got, name), getattr(want, name)), (q, name)
            ra = a.search(q, num=10, snippets=False)
            rb = b.search(q, num=10, snippets=False)
            assert [(r.url, r.title, r.score) for r in ra.results] == \
                [(r.url, r.title, r.score) for r in rb.results], q
    assert cached._decoded and any("region_at" in d.memo for d in cached._decoded.values())
    assert all(d.docs == 0 for d in plain._decoded.values())  # only empty lists


def test_kept_collection_stats_follow_the_reader(tmp_path):
    docs = [text_doc(f"https://s.test/{i}", f"page {i}", "thread queue " * (i + 1))
            for i in range(5)]
    shard = LocalShard(build(tmp_path / "s", docs))
    assert shard.collection_stats() == shard.reader.collection_stats()
    assert shard.collection_stats() is shard.collection_stats()
    shard.reader.refresh()  # a new snapshot: the statistics are summed again
    kept = shard.collection_stats()
    assert kept == shard.reader.collection_stats() and shard._stats[0] is shard.reader.partitions
