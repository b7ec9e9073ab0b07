"""Changing a running crawl (issue 37, item 8), end to end: a crawl started as the admin's Start
does, served by the queue-server process's loop with its schedules run by the fetcher's code
(in this process, on a real Redis for the schedule claims); a seed and a disallowed rule are
added while it runs, and the new seed's page is fetched and found by the search page with no
restart of the queue server, while the newly disallowed page is never requested."""

from __future__ import annotations

import json
import time

import pytest
import redis

from crawler import services
from crawler.machines import fetching
from crawler.machines.queue_server import QueueServerProcess
from crawler.models import Crawl
from crawler.tasks import inbox_for
from operations.redis_urls import redis_url_for
from ranking.search_service import search_service
from tests.fixtures.sites import FixtureServer, normal_site
from tests.search_client import results

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


class Engine:
    """One queue server's loop (``QueueServerProcess.tick``) whose schedules are run at once
    by the fetcher's ``run_schedule``, the batches put in the queue server's inbox as its
    inbox worker does."""

    def __init__(self, crawl: Crawl) -> None:
        self.crawl = crawl
        self.sent: list[dict] = []
        self.process = QueueServerProcess(0, 1, "http://127.0.0.1:9/", self.sent.append)
        self.process.edits_seconds = 0.5  # (10 s in production: within a minute)

    def ship(self, server: int, batch: dict) -> None:
        inbox_for(server, self.crawl.timestamp).put("batch", json.dumps(batch).encode())

    def run_until(self, done, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, "the crawl did not get there in time"
            self.process.tick()
            while self.sent:
                fetching.run_schedule(self.sent.pop(0), self.ship)
            time.sleep(0.02)


def test_a_seed_added_to_a_running_crawl_is_indexed_without_a_restart(
        settings, tmp_path, redis_url, monkeypatch, client):
    url = redis_url_for(redis_url, db=13)
    redis.Redis.from_url(url).flushdb()
    settings.REDIS_URL = url
    monkeypatch.setattr(fetching, "_claims", fetching._ClaimStoreCache())
    settings.WORK_DIRECTORY = tmp_path / "work"
    settings.INDEX_REFRESH_SECONDS = 0.0
    settings.NUM_QUEUE_SERVERS = 1
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    first = normal_site("edited first", pages=2, crawl_delay=0.0)
    second = normal_site("edited second", pages=2, crawl_delay=0.0)
    with FixtureServer(first.route, host="127.0.0.1") as a, \
            FixtureServer(second.route, host="127.0.0.2") as b:
        crawl = Crawl.objects.create(name="edited", restrict_to_seeds=True,
                                     page_options=services.page_options_default_get())
        services.seed_sites_add_bulk(crawl.pk, a.url("/"))
        services.crawl_start(crawl.pk)
        crawl.refresh_from_db()
        engine = Engine(crawl)
        try:
            engine.run_until(lambda: a.requests_for("/page/2.html"))
            core = engine.process.core_of(crawl.pk)
            assert core is not None and not b.log  # restricted to its seed: b unknown
            # the admin's edits while it runs: a seed, and a rule against one of its pages
            services.seed_sites_add_bulk(crawl.pk, b.url("/"))
            crawl.disallowed_sites = r"regex:^http://127\.0\.0\.2:\d+/page/2\.html"
            crawl.full_clean(exclude=["page_options"])
            crawl.save(update_fields=["disallowed_sites"])
            word = second.pages["/page/1.html"].word
            engine.run_until(lambda: b.requests_for("/page/1.html")
                             and f'href="{b.url("/page/1.html")}"' in results(client, word))
            assert engine.process.core_of(crawl.pk) is core  # the same queue server: no restart
            assert Crawl.objects.get(pk=crawl.pk).status == "running"
            assert f'href="{b.url("/")}"' in results(client, second.pages["/"].word)
            assert not b.requests_for("/page/2.html")
        finally:
            services.crawl_stop(crawl.pk)
            engine.process._close()
            search_service().pool.close()
            search_service().lexicons.clear()
