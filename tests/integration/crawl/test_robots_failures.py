"""A crawl whose every robots.txt fetch failed says why (issue 18): it ended "stopped" in
seconds with "Fetch errors 0" and "No errors reported", the reason only in a server log.

Three hosts on loopback, none of whose robots.txt can be fetched: one resets every
connection, two speak plain HTTP to a crawler that asks for https (a TLS error). The crawl
runs as ``manage.py crawl``; the queue servers' reports go through the queue-server glue as
their heartbeats do."""

from __future__ import annotations

import socket
import struct

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils.html import escape

from crawler import services
from crawler.core.queue_server.robots_failures import RobotsFailures
from crawler.machines.queue_server import QueueServerProcess
from crawler.models import Crawl
from tests.fixtures.sites import FixtureServer, normal_site

pytestmark = pytest.mark.django_db


def reset_connection(request):
    """Every request: the connection is reset (a zero linger turns the close into a RST)."""
    def write(sock: socket.socket) -> None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return write


def https(server) -> str:
    return server.url("/").replace("http://", "https://", 1)


def test_a_crawl_whose_every_robots_txt_failed_says_why(tmp_path, settings, admin_client,
                                                        capsys):
    settings.WORK_DIRECTORY = tmp_path
    site = normal_site("plainonly", pages=2, crawl_delay=0.0)
    with FixtureServer(reset_connection, host="127.0.0.2") as reset, \
            FixtureServer(site.route, host="127.0.0.3") as plain, \
            FixtureServer(site.route, host="127.0.0.4") as other:
        call_command("crawl", reset.url("/"), https(plain), https(other),
                     "--max-seconds", "60", "--no-link-analysis")
        assert [e.path for e in reset.log] == ["/robots.txt"]
    crawl = Crawl.objects.get()
    assert crawl.status == "stopped" and crawl.documents_indexed == 0
    assert crawl.fetch_errors == 3
    kinds = crawl.robots_failures["kinds"]
    assert {k: row["count"] for k, row in kinds.items()} == {"tls": 2, "connection": 1}
    assert kinds["connection"]["url"] == reset.url("/robots.txt")
    assert kinds["tls"]["url"] in (https(plain) + "robots.txt", https(other) + "robots.txt")
    assert "TLS" in kinds["tls"]["message"]
    assert crawl.end_reason.startswith("every robots.txt fetch failed: 3 hosts, TLS error "
                                       f"(example: {kinds['tls']['url']}: ")
    assert "; connection refused or reset (example: " in crawl.end_reason
    assert f"Why: {crawl.end_reason}" in capsys.readouterr().out
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    body = page.content.decode()
    assert escape(crawl.end_reason) in body
    assert "TLS error" in body and kinds["connection"]["url"] in body
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    assert data["end_reason"] == crawl.end_reason and data["robots_fetches"] == 3
    assert [(row["label"], row["count"]) for row in data["robots_failures"]] == [
        ("TLS error", 2), ("connection refused or reset", 1)]


def test_queue_servers_reports_are_summed_and_the_finished_crawl_says_why():
    crawl = Crawl.objects.create(name="two shards",
                                 page_options=services.page_options_default_get())
    services.seed_sites_add_bulk(crawl.pk, "https://a.example/\nhttps://b.example/")
    services.crawl_start(crawl.pk)
    for server, host in enumerate(("a", "b")):
        failures = RobotsFailures()
        failures.record(f"https://{host}.example/robots.txt", 0, "tls", "certificate expired")
        services.queue_server_heartbeat(server, f"http://127.0.0.1:{9 + server}/", {
            "crawl": crawl.pk, "idle": True, "pages_fetched": 1, "fetch_errors": 1,
            "robots_failures": failures.to_json()})
    QueueServerProcess(0, 2, "http://127.0.0.1:9/", lambda message: None)._update_crawl(
        crawl.pk)
    crawl.refresh_from_db()
    assert crawl.status == "stopped" and crawl.fetch_errors == 2
    assert crawl.robots_failures == {"fetches": 2, "failed": 2, "kinds": {"tls": {
        "count": 2, "url": "https://a.example/robots.txt", "message": "certificate expired"}}}
    assert crawl.end_reason == ("every robots.txt fetch failed: 2 hosts, TLS error (example: "
                                "https://a.example/robots.txt: certificate expired)")
    services.crawl_close(crawl.pk)
