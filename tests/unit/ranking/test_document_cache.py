"""What a shard keeps of the documents it read (ranking.core.shard.doc_cache), and what it does with a
stored body it cannot inflate, over real bundles."""

from __future__ import annotations

import random

from indexer.core.bundle.reader import IndexBundleReader
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.doc_cache import DocumentCache
from ranking.core.shard.local import LocalShard
from tests.unit.ranking.helpers import build, text_doc


def test_the_least_recently_used_entry_goes_first():
    cache: DocumentCache[str, int] = DocumentCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    reads = []
    assert cache.load("d", lambda key: reads.append(key) or 4) == 4
    assert cache.load("d", lambda key: reads.append(key) or 5) == 4
    assert reads == ["d"] and len(cache) == 2
    off: DocumentCache[str, int] = DocumentCache(0)
    off.put("a", 1)
    assert off.get("a") is None and len(off) == 0


def _words(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(7))
                    for _ in range(n))


def _page(url: str, description: str, body: str):
    doc = text_doc(url, "Reference", f"{description} {body}")
    summary = dict(doc.summary, description=description, body=body)
    return type(doc)(doc.url, doc.words, doc.meta, doc.doc_type, doc.title_len, summary,
                     doc.text_key)


BODY = f"{_words(3000, 1)} the zebra grazes here {_words(3000, 2)} an okapi too {_words(50, 3)}"


def test_summaries_are_read_once_and_body_excerpts_made_for_each_query(tmp_path):
    shard = LocalShard(build(tmp_path / "b", [
        _page("https://a.test/ref", "A reference page.", BODY)]))
    reads = []
    summary_gzip = shard.reader.summary_gzip
    shard.reader.summary_gzip = lambda doc_id: reads.append(doc_id) or summary_gzip(doc_id)
    searcher = Searcher([shard])
    first = searcher.search("zebra").results[0].snippet
    assert "<b>zebra</b> grazes" in first and len(reads) == 1  # the head, read on to the body
    again = searcher.search("zebra").results[0].snippet
    assert again == first and len(reads) == 2  # the head is kept: the member read for its body
    other = searcher.search("okapi").results[0].snippet
    assert "<b>okapi</b> too" in other and len(reads) == 3
    assert "<b>reference</b>" in searcher.search("reference").results[0].snippet
    assert len(reads) == 3  # the description holds the word: no body, no member read


def test_a_body_that_cannot_be_inflated_leaves_the_description(tmp_path):
    path = tmp_path / "b"
    reader = build(path, [_page("https://a.test/ref", "A reference page.", BODY)])
    (result,) = Searcher([LocalShard(reader)]).search("reference").results
    blob, member = reader.summary_gzip(bytes.fromhex(result.doc_id))
    reader.close()
    data = bytearray(blob.read_bytes())
    at = data.find(member)
    assert at >= 0
    for i in range(at + len(member) // 2, at + len(member) - 8):  # the body's deflate stream
        data[i] ^= 0x5A
    blob.write_bytes(bytes(data))
    shard = LocalShard(IndexBundleReader(path))
    (damaged,) = Searcher([shard]).search("zebra").results
    assert damaged.url == "https://a.test/ref" and damaged.title == "Reference"
    assert "zebra" not in damaged.snippet  # the description, or its start: never an error
