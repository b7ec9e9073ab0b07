"""The queue server's side of the admin's url and host pages (issue 19, item 3): the fetched
and refused urls of the batches it applies, and its hosts, land in the database in bulk; the
logs are trimmed to their retention; the operator's overrides reach its crawl queue."""

from __future__ import annotations

import json

import pytest

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.hosts.activity import HostActivityPump, activity_trim
from crawler.hosts.services import host_override_set
from crawler.models.hosts import CrawlHost, FetchedUrl, HostOverride, RefusalCount, RefusedUrl

pytestmark = pytest.mark.django_db

A = "http://a.example"
B = "http://b.example"
T = 1_750_000_000.0


def core_for(tmp_path, crawl) -> QueueServerCore:
    config = CrawlConfig(crawl_id=crawl.pk, timestamp=crawl.timestamp, name="t",
                         seeds=(SeedSpec(A + "/"), SeedSpec(B + "/")), max_depth=2)
    return QueueServerCore(QueueServerConfig(0, 1, tmp_path, config, schedule_size=50))


def put(core: QueueServerCore, **fields) -> None:
    batch = {"crawl": core.config.crawl.timestamp, "server": 0}
    batch.update(fields)
    core.spool.put("batch", json.dumps(batch).encode())
    assert core.ingest() == 1


def link(url: str, depth: int = 1) -> list:
    return [url, depth, 0, A + "/", 0.0, 0, False, True, 0.0]


def test_a_batchs_fetched_and_refused_urls_land_in_the_tables(tmp_path, make_crawl, settings):
    settings.HOST_OVERRIDE_SECONDS = 0.0
    crawl = make_crawl(seeds=())
    core = core_for(tmp_path, crawl)
    pump = HostActivityPump(0)
    core.add_seeds([A + "/", B + "/"])
    put(core, robots=[{"origin": A, "status": 200, "body": "User-agent: *\nDisallow: /private/\n"
                       "Crawl-delay: 2\n"},
                      {"origin": B, "status": 0, "body": None, "error": "tls",
                       "message": "certificate expired"}],
        log=[[A + "/robots.txt", 200, 60, T, ""], [B + "/robots.txt", 0, 0, T, "tls"]])
    put(core, log=[[A + "/", 200, 1200, T + 1, ""], [A + "/gone", 503, 10, T + 2, ""]],
        discovered=[link(A + "/private/1"), link(A + "/deep", 3), link(A + "/ok")],
        refused=[[A + "/secret", "noindex", "robots meta: NOINDEX"]])
    pump.step(core, crawl.pk)
    rows = list(FetchedUrl.objects.filter(crawl=crawl).order_by("id")
                .values_list("url", "status", "size", "error"))
    assert rows == [(A + "/robots.txt", 200, 60, ""), (B + "/robots.txt", 0, 0, "tls"),
                    (A + "/", 200, 1200, ""), (A + "/gone", 503, 10, "")]
    refused = set(RefusedUrl.objects.filter(crawl=crawl).values_list("reason", "url"))
    assert refused == {("robots", A + "/private/1"), ("depth", A + "/deep"),
                       ("noindex", A + "/secret"), ("fetch_error", A + "/gone"),
                       ("fetch_error", B + "/robots.txt"), ("robots", B + "/")}
    counts = dict(RefusalCount.objects.filter(crawl=crawl).values_list("reason", "count"))
    assert counts == {"robots": 2, "depth": 1, "noindex": 1, "fetch_error": 2}
    a = CrawlHost.objects.get(crawl=crawl, origin=A)
    assert (a.requests, a.errors, a.size, a.refused) == (3, 1, 1270, 4)
    assert a.robots_status == 200 and "Disallow: /private/" in a.robots_text
    assert a.delay == 2.0 and a.state.startswith("crawl-delayed")
    b = CrawlHost.objects.get(crawl=crawl, origin=B)
    assert b.robots_error == "tls: certificate expired" and b.errors == 1
    # a second round adds to the host's row
    put(core, log=[[A + "/ok", 200, 30, T + 5, ""]])
    pump.step(core, crawl.pk)
    a.refresh_from_db()
    assert a.requests == 4 and a.size == 1300 and a.last_status == 200
    # the operator slows A down and excludes B: applied at the next step
    host_override_set(crawl.pk, A, min_delay=7.5)
    host_override_set(crawl.pk, B, excluded=True)
    pump.step(core, crawl.pk)
    assert core.queue.host_politeness(A) == (7.5, True, False)
    assert core.queue.host_politeness(B)[2] is True and core.excluded_hosts == {B}
    assert not HostOverride.objects.filter(crawl=crawl, applied_at__isnull=True).exists()
    put(core, discovered=[link(B + "/new")])
    pump.step(core, crawl.pk)
    assert RefusedUrl.objects.filter(crawl=crawl, reason="excluded", url=B + "/new").exists()
    assert CrawlHost.objects.get(crawl=crawl, origin=B).state == "excluded by the operator"
    core.close()


def test_logs_are_trimmed_to_their_retention(make_crawl):
    crawl = make_crawl(seeds=())
    FetchedUrl.objects.bulk_create(
        FetchedUrl(crawl=crawl, url=f"{A}/{i}", origin=A, status=200, size=1,
                   fetched_at="2025-01-01T00:00:00Z") for i in range(30))
    for reason in ("robots", "depth"):
        RefusalCount.objects.create(crawl=crawl, server=0, reason=reason, count=20)
        RefusedUrl.objects.bulk_create(
            RefusedUrl(crawl=crawl, url=f"{A}/{reason}/{i}", origin=A, reason=reason,
                       refused_at="2025-01-01T00:00:00Z") for i in range(20))
    assert activity_trim(crawl.pk, 10, 5) == 20 + 15 + 15
    kept = list(FetchedUrl.objects.filter(crawl=crawl).order_by("id")
                .values_list("url", flat=True))
    assert kept == [f"{A}/{i}" for i in range(20, 30)]  # the newest
    assert sorted(RefusedUrl.objects.filter(crawl=crawl, reason="depth")
                  .values_list("url", flat=True)) == [f"{A}/depth/{i}" for i in range(15, 20)]
    assert RefusalCount.objects.get(crawl=crawl, reason="robots").count == 20  # all counted
