"""The search pipeline end to end on small bundles: results, grouping, explanations,
paging, time budget, bad syntax."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.core.ids import DocType
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard

from .helpers import Doc, build, text_doc


@pytest.fixture
def searcher(tmp_path):
    docs = [
        text_doc("https://docs.python.org/3/library/threading.html",
                 "threading - Thread-based parallelism",
                 "This module constructs higher-level threading interfaces on top of the "
                 "lower level _thread module."),
        text_doc("https://docs.python.org/3/library/queue.html", "queue - A synchronized queue",
                 "The queue module implements multi-producer, multi-consumer queues useful in "
                 "threaded programming."),
        text_doc("https://docs.python.org/3/library/os.html", "os - Miscellaneous interfaces",
                 "This module provides a portable way of using operating system dependent "
                 "functionality. <script>alert(1)</script>"),
        text_doc("https://mirror.test/threading.html", "threading - Thread-based parallelism",
                 "This module constructs higher-level threading interfaces on top of the "
                 "lower level _thread module."),
        text_doc("https://secret.test/private/page.html", "Secret", "threading secrets", robot_metas=["NOSNIPPET"]),
    ]
    # the mirror has the same words but another url: give it the same text hash as the original
    mirror = docs[3]
    docs[3] = Doc(mirror.url, docs[0].words, title_len=docs[0].title_len, summary=mirror.summary,
                  text_key="threading page")
    docs[0] = Doc(docs[0].url, docs[0].words, title_len=docs[0].title_len,
                  summary=docs[0].summary, text_key="threading page")
    link = Doc("https://docs.python.org/3/library/os.html", ("operating", "system", "os"),
               doc_type=DocType.LINK,
               summary={"url": "https://docs.python.org/3/library/os.html",
                        "title": "https://docs.python.org/3/library/os.html",
                        "description": "operating system os", "source": "https://x/",
                        "kind": "a"})
    reader = build(tmp_path / "b", [*docs, link], partition_docs=3)
    return Searcher([LocalShard(reader)])


def test_known_item_first_with_explanation(searcher):
    res = searcher.search("threading")
    assert res.results[0].url == "https://docs.python.org/3/library/threading.html"
    exp = res.results[0].explanation
    for part in ("doc_rank", "relevance", "proximity", "bonuses"):
        assert part in exp
    assert exp["relevance"]["terms"][0]["term"] == "thread"
    assert exp["score"] == pytest.approx(res.results[0].score)
    total = (exp["doc_rank"]["value"] * exp["doc_rank"]["weight"]
             + exp["relevance"]["value"] * exp["relevance"]["weight"]
             + exp["proximity"]["value"] * exp["proximity"]["weight"]
             + exp["bonuses"]["total"])
    assert total == pytest.approx(res.results[0].score)
    assert "<b>" in res.results[0].title


def test_two_terms_fuse_score_and_proximity_by_rank(tmp_path):
    # both pages hold "module" and "thread"; the first has the higher S (the title holds
    # "thread") with the words far apart, the second has them side by side
    far = ("thread " + "filler words here " * 30 + "module")
    reader = build(tmp_path / "f", [
        text_doc("https://a.test/far.html", "thread notes", far),
        text_doc("https://b.test/near.html", "notes", "a thread module"),
        text_doc("https://c.test/other.html", "other", "nothing to see here"),
    ])
    res = Searcher([LocalShard(reader)]).search("thread module")
    for r in res.results:
        exp = r.explanation
        fusion = exp["fusion"]
        expected = 200 * (2 / (59 + fusion["score_rank"])
                          + SearchOptions().proximity_bonus / (59 + fusion["proximity_rank"]))
        assert r.score == pytest.approx(expected)
        # S is the linear sum of the parts; proximity is not added to it
        s = (exp["doc_rank"]["value"] * exp["doc_rank"]["weight"]
             + exp["relevance"]["value"] * exp["relevance"]["weight"]
             + exp["link_score"]["value"] * exp["link_score"]["weight"]
             + exp["bonuses"]["total"])
        assert fusion["score"] == pytest.approx(s)
        assert exp["proximity"]["weight"] == 0.0
    near = next(r for r in res.results if "near" in r.url).explanation
    far_ = next(r for r in res.results if "far" in r.url).explanation
    # span sum 1/2 on the near page ("thread module" side by side), normalised for length
    px = near["proximity"]
    assert px["span_sum"] == pytest.approx(0.5)
    assert px["value"] == pytest.approx(0.5 * np.log2(1 + px["l_avg"] / px["l_d"]))
    assert near["fusion"]["proximity_rank"] == 0 and far_["fusion"]["proximity_rank"] == 1
    # one term: no fusion, the score is S
    one = Searcher([LocalShard(reader)]).search("thread").results[0]
    assert "fusion" not in one.explanation
    # a proximity weight of 0 leaves proximity out: the score is S
    off = Searcher([LocalShard(reader)], SearchOptions(proximity_weight=0.0)).search(
        "thread module").results[0]
    assert "fusion" not in off.explanation


def test_duplicate_text_grouped(searcher):
    urls = [r.url for r in searcher.search("threading interfaces").results]
    assert "https://docs.python.org/3/library/threading.html" in urls
    assert "https://mirror.test/threading.html" not in urls


def test_raw_turns_grouping_off(searcher):
    urls = [r.url for r in searcher.search("threading interfaces raw:1").results]
    assert "https://mirror.test/threading.html" in urls


def test_escaping_and_nosnippet(searcher):
    res = searcher.search("script")
    assert res.results and "&lt;<b>script</b>&gt;" in res.results[0].snippet
    secret = list(searcher.search("secrets").results)
    assert secret and secret[0].snippet == ""


def test_paging_and_total(searcher):
    all_ = searcher.search("module", num=10)
    page2 = searcher.search("module", num=1, offset=1)
    assert all_.total == len(all_.results) >= 2
    assert page2.results[0].url == all_.results[1].url


def test_bad_syntax_is_a_message(searcher):
    res = searcher.search('"threading interfaces')
    assert any("quote" in m.text for m in res.messages)
    assert res.results
    empty = searcher.search("   ")
    assert empty.results == () and empty.messages


def test_time_budget_marks_partial(tmp_path):
    docs = [Doc(f"https://h.test/{i}", ("a", "b") if i % 7 == 0 else ("a", "c"))
            for i in range(300)]
    reader = build(tmp_path / "b", docs, partition_docs=20)
    res = Searcher([LocalShard(reader)], SearchOptions(intersect_time_budget=1e-9)).search(
        "a b raw:1")
    assert res.partial
    assert any("partial" in m.text for m in res.messages)


def test_sections_of_a_page_are_grouped_under_its_first_result(tmp_path):
    page = "https://docs.python.org/3/library/stdtypes.html"
    docs = [
        text_doc(page, "Built-in Types", "Sets support intersection and union of elements."),
        text_doc(f"{page}#set-types", "Set Types",
                 "A set supports intersection, union and difference.",
                 doc_type=DocType.SUBDOC),
        text_doc(f"{page}#frozenset", "Frozen set", "An immutable set: intersection too.",
                 doc_type=DocType.SUBDOC),
        text_doc("https://docs.python.org/3/library/sets.html", "Sets",
                 "Set intersection in the sets module."),
    ]
    searcher = Searcher([LocalShard(build(tmp_path / "b", docs))])
    full = searcher.search("set intersection", num=10)
    pages = [r.url.partition("#")[0] for r in full.results]
    assert len(pages) == len(set(pages)) == 2  # one result per page
    grouped = next(r for r in full.results if r.url.startswith(page))
    held = {grouped.url, *(url for url, _ in grouped.sections)}
    assert held == {page, f"{page}#set-types", f"{page}#frozenset"}
    assert all(title for _, title in grouped.sections)
    assert grouped.as_dict()["sections"][0]["url"] in held
    # paging: a section of a page shown on an earlier page takes no place on a later one
    second = searcher.search("set intersection", num=1, offset=1)
    assert [r.url.partition("#")[0] for r in second.results] == pages[1:2]
    assert all(url.startswith(pages[1] + "#") for url, _ in second.results[0].sections)
    first = searcher.search("set intersection", num=1)
    assert first.results[0].sections == full.results[0].sections  # a page's sections, whole


def test_a_result_links_to_the_sections_whose_headings_hold_the_query(tmp_path):
    """Sections as answers (issue 36): the page's stored ``sections`` field (anchors and
    headings, written by the sections plugin) gives the links under its result, the most
    specific heading first; none without snippets (only the summary's head is read then)."""
    page = "https://www.postgresql.org/docs/15/logicaldecoding-explanation.html"
    doc = text_doc(page, "Logical Decoding Concepts",
                   "Replication slots keep the changes a slot holds for its consumer.")
    fields = {"sections": "LOGICALDECODING-SLOTS\tReplication Slots\n"
                          "EXPORTED\tExported Snapshots\n"
                          "SLOT-LIMITS\tLimits of Replication Slots on a Standby"}
    doc = Doc(doc.url, doc.words, title_len=doc.title_len,
              summary={**doc.summary, "fields": fields})
    searcher = Searcher([LocalShard(build(tmp_path / "b", [doc]))])
    result = searcher.search("replication slot").results[0]
    assert result.url == page
    assert result.sections == ((f"{page}#LOGICALDECODING-SLOTS", "Replication Slots"),
                               (f"{page}#SLOT-LIMITS", "Limits of Replication Slots on a Standby"))
    assert result.as_dict()["sections"][0]["url"].endswith("#LOGICALDECODING-SLOTS")
    assert searcher.search("exported snapshot").results == ()  # not words of the page
    assert searcher.search("changes").results[0].sections == ()  # no heading holds it
    assert searcher.search("replication slot", snippets=False).results[0].sections == ()
