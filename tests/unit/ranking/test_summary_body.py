"""Summaries read up to their body, and snippets from the body of a page whose description
holds no query word (whole-page indexing): ranking.core.display.summary, LocalShard.snippet_summaries
and the pipeline, over real bundles."""

from __future__ import annotations

import json
import random
import zlib

import pytest

from crawler.core.processing.indexing import page_summary
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.reader import IndexBundleReader
from ranking.core.display.snippets import query_words, snippet, stored_body_windows
from ranking.core.display.summary import StoredSummary
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from tests.unit.ranking.helpers import build, text_doc

FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. "


def _gzip(summary: dict) -> bytes:
    data = json.dumps(summary, separators=(",", ":"), ensure_ascii=False).encode()
    return zlib.compress(data, 4, wbits=31)


BODY = " ".join(["plain", "caf\u00e9", '"quoted"', "back\\slash", "tab\there", "\u65e5\u672c",
                 "x" * 40] * 900)


@pytest.mark.parametrize("size", [1, 7, 100, 8192])
def test_body_chunks_give_the_body_back(size):
    summary = {"url": "u", "title": "t", "description": "d", "body": BODY}
    stored = StoredSummary.of(_gzip(summary))
    assert stored.has_body and stored.summary == {"url": "u", "title": "t", "description": "d"}
    assert "".join(stored.body_chunks(size)) == BODY


def test_a_nested_body_key_is_not_the_body():
    summary = {"url": "u", "title": "t", "fields": {"a": "1", "body": "scraped"},
               "safe": True, "body": "the page text"}
    stored = StoredSummary.of(_gzip(summary))
    assert stored.summary == {k: v for k, v in summary.items() if k != "body"}
    assert "".join(stored.body_chunks()) == "the page text"
    without = {k: v for k, v in summary.items() if k != "body"}
    plain = StoredSummary.of(_gzip(without))
    assert not plain.has_body and plain.summary == without and list(plain.body_chunks()) == []


def test_reading_the_head_does_not_inflate_the_body():
    body = FILLER * 20_000  # about 1.1 MB of text, compressed to a few kB
    stored = StoredSummary.of(_gzip({"url": "u", "title": "t", "description": "d",
                                     "body": body}))
    assert stored.summary["description"] == "d"
    assert len(stored._pending) < 64_000  # only the first inflated steps
    first = next(stored.body_chunks(4096))
    assert body.startswith(first) and len(first) < 10_000


def test_page_summary_stores_the_body_then_the_links_last():
    html = ("<html><head><title>Flask quickstart</title></head><body><h1>Quickstart</h1>"
            + "".join(f"<p>{FILLER} Sentence {i} about routes.</p>" for i in range(80))
            + '<p>Use url_for to build a <a href="/api/">URL</a> to a function.</p>'
            + "</body></html>")
    page = PageProcessor().process(FetchedPage("https://flask.test/quickstart/", html.encode(),
                                               200, {"Content-Type": "text/html"}))
    summary = page_summary(page)
    assert "body" in summary  # whole pages are indexed by default
    assert list(summary)[-2:] == ["body", "links"] and "url_for" in summary["body"]
    stored = StoredSummary.of(_gzip(summary), until_links=True)
    assert "links" not in stored.summary and "body" not in stored.summary
    assert stored.summary["content_hash"] == summary["content_hash"]  # every key before
    assert "".join(stored.body_chunks()) == summary["body"]


LINKS = [["https://a.test/x", 'a "quoted" link'], ["https://a.test/y", "back\\slash ] }"]]


@pytest.mark.parametrize("size", [1, 7, 100, 8192])
def test_the_body_ends_where_the_links_begin(size):
    summary = {"url": "u", "title": "t", "description": "d", "fields": {"body": "scraped"},
               "body": BODY, "links": LINKS}
    stored = StoredSummary.of(_gzip(summary), until_links=True)
    assert stored.summary == {"url": "u", "title": "t", "description": "d",
                              "fields": {"body": "scraped"}}
    assert "".join(stored.body_chunks(size)) == BODY
    assert "".join(StoredSummary.of(_gzip({**summary, "body": ""})).body_chunks()) == ""


def test_an_older_summary_is_read_up_to_its_links():
    """Indexes written before the links moved: links, then more keys, the body last."""
    summary = {"url": "u", "title": "t", "description": "d", "robot_metas": [],
               "links": LINKS, "location": "", "fields": {"a": "1", "body": "scraped"},
               "content_hash": "ab", "body": BODY}
    stored = StoredSummary.of(_gzip(summary), until_links=True)
    assert stored.summary == {"url": "u", "title": "t", "description": "d", "robot_metas": []}
    assert stored.has_body and "".join(stored.body_chunks(100)) == BODY
    whole = StoredSummary.of(_gzip(summary))
    assert whole.summary == {k: v for k, v in summary.items() if k != "body"}
    no_body = {k: v for k, v in summary.items() if k != "body"}
    plain = StoredSummary.of(_gzip(no_body), until_links=True)
    assert plain.has_body and list(plain.body_chunks()) == [] and not plain.has_body


def _stretches(body: str, words: list[str]) -> list[str]:
    query = query_words(words)
    stored = StoredSummary.of(_gzip({"url": "u", "title": "t", "description": "d",
                                     "body": body, "links": []}))
    return list(stored.body_stretches(query.raw, 30, 30, reach=query.reach))


def test_body_stretches_are_made_at_word_starts_only():
    body = "the host posted most costs. " * 400 + "Set os.pathsep here. " + FILLER * 50
    got = _stretches(body, ["os", "pathsep"])
    assert len(got) == 1 and "os.pathsep" in got[0] and got[0] in body


def test_body_stretches_see_words_after_escapes_and_folded_letters():
    body = FILLER * 200 + 'a "quoted"\nline\nos\tpath ' + FILLER * 200 + \
        "\u212aelvin degrees " + FILLER * 200
    after_escape = _stretches(body, ["os"])  # (and a stretch around the Kelvin sign)
    assert "\nos\t" in after_escape[0]
    folded = _stretches(body, ["kelvin"])
    assert len(folded) == 1 and "\u212aelvin" in folded[0]
    assert "<b>\u212aelvin</b>" in snippet("d", ["kelvin"], SearchOptions(),
                                          excerpt=body_excerpt(body, ["kelvin"]))


def body_excerpt(body: str, words: list[str]) -> str:
    stored = StoredSummary.of(_gzip({"url": "u", "title": "t", "description": "d",
                                     "body": body, "links": LINKS}))
    return stored_body_windows(stored, words, SearchOptions())


def _noise(n: int, seed: int = 7) -> str:
    """Text that does not compress away (so inflating it is measurable)."""
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(2, 9)))
                    for _ in range(n))


def test_a_body_is_read_only_a_little_past_its_first_window():
    body = "Feed the zebra early. " + _noise(200_000) + " The zebra sleeps."
    member = _gzip({"url": "u", "title": "t", "description": "d", "body": body, "links": []})
    stored = StoredSummary.of(member)
    excerpt = stored_body_windows(stored, ["zebra"], SearchOptions())
    assert "zebra early" in excerpt and "sleeps" not in excerpt
    # the rest of the member was never inflated
    assert stored._inflater.unread > len(member) * 0.9
    # a lone window is widened to the snippet's length (to the text around it)
    assert len(excerpt) > SearchOptions().description_length * 0.8


def test_body_excerpts_of_non_ascii_words_read_chunks():
    body = FILLER * 300 + "Un café noir. " + FILLER * 10
    assert "café" in body_excerpt(body, ["café"])


def _shard(tmp_path, docs) -> LocalShard:
    return LocalShard(build(tmp_path / "b", docs))


def _page(url: str, title: str, description: str, body: str, **kw):
    doc = text_doc(url, title, f"{description} {body}", **kw)
    summary = dict(doc.summary)
    summary["description"] = description
    summary["body"] = body
    return type(doc)(doc.url, doc.words, doc.meta, doc.doc_type, doc.title_len, summary,
                     doc.text_key)


def test_snippet_comes_from_the_body_when_the_description_lacks_the_word(tmp_path):
    body = FILLER * 300 + "Call url_for with the endpoint name to build a link. " + FILLER * 300
    shard = _shard(tmp_path, [
        _page("https://flask.test/quickstart/", "Quickstart", "A minimal Flask application.",
              body),
        _page("https://flask.test/api/", "API", "The url_for function builds links.",
              FILLER * 10)])
    results = Searcher([shard]).search("url_for").results
    by_url = {r.url: r for r in results}
    quick = by_url["https://flask.test/quickstart/"].snippet
    assert "<b>url_for</b>" in quick and "Lorem ipsum dolor sit amet, consectetur" not in \
        quick.split("<b>")[0][:-40]
    # a description holding the word is used as it is (its body is not read)
    assert "The <b>url_for</b> function builds links." in by_url["https://flask.test/api/"].snippet
    got = shard.summaries([bytes.fromhex(r.doc_id) for r in results])
    assert all("body" not in s and "body_excerpt" not in s for s in got)


def test_old_summaries_without_body_still_snippet(tmp_path):
    shard = _shard(tmp_path, [text_doc("https://a.test/", "Title", FILLER + "the zebra grazes")])
    (result,) = Searcher([shard]).search("zebra").results
    assert "<b>zebra</b>" in result.snippet


def test_reader_summary_gzip_is_the_stored_member(tmp_path):
    reader: IndexBundleReader = build(tmp_path / "b", [text_doc("https://a.test/", "T", "x y")])
    shard = LocalShard(reader)
    (result,) = Searcher([shard]).search("x").results
    doc_id = bytes.fromhex(result.doc_id)
    path, member = reader.summary_gzip(doc_id)
    assert json.loads(zlib.decompress(member, wbits=31)) == reader.summary(doc_id)
    assert reader.summary_gzip(b"\0" * 24) is None
