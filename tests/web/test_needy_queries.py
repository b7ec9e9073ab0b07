"""Needy queries end to end on the web side: the search view logs each search with its top-10
scores, the log turns into needy queries (threshold, frequency), a crawl queue scores urls by
them, and the admin's needy page (linked from the crawl status page) shows both."""

from __future__ import annotations

import pytest
from django.urls import reverse

from crawler import services
from crawler.core.definition.crawl import CrawlConfig, CrawlOrder, CrawlTimeOptions, RobotsBehaviour
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, SchedulerConfig
from crawler.machines.needy import NeedyRefresher, needy_queries_get
from querylog.models import QueryLog
from querylog.services import query_log_record
from tests.web.hardening_index import build_index

pytestmark = pytest.mark.django_db


def search(client, q, **params):
    response = client.get("/", {"q": q, "f": "json", **params})
    assert response.status_code == 200
    return response.json()


def test_the_search_view_logs_first_pages_only(client, settings, tmp_path):
    settings.WORK_DIRECTORY = tmp_path  # no index: every search has no results
    search(client, "  Threading  Locks ")
    search(client, "threading locks", limit="10")   # a second page: not logged
    search(client, "")                               # nothing asked: not logged
    rows = list(QueryLog.objects.all())
    assert [(r.query, r.results, r.top_scores, r.mean_top_score) for r in rows] == [
        ("threading locks", 0, [], 0.0)]


def test_needy_queries_by_threshold_and_frequency():
    for query, score, times in (("gis measure", 0.5, 3), ("threading", 0.1, 1),
                                ("answered well", 9.0, 5)):
        for _ in range(times):
            query_log_record(query, 10, [score * 10])  # mean top-10 = score
    needy = needy_queries_get(2.0)
    assert [(q.text, q.frequency) for q in needy] == [("gis measure", 3.0), ("threading", 1.0)]
    assert needy[0].relevance == pytest.approx(0.5)
    assert needy_queries_get(0.0) == ()   # threshold 0: needy queries are off


def test_admin_needy_page_shows_queries_and_prioritised_urls(admin_client, make_crawl,
                                                             tmp_path):
    crawl = make_crawl(needy_threshold=0.9)
    for _ in range(4):
        query_log_record("gis measure", 0, [])
    query_log_record("well answered", 10, [50.0] * 10)
    # a real crawl queue, fed by the refresher as a queue server does
    config = SchedulerConfig.from_crawl(CrawlConfig(
        crawl_id=crawl.pk, timestamp=crawl.timestamp, name="n", order=CrawlOrder.HOST_BUDGETING,
        page_options=CrawlTimeOptions(robots=RobotsBehaviour.IGNORE)), fsync=False)
    with CrawlQueue.open(tmp_path / "q", config) as queue:
        assert NeedyRefresher()(queue, crawl.needy_threshold)
        queue.add_discovered([
            DiscoveredUrl("https://docs.example/ref/contrib/gis/measure.html", 1, 0),
            DiscoveredUrl("https://docs.example/other.html", 1, 1, anchor_text="unrelated"),
        ])
        services.queue_server_heartbeat(0, "http://127.0.0.1:9/",
                                        {**queue.stats().as_dict(), "crawl": crawl.pk})
    status = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    needy_url = reverse("admin:crawler_crawl_needy", args=[crawl.pk])
    assert needy_url in status.content.decode()
    response = admin_client.get(needy_url)
    assert response.status_code == 200
    body = response.content.decode()
    assert "gis measure" in body and "well answered" not in body
    assert "1 urls in the needy lane, 1 needy queries" in body
    assert "https://docs.example/ref/contrib/gis/measure.html" in body
    assert "https://docs.example/other.html" not in body


def test_admin_needy_page_when_needy_queries_are_off(admin_client, make_crawl):
    crawl = make_crawl(needy_threshold=0.0)  # on by default (0.5) since issue 35
    body = admin_client.get(reverse("admin:crawler_crawl_needy", args=[crawl.pk])
                            ).content.decode()
    assert 'id="needy-off"' in body and "No live queue server" in body


def test_the_search_is_logged_once_its_answer_is_sent(settings, tmp_path, rf, db):
    """The row is written when the server closes the response (after its last byte), for
    the page, JSON and RSS alike."""
    from django.core.signals import request_finished
    from django.db import close_old_connections

    from ranking import views

    settings.WORK_DIRECTORY = tmp_path
    for params in ({"q": "page query"}, {"q": "json query", "f": "json"},
                   {"q": "rss query", "f": "rss"}):
        response = views.search(rf.get("/", params, HTTP_HOST="127.0.0.1"))
        assert response.status_code == 200
        assert not QueryLog.objects.filter(query=params["q"]).exists()
        request_finished.disconnect(close_old_connections)  # as the test client does
        try:
            response.close()
        finally:
            request_finished.connect(close_old_connections)
        assert QueryLog.objects.filter(query=params["q"]).count() == 1


def test_the_log_keeps_relevance_shares_that_tell_good_answers_from_poor_ones(client, settings,
                                                                             tmp_path):
    """Issue 35, item 4: the logged score is the result's relevance as a share of its query's
    most (``relevance_share``), not the final score, which rank fusion makes the same for
    every query of two or more words whatever the relevance."""
    filler = " ".join(f"filler{i}" for i in range(300))
    build_index(tmp_path, {
        "https://zoo.example/good.html":
            "<title>Zqzebra zqstripes</title><p>" + "zqzebra zqstripes " * 8 + "</p>",
        "https://zoo.example/poor.html":
            f"<title>Notes</title><p>zqzebra {filler} zqgiraffe {filler}</p>",
    })
    settings.WORK_DIRECTORY = tmp_path
    search(client, "zqzebra zqstripes")
    search(client, "zqzebra zqgiraffe")
    rows = {r.query: r for r in QueryLog.objects.all()}
    good, poor = rows["zqzebra zqstripes"], rows["zqzebra zqgiraffe"]
    assert good.results >= 1 and poor.results >= 1
    assert all(0.0 <= s <= 1.0 for s in good.top_scores + poor.top_scores)
    assert good.top_scores[0] > 0.8
    assert good.top_scores[0] - poor.top_scores[0] > 0.2
