"""Two crawls running at once in the admin (issue 37, item 7): the crawl list shows each on its
channel, each crawl's status page and JSON read its own counters from a queue server that
reports both, the host pages' queue view too, and the Machines page names both crawls."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from crawler import services
from crawler.core.queue_server.heartbeat import heartbeat_counters
from crawler.hosts.selectors import queued_get
from crawler.models import QueueServer

pytestmark = pytest.mark.django_db


def test_the_admin_shows_each_of_two_running_crawls(admin_client, make_crawl):
    first = make_crawl("first", restrict_to_seeds=True)
    second = make_crawl("second", seeds=("https://second.example/",), restrict_to_seeds=True)
    first, second = services.crawl_start(first.pk), services.crawl_start(second.pk)
    QueueServer.objects.create(
        server_id=0, base_url="http://127.0.0.1:9/", state="up", last_heartbeat=timezone.now(),
        counters=heartbeat_counters(
            {first.pk: {"queued": 12, "inbox": 1, "tiers": {"0": 12}, "idle": False,
                        "error_hosts": {"https://bad.example": 3}},
             second.pk: {"queued": 30, "inbox": 0, "tiers": {"2": 30}, "idle": False}},
            saved=[], disk={"paused": False, "reason": ""}))
    listing = admin_client.get(reverse("admin:crawler_crawl_changelist")).content.decode()
    assert "Running (channel 0)" in listing and "Running (channel 1)" in listing
    for crawl, queued, tiers, errors in ((first, 12, {"0": 12}, [["https://bad.example", 3]]),
                                         (second, 30, {"2": 30}, [])):
        data = admin_client.get(reverse("admin:crawler_crawl_status_json",
                                        args=[crawl.pk])).json()
        (server,) = data["queue_servers"]
        assert server["working_on_this_crawl"] and server["queued"] == queued
        assert data["tiers"] == tiers and data["error_hosts"] == errors
        assert data["channel"] == crawl.channel and data["reporting"]
        page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
        assert f"Channel {crawl.channel} (it runs beside" in page.content.decode()
        assert queued_get(crawl.pk)["queued"] == queued
    machines = admin_client.get(reverse("admin:crawler_machines_json")).json()["machines"]
    (row,) = [m for m in machines if m["kind"] == "queue server"]
    assert row["detail"] == f"crawl {first.pk}, queued 12; crawl {second.pk}, queued 30"
    # one stops: the other's counters and channel stay as they were
    services.crawl_stop(first.pk)
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == "stopping" and second.status == "running" and second.channel == 1
