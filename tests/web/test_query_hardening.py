"""Issue 18: odd control words and over-long queries get a clear answer in the page's own
format, never a server error. The index is built from the fixture site of
:mod:`tests.web.test_search_page` with the engine's own writer."""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET

import pytest

from indexer.core.shard_token import shard_bearer
from ranking.core.query.numerals import ascii_decimal, ascii_int, is_ascii_digits
from ranking.core.query.parser import QueryParser
from ranking.params import MAX_QUERY_CHARS
from ranking.suggest import Lexicon
from tests.web.test_search_page import site as site  # the fixtures, re-exported for pytest
from tests.web.test_search_page import work as work

TOKEN = "hardening-token"
ODD_NUMBERS = ("²", "١٧٠٠٠٠٠٠٠٠", "１７", "٣", "⅕", "1_000", "Ⅻ", "𝟙𝟚")


@pytest.mark.parametrize("value", ODD_NUMBERS)
def test_non_ascii_digits_are_not_numbers(value):
    assert not is_ascii_digits(value)
    assert ascii_int(value) is None and ascii_decimal(value) is None
    parsed = QueryParser().parse(f"threading i:{value} w:{value}")
    assert parsed.controls.index is None and parsed.controls.weight == 1.0
    assert any(f"i:{value}" in m for m in parsed.messages)


def test_ascii_numbers_still_read():
    assert ascii_int(" 42 ") == 42 and ascii_int("-3") == -3 and ascii_int("+7") == 7
    assert ascii_int("-3", signed=False) is None
    assert ascii_decimal("2.5") == 2.5 and ascii_decimal(".5") == 0.5
    assert QueryParser().parse("x i:1700000000 w:2").controls.index == 1_700_000_000


@pytest.mark.parametrize("value", ODD_NUMBERS)
def test_odd_index_control_word_on_every_endpoint(client, site, settings, value):
    settings.QUEUE_SERVER_TOKEN = TOKEN
    query = f"threading i:{value}"
    page = client.get("/", {"q": query})
    assert page.status_code == 200 and "is not a crawl timestamp" in page.content.decode()
    data = client.get("/", {"q": query, "f": "json"})
    assert data.status_code == 200
    assert any("is not a crawl timestamp" in m for m in data.json()["messages"])
    assert data.json()["results"]
    rss = client.get("/", {"q": query, "f": "rss"})
    assert rss.status_code == 200 and ET.fromstring(rss.content).tag == "rss"
    shard = client.get("/api/shard/search", {"q": query}, HTTP_X_SHARD_TOKEN=shard_bearer(TOKEN))
    assert shard.status_code == 200 and "candidates" in json.loads(shard.content)
    for name in ("num", "limit", "its"):
        odd = client.get("/", {"q": "threading", name: value, "f": "json"})
        assert odd.status_code == 200
        assert any(value in m for m in odd.json()["messages"])


LONG_QUERIES = {
    "words": ("threading " * 500)[:5000],
    "one word": "t" * 5000,
    "cjk run": "線程" * 2500,
    "cjk run near the limit": "線程編" * 333 + " 線",
    "meta words": ("site:docs.example.test " * 250)[:5000],
    "disjuncts": ("threading|" * 500)[:5000],
}


@pytest.mark.parametrize("shape", sorted(LONG_QUERIES))
def test_five_thousand_character_query_is_cut_with_a_note(client, site, shape):
    query = LONG_QUERIES[shape]
    for fmt in ("", "json", "rss"):
        started = time.perf_counter()
        response = client.get("/", {"q": query, "f": fmt})
        elapsed = time.perf_counter() - started
        assert response.status_code == 200, (shape, fmt)
        # the spelling correction of one 1,000-letter word once cost the cube of its length
        assert elapsed < 2.0, (shape, fmt, elapsed)
        if fmt == "json":
            data = response.json()
            assert len(data["query"]) <= MAX_QUERY_CHARS
            assert f"shortened to its first {MAX_QUERY_CHARS} characters" in " ".join(
                data["messages"])
        elif fmt == "rss":
            assert ET.fromstring(response.content).tag == "rss"
        else:
            assert f"shortened to its first {MAX_QUERY_CHARS} characters" in \
                response.content.decode()
    assert client.get("/suggest", {"q": query}).json()["query"]


def test_long_word_is_not_corrected_at_cubic_cost():
    lexicon = Lexicon({"threading": 3, "locks": 2})
    started = time.perf_counter()
    assert lexicon.correct("".join(chr(0x4E00 + i % 700) for i in range(1000))) is None
    assert time.perf_counter() - started < 0.5
    assert lexicon.correct("threadinng") == "threading"
