"""Zero-result queries through the search page and the JSON API: the pages with most of the
words ("No page has all the words..."), a spelling correction searched and shown with a link
forcing the original (nfpr=1), operators honoured, odd input never a 5xx."""

from __future__ import annotations

import pytest

from ranking.search_service import search_service
from tests.unit.ranking.helpers import build, text_doc
from tests.web.test_search_api import work  # noqa: F401 (fixture)

PAGES = [
    text_doc("https://docs.test/threads", "Threading guide", "threading basics and locks"),
    text_doc("https://docs.test/queue", "Queue module", "a synchronized queue class"),
    text_doc("https://other.test/threads", "Threading elsewhere", "threading on another host"),
]


@pytest.fixture
def index(work):  # noqa: F811
    search_service().lexicons.clear()
    build(work / "qs0" / "IndexData1000", PAGES).close()
    yield work
    search_service().lexicons.clear()


def test_json_partial_matches(client, index):
    data = client.get("/", {"q": "threading zebra", "f": "json"}).json()
    assert data["fallback"] == "partial" and data["query"] == "threading zebra"
    assert "threading" in data["searched"] and "zebra" not in data["searched"]
    assert {r["url"] for r in data["results"]} == {"https://docs.test/threads",
                                                    "https://other.test/threads"}
    assert data["total"] >= 2


def test_json_fallback_keeps_exclusions_and_meta_words(client, index):
    data = client.get("/", {"q": "threading zebra -locks", "f": "json"}).json()
    assert [r["url"] for r in data["results"]] == ["https://other.test/threads"]
    data = client.get("/", {"q": "threading zebra site:docs.test", "f": "json"}).json()
    assert [r["url"] for r in data["results"]] == ["https://docs.test/threads"]
    # an OR query is a union already: it is not relaxed
    data = client.get("/", {"q": "queue | zebra giraffe", "f": "json", "nfpr": "1"}).json()
    assert data["fallback"] is None and [r["url"] for r in data["results"]] == \
        ["https://docs.test/queue"]


def test_page_says_no_page_has_all_the_words(client, index):
    page = client.get("/", {"q": "threading zebra"}).content.decode()
    assert 'id="partial-match"' in page
    assert "No page has all the words; showing pages with most of them." in page
    assert 'href="https://docs.test/threads"' in page and "No results" not in page


def test_json_correction_is_searched(client, index):
    data = client.get("/", {"q": "threadinng", "f": "json"}).json()
    assert data["fallback"] == "corrected" and data["searched"] == "threading"
    assert data["query"] == "threadinng" and data["results"]
    forced = client.get("/", {"q": "threadinng", "f": "json", "nfpr": "1"}).json()
    assert forced["results"] == [] and forced["fallback"] is None
    assert forced["searched"] == "threadinng"


def test_page_correction_keeps_the_language_filter(client, index):
    page = client.get("/", {"q": "threadinng", "lang": "en"}).content.decode()
    assert "Showing results for" in page and "<strong>threading</strong>" in page
    assert "q=threadinng&amp;nfpr=1" in page and "lang=en" in page


@pytest.mark.parametrize("q", ['"unbalanced zebra', "-zebra", "zebra -", "| |", "a:b c:d",
                               "zebra " * 300, "\x00 zebra threading", '""" threading'])
def test_odd_queries_never_fail(client, index, q):
    for params in ({"q": q, "f": "json"}, {"q": q}, {"q": q, "nfpr": "1", "f": "json"}):
        assert client.get("/", params).status_code == 200
