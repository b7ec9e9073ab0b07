"""Curated results (issue 19, item 7): urls pinned to a query's first results and urls hidden
from every result, set in the admin, seen on the search page and in the JSON answer. Over the
search page tests' fixture index, through the test client."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ranking.core.search.curation import normalize_query, place_pins
from ranking.models import HiddenUrl, PinnedResult
from tests.web.test_search_page import build_site_index

pytestmark = pytest.mark.django_db
PAGE = "http://docs.example.test/threads/{}.html"


@pytest.fixture
def site(search_work):
    build_site_index(search_work)
    return search_work


def urls(client, query: str, **params) -> list[str]:
    data = client.get("/", {"q": query, "f": "json", **params}).json()
    return [r["url"] for r in data["results"]]


def test_place_pins_moves_inserts_and_cuts():
    found = {"x": "x", "c": "c"}
    assert place_pins(["a", "b", "c", "d"], [("c", 1), ("x", 3), ("gone", 2)], str, found,
                      4) == ["c", "a", "x", "b"]
    assert place_pins([], [("x", 5)], str, found, 10) == ["x"]
    assert normalize_query("  Python   THREADING ") == "python threading"


def test_a_pinned_url_leads_its_query_and_only_its_query(client, site):
    organic = urls(client, "threading")
    other, second_page = urls(client, "threading locks"), urls(client, "threading", limit="10")
    last = organic[-1]
    PinnedResult.objects.create(query="Threading", url=last, position=1)
    pinned = urls(client, "  THREADING ")
    assert pinned[0] == last and len(pinned) == len(organic)
    assert pinned.count(last) == 1 and pinned[1:] == organic[:-1]
    assert urls(client, "threading locks") == other  # another query: as ranked
    assert urls(client, "threading", limit="10") == second_page  # later pages: as ranked


def test_a_pinned_url_that_did_not_match_is_still_shown(client, site):
    french = "http://fr.example.test/fils.html"
    assert french not in urls(client, "threading")
    PinnedResult.objects.create(query="threading", url=french, position=2)
    page = urls(client, "threading")
    assert page[1] == french
    html = client.get("/", {"q": "threading"}).content.decode()
    assert "Programmation des fils en python" in html


def test_a_hidden_url_is_never_shown_and_pages_stay_full(client, site):
    before = urls(client, "threading")
    hidden = before[0]
    HiddenUrl.objects.create(url=hidden, reason="outdated")
    after = urls(client, "threading")
    assert hidden not in after and len(after) == len(before)
    assert hidden not in urls(client, f"info:{hidden}")
    PinnedResult.objects.create(query="threading", url=hidden, position=1)
    assert hidden not in urls(client, "threading")  # hiding wins over pinning


def test_admin_normalises_and_validates(admin_client, site):
    response = admin_client.post(reverse("admin:ranking_pinnedresult_add"), {
        "query": "  Python  Threading", "url": "HTTP://Docs.Example.test/threads/5.html",
        "position": "1", "note": ""})
    assert response.status_code == 302
    pin = PinnedResult.objects.get()
    assert pin.query == "python threading" and pin.url == PAGE.format(5)
    assert urls(admin_client, "python threading")[0] == PAGE.format(5)
    bad = admin_client.post(reverse("admin:ranking_hiddenurl_add"),
                            {"url": "javascript:alert(1)", "reason": ""})
    assert bad.status_code == 200 and not HiddenUrl.objects.exists()
    bad = admin_client.post(reverse("admin:ranking_pinnedresult_add"),
                            {"query": "x", "url": PAGE.format(1), "position": "0"})
    assert bad.status_code == 200 and PinnedResult.objects.count() == 1
