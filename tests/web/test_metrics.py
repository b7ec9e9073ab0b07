"""``/metrics`` (issue 19, item 8): the Prometheus text format, parsed with prometheus_client's
own parser; crawl, queue-server and fetcher figures that move as the crawl reports; the search
latency histogram; index sizes; and who may read it."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from crawler import services
from crawler.models import Crawl
from tests.unit.ranking.helpers import build, text_doc

pytestmark = pytest.mark.django_db


def scrape(client, **headers) -> dict[str, dict[tuple, float]]:
    """name -> {sorted label items: value} of every sample."""
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


@pytest.fixture
def work(tmp_path, settings):
    from ranking.search_service import search_service

    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.METRICS_TOKEN = ""
    yield tmp_path
    search_service().pool.close()


def test_crawl_and_queue_server_figures_move_with_the_reports(client, make_crawl, work):
    crawl = make_crawl(name="docs")
    services.crawl_start(crawl.pk)
    label = (("crawl", str(crawl.timestamp)), ("name", "docs"))
    before = scrape(client)
    assert before["yioopy_crawl_pages_fetched_total"][label] == 0
    assert before["yioopy_crawl_running"][label] == 1
    Crawl.objects.filter(pk=crawl.pk).update(pages_fetched=42, documents_indexed=40,
                                             fetch_errors=2, urls_queued=300)
    services.queue_server_heartbeat(0, "http://127.0.0.1:8000/", {
        "crawl": crawl.pk, "queued": 300, "inbox": 2, "outstanding_schedules": 1,
        "robots_errors_by_kind": {"tls": 3, "reset": 1}, "tiers": {"0": 10, "2": 290},
        "error_hosts": {"bad.example": 2}, "idle": False})
    after = scrape(client)
    assert after["yioopy_crawl_pages_fetched_total"][label] == 42
    assert after["yioopy_crawl_documents_indexed_total"][label] == 40
    assert after["yioopy_crawl_fetch_errors_total"][label] == 2
    assert after["yioopy_crawl_urls_queued"][label] == 300
    server = (("server", "0"),)
    assert after["yioopy_queue_server_up"][server] == 1
    assert after["yioopy_queue_server_queued"][server] == 300
    assert after["yioopy_queue_server_inbox"][server] == 2
    assert after["yioopy_queue_server_robots_errors_by_kind"][
        (("kind", "tls"), ("server", "0"))] == 3
    assert after["yioopy_queue_server_tiers"][(("server", "0"), ("tier", "2"))] == 290
    assert not any("error_hosts" in name or "idle" in name for name in after)
    assert after["yioopy_database_up"][()] == 1


def test_fetchers_index_sizes_and_search_latency(client, work):
    services.fetcher_heartbeat("node:12", "node", 12, "fetching", schedule="s-1", pages=7,
                               finished_schedule=True)
    build(work / "qs0" / "IndexData1700000000",
          [text_doc("https://a.example/", "a lighthouse", "lighthouse words")]).close()
    first = scrape(client)
    fetcher = (("fetcher", "node:12"),)
    assert first["yioopy_fetcher_pages_fetched_total"][fetcher] == 7
    assert first["yioopy_fetcher_schedules_done_total"][fetcher] == 1
    assert first["yioopy_index_bytes"][(("crawl", "1700000000"), ("server", "0"))] > 1000
    json_count = (("format", "json"),)
    searches = first.get("yioopy_search_seconds_count", {}).get(json_count, 0)
    for _ in range(3):
        client.get("/", {"q": "lighthouse", "f": "json"})
    assert scrape(client)["yioopy_search_seconds_count"][json_count] == searches + 3


def test_who_may_read_the_metrics(client, settings, work):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403
    settings.METRICS_TOKEN = "scrape-secret-1"
    assert client.get("/metrics").status_code == 403  # local, but no token
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert scrape(client, REMOTE_ADDR="203.0.113.9",
                  HTTP_AUTHORIZATION="Bearer scrape-secret-1")
