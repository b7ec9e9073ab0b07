"""The search settings (issue 37): the time period filter over the index's date: words, results
per page, results in a new tab, safe search and the result language, kept in a cookie by the
settings page and read by every search; a value in the url wins over the cookie. Through the
test client over tests/web/dated_site.py (12 pages fetched today, 3 in 2023)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from django.conf import settings as django_settings

from ranking.search_service import search_service
from ranking.searchpage.preferences import COOKIE
from tests.web.dated_site import build_dated_index

ODD = ["\x00", "%", "week\x00", "<script>", "9" * 40, "-1", "١٢", "week&t=day", " ", "é" * 300]


@pytest.fixture
def dated(tmp_path, settings, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    build_dated_index(tmp_path)
    yield tmp_path
    search_service().pool.close()
    search_service().lexicons.clear()


def results(response) -> list[str]:
    assert response.status_code == 200
    return re.findall(r'<a id="r\d+" href="([^"]+)"', response.content.decode())


def total(client, **params) -> int:
    answer = client.get("/", {"f": "json", **params}).json()
    return answer["total"]


def test_time_period_keeps_pages_fetched_in_it(client, dated):
    assert total(client, q="lighthouse") == 15
    for period in ("day", "week", "month", "year"):
        assert total(client, q="lighthouse", t=period) == 12, period
        found = results(client.get("/", {"q": "lighthouse", "t": period, "num": 20}))
        assert len(found) == 12 and all("new.example.test" in u for u in found)
    # a typed date: word still works, and the page offers the way back to any time
    assert total(client, q="lighthouse date:2023-11") == 3
    html = client.get("/", {"q": "lighthouse", "t": "week"}).content.decode()
    assert 'id="period-note"' in html and "Past week" in html
    assert '<option value="week" selected>' in html
    assert re.search(r'id="any-time" href="/\?q=lighthouse&amp;t="|href="/\?q=lighthouse&amp;t=" '
                     r'id="any-time"', html)


def test_time_period_with_no_page_offers_any_time(client, dated):
    html = client.get("/", {"q": "history", "t": "week"}).content.decode()
    assert "No results for" in html
    assert "Only pages crawled in the chosen time are searched" in html
    assert len(results(client.get("/", {"q": "history", "t": ""}))) == 3


def test_settings_page_saves_the_cookie_and_searches_follow_it(client, dated):
    page = client.get("/settings", {"q": "lighthouse"})
    assert page.status_code == 200
    html = page.content.decode()
    for name in ('name="safe"', 'name="lang"', 'name="t"', 'name="num"', 'name="nt"',
                 'name="language"', 'name="csrfmiddlewaretoken"'):
        assert name in html
    saved = client.post("/settings", {"q": "lighthouse", "safe": "off", "lang": "all",
                                      "t": "week", "num": "20", "nt": "1"})
    assert saved.status_code == 303 and saved["Location"] == "/?q=lighthouse"
    cookie = saved.cookies[COOKIE]
    assert cookie["samesite"] == "Lax" and cookie["httponly"] and int(cookie["max-age"]) > 3e7
    search = client.get("/", {"q": "lighthouse"})
    found = results(search)
    assert len(found) == 12  # 20 a page, the week's 12 pages
    html = search.content.decode()
    assert html.count('target="_blank"') == 12
    assert '<option value="off" selected>' in html and '<option value="all" selected>' in html
    # the settings page shows what was saved
    again = client.get("/settings").content.decode()
    assert '<option value="20" selected>' in again and 'name="nt" value="1" checked' in again
    # the url's value wins over the cookie's for that search only
    assert len(results(client.get("/", {"q": "lighthouse", "t": ""}))) == 15
    assert len(results(client.get("/", {"q": "lighthouse", "num": "5"}))) == 5
    assert len(results(client.get("/", {"q": "lighthouse"}))) == 12


def test_saved_defaults_clear_the_settings(client, dated):
    client.post("/settings", {"t": "week", "num": "10"})
    client.post("/settings", {"safe": "on", "lang": "", "t": "", "num": ""})
    assert len(results(client.get("/", {"q": "lighthouse", "num": 20}))) == 15
    html = client.get("/", {"q": "lighthouse"}).content.decode()
    assert 'target="_blank"' not in html


def test_bad_values_in_the_form_and_the_cookie_are_dropped(client, dated):
    for value in ODD:
        response = client.post("/settings", {"safe": value, "lang": value, "t": value,
                                             "num": value, "nt": value, "language": value,
                                             "q": value})
        assert response.status_code == 303, value
        assert response.cookies[COOKIE].value == "safe=on", value
    for raw in ("num=7&t=decade&safe=maybe&lang=%3Cscript%3E&nt=2", "%%%", "\x7f=\x7f",
                "num=" + "9" * 50, "t=week&t=day&num=20&num=abc"):
        client.cookies[COOKIE] = raw
        assert client.get("/", {"q": "lighthouse"}).status_code == 200, raw
        assert client.get("/settings").status_code == 200, raw
    client.cookies[COOKIE] = "num=7&t=decade"
    assert len(results(client.get("/", {"q": "lighthouse"}))) == 10


@pytest.mark.parametrize("value", ODD)
def test_odd_query_strings_are_never_a_server_error(client, dated, value):
    for name in ("t", "num", "safe", "lang", "nt", "q"):
        for fmt in ("", "json", "rss"):
            query = urlencode({"q": "lighthouse", name: value, "f": fmt})
            assert client.get(f"/?{query}").status_code == 200, (name, value, fmt)
    assert client.get("/settings", {"q": value}).status_code == 200
    assert client.put("/settings").status_code == 405


def test_interface_language_is_saved_in_djangos_cookie(client, dated):
    response = client.post("/settings", {"language": "fr", "q": "lighthouse"})
    assert response.cookies[django_settings.LANGUAGE_COOKIE_NAME].value == "fr"
    html = client.get("/", {"q": "lighthouse"}).content.decode()
    assert '<html lang="fr">' in html and "Rechercher" in html
    response = client.post("/settings", {"language": "xx"})
    assert client.get("/").content.decode().count('<html lang="fr">') == 1


def test_mix_word_names_the_missing_mix_not_an_unsupported_feature(client, dated):
    for query in ("lighthouse m:my.mix", "lighthouse mix:news"):
        answer = client.get("/", {"q": query, "f": "json"}).json()
        text = " ".join(answer["messages"])
        assert "not supported" not in text
        assert "there is no crawl mix named" in text
        assert answer["results"] == []


def test_conditionals_and_ranges_reach_the_search_as_yioop_reads_them(client, dated):
    assert total(client, q="lighthouse if:lighthouse!diary") == 12
    assert total(client, q="lighthouse if:harbour!diary!history") == 3
    answer = client.get("/", {"q": "lighthouse #2#", "f": "json"}).json()
    assert answer["total"] == 15
    assert any("result ranges (#2#) are not supported" in m for m in answer["messages"])


def test_fallbacks_work_within_the_time_period(client, dated):
    """A query with no page having all its words shows the pages with most of them, and a
    misspelt one its correction's results, inside the period too."""
    partial = client.get("/", {"q": "lighthouse zebra", "t": "week", "f": "json"}).json()
    assert partial["fallback"] == "partial" and partial["total"] == 12
    assert all("new.example.test" in r["url"] for r in partial["results"])
    html = client.get("/", {"q": "lighthouse zebra", "t": "week"}).content.decode()
    assert 'id="partial-match"' in html
    corrected = client.get("/", {"q": "lighthuose", "t": "week", "f": "json"}).json()
    assert corrected["fallback"] == "corrected" and corrected["total"] == 12
    html = client.get("/", {"q": "lighthuose", "t": "week"}).content.decode()
    assert re.search(r'<strong>lighthouse</strong></a>\. Search instead for', html)
