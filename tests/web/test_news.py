"""News sources (issue 37, item 1): feeds managed in the admin, read by the update the
scheduler runs, their items searchable on the News tab in order of recency and relevance,
with their source and date. Real feeds on a loopback HTTP server, the real fetch path (its
egress allow-list), the real news index, the search page through the test client."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from crawler.models import NewsItem, NewsSource
from crawler.news.updates import news_update_due
from ranking.core.search.recency import recency_order
from tests.web.news_feeds import atom, feed_server, rss

pytestmark = pytest.mark.django_db
HOUR = 3600.0


@pytest.fixture
def feeds(search_work):
    with feed_server() as server:
        yield server


def news(client, query: str, **params) -> dict:
    return client.get("/", {"q": query, "tab": "news", "f": "json", **params}).json()


def test_recency_order_blends_relevance_and_age():
    now = 1_000_000.0
    # equal scores: newest first; a much better match beats a slightly newer one
    assert recency_order([1.0, 1.0, 1.0], [now - 3 * HOUR, now, now - HOUR], now) == [1, 2, 0]
    assert recency_order([10.0, 1.0], [now - 2 * HOUR, now - HOUR], now) == [0, 1]
    assert recency_order([1.0, 1.0], [now - 30 * 24 * HOUR, now - 24 * HOUR], now) == [1, 0]
    assert recency_order([], [], now) == []


def test_items_are_indexed_once_with_source_and_date(client, feeds):
    now = time.time()
    url = feeds.serve("/harbour.rss", rss("Harbour News", [
        ("Lighthouse keeper retires", feeds.url("/a/keeper.html"),
         "The keeper of the lighthouse retires after forty years.", now - 72 * HOUR),
        ("New ferry timetable", feeds.url("/a/ferry.html"),
         "The ferry to the lighthouse island sails hourly.", now - HOUR),
    ]))
    source = NewsSource.objects.create(name="Harbour Gazette", url=url, update_minutes=30)
    run = news_update_due()
    assert run.as_dict() == {"sources": 1, "indexed": 2, "failed": {}, "busy": False}
    source.refresh_from_db()
    assert source.last_error == "" and source.last_new_items == 2
    assert source.next_update_at - source.last_update_at == timedelta(minutes=30)
    found = news(client, "lighthouse")
    assert [r["url"] for r in found["results"]] == [feeds.url("/a/ferry.html"),
                                                     feeds.url("/a/keeper.html")]
    assert [r["source"] for r in found["results"]] == ["Harbour Gazette"] * 2
    assert found["results"][0]["published"] > found["results"][1]["published"]
    assert found["results"][0]["published"].endswith("+00:00")
    page = client.get("/", {"q": "lighthouse", "tab": "news"}).content.decode()
    assert page.count('class="news-source">Harbour Gazette<') == 2
    assert 'class="news-date" datetime="' in page and 'aria-current="true" class="current" ' \
        'id="tab-news"' in page
    # the All tab searches the crawls' index, not the news
    assert "Lighthouse keeper retires" not in client.get("/", {"q": "lighthouse"}).content.decode()
    # not due again before its interval; due again after it, with nothing new to index
    assert news_update_due().sources == 0
    later = news_update_due(timezone.now() + timedelta(minutes=31))
    assert later.sources == 1 and later.indexed == 0 and NewsItem.objects.count() == 2


def test_a_new_item_is_picked_up_at_the_next_due_run(client, feeds):
    now = time.time()
    first = [("Storm closes the harbour", feeds.url("/n/1"), "Storm warning.", now - HOUR)]
    url = feeds.serve("/feed.atom", atom("Coast", first), kind="application/atom+xml")
    NewsSource.objects.create(name="Coast Radio", url=url, update_minutes=5)
    assert news_update_due().indexed == 1
    feeds.serve("/feed.atom", atom("Coast", [("Harbour reopens after storm", feeds.url("/n/2"),
                                              "Boats sail again.", now)] + first),
                kind="application/atom+xml")
    assert news(client, "harbour")["results"][0]["url"] == feeds.url("/n/1")
    assert news_update_due(timezone.now() + timedelta(minutes=6)).indexed == 1
    assert [r["url"] for r in news(client, "harbour")["results"]] == [feeds.url("/n/2"),
                                                                       feeds.url("/n/1")]


def test_hostile_and_broken_feeds_are_an_error_state_not_a_crash(client, admin_client, feeds):
    now = time.time()
    good = feeds.serve("/good.rss", rss("Good", [("Tide tables", feeds.url("/t"), "Tides.",
                                                  now)]))
    sources = {
        "error status": feeds.serve("/500", b"oops", status=500, kind="text/plain"),
        "not xml": feeds.serve("/garbage", b"\x00\xff\xfe not a feed at all",
                               kind="application/rss+xml"),
        "no items": feeds.serve("/empty", b"<html><body>hello</body></html>",
                                kind="text/html"),
        "missing": feeds.url("/nothing-here"),
        "refused by the allow-list": "http://10.255.255.1/feed.rss",
    }
    for name, url in sources.items():
        NewsSource.objects.create(name=name, url=url)
    broken = (f'<rss><channel><title>Broken</title><item><title>Bad link</title>'
              f'<link>javascript:alert(1)</link></item><item><title>&lt;b&gt;Tags&lt;/b&gt; '
              f'&amp; entities</title><link>{feeds.url("/ok")}</link><description>&lt;p&gt;'
              f'fine&lt;/p&gt;</description><pubDate>Fri, 01 Jan 2100 00:00:00 GMT</pubDate>'
              f'</item><item><title>Undated</title><link>{feeds.url("/undated")}</link>'
              f'<pubDate>the day after tomorrow</pubDate></item><item></item><item><title>cut'
              ).encode()  # unclosed: the parser recovers what it can
    NewsSource.objects.create(name="broken items", url=feeds.serve("/broken.rss", broken))
    NewsSource.objects.create(name="good", url=good)
    run = news_update_due()
    assert run.sources == 7 and run.indexed == 3
    assert set(run.failed) == set(sources)
    errors = dict(NewsSource.objects.values_list("name", "last_error"))
    assert "HTTP 500" in errors["error status"] and "not XML" in errors["not xml"]
    assert "HTTP 404" in errors["missing"] and errors["good"] == ""
    assert "egress" in errors["refused by the allow-list"].lower() or \
        "refused" in errors["refused by the allow-list"].lower()
    item = NewsItem.objects.get(url=feeds.url("/ok"))
    assert item.published_at <= timezone.now()  # a date in the future is not believed
    assert item.title == "Tags & entities"  # HTML in a title is reduced to its text
    assert NewsItem.objects.get(url=feeds.url("/undated")).published_at <= timezone.now()
    assert news(client, "entities")["results"][0]["title"] == "Tags & entities"
    listing = admin_client.get(reverse("admin:crawler_newssource_changelist"))
    assert listing.status_code == 200
    assert listing.content.decode().count("error: ") == len(sources)


def test_the_news_tab_without_news_says_so(client, search_work):
    data = news(client, "anything")
    assert data["results"] == [] and "no news has been indexed yet" in data["messages"]
    page = client.get("/", {"q": "anything", "tab": "news"})
    assert page.status_code == 200 and b"no news has been indexed yet" in page.content


def test_admin_validates_sources_without_a_5xx(admin_client, feeds):
    add = reverse("admin:crawler_newssource_add")
    good = {"name": " Harbour  Gazette ", "url": "HTTP://127.0.0.1:9/Feed.rss",
            "language": "en", "update_minutes": "60", "enabled": "on"}
    assert admin_client.post(add, good).status_code == 302
    row = NewsSource.objects.get()
    assert row.name == "Harbour Gazette" and row.url == "http://127.0.0.1:9/Feed.rss"
    bad_values = [{"url": "javascript:alert(1)"}, {"url": ""}, {"name": "  "},
                  {"language": "English!"}, {"update_minutes": "1"},
                  {"update_minutes": str(10 ** 30)}, {"update_minutes": "-5"},
                  {"name": "Harbour Gazette"}, {"url": "http://127.0.0.1:9/Feed.rss"},
                  {"url": "x" * 5000}]
    for change in bad_values:
        data = {**good, "name": "Other", "url": "http://127.0.0.1:9/other.rss", **change}
        response = admin_client.post(add, data)
        assert response.status_code == 200 and b"errornote" in response.content, change
    assert NewsSource.objects.count() == 1
    # the list shows the state; the action makes a source due at the next run
    NewsSource.objects.update(last_update_at=timezone.now(), last_error="the server answered "
                              "HTTP 500", next_update_at=timezone.now() + timedelta(hours=1))
    listing = admin_client.get(reverse("admin:crawler_newssource_changelist")).content.decode()
    assert "error: the server answered HTTP 500" in listing
    response = admin_client.post(reverse("admin:crawler_newssource_changelist"),
                                 {"action": "read_next_run", "_selected_action": [row.pk]})
    assert response.status_code == 302
    assert NewsSource.objects.get().next_update_at is None
