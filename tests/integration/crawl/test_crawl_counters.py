"""The crawl's counters agree and its failed pages say why (issue 19), with real crawls of
loopback sites (``manage.py crawl``, the queue servers' reports going through the queue-server
glue as their heartbeats do):

* a page limit is a limit: 5 gave 7 pages fetched (each host's robots.txt counted as a page),
  and pages fetched passed the urls seen;
* failed page downloads arrive on the crawl by kind, each with an example: a host that resets
  every connection, pages answering 500 and 503, a page that answers too slowly."""

from __future__ import annotations

import socket
import struct

import pytest
from django.core.management import call_command
from django.urls import reverse

from crawler.models import Crawl
from tests.fixtures.sites import FixtureServer, normal_site
from tests.fixtures.sites.server import Response
from tests.fixtures.sites.sites import Router, html, html_page, slow_route, status_route

pytestmark = pytest.mark.django_db


def test_a_page_limit_is_a_limit_and_pages_fetched_never_pass_urls_seen(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    one, two = normal_site("limitone", pages=8, crawl_delay=0.0), \
        normal_site("limittwo", pages=8, crawl_delay=0.0)
    with FixtureServer(one.route, host="127.0.0.2") as a, \
            FixtureServer(two.route, host="127.0.0.3") as b:
        call_command("crawl", a.url("/"), b.url("/"), "--max-pages", "5",
                     "--queue-servers", "1", "--max-seconds", "60", "--no-link-analysis")
        fetched = [e.path for s in (a, b) for e in s.log if e.path != "/robots.txt"]
    crawl = Crawl.objects.get()
    assert len(fetched) == 5
    assert crawl.pages_fetched == 5 and crawl.pages_fetched <= crawl.urls_seen
    assert crawl.fetch_errors == 0 and crawl.robots_failures["fetches"] == 2


def resetting_host(request):
    """robots.txt is missing (crawling allowed); every other request's connection is reset."""
    if request.path == "/robots.txt":
        return Response(404, b"", {})

    def write(sock: socket.socket) -> None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return write


def test_failed_pages_arrive_on_the_crawl_by_kind_with_examples(tmp_path, settings,
                                                                admin_client):
    settings.WORK_DIRECTORY = tmp_path
    settings.CRAWLER_READ_TIMEOUT = 1.0
    with FixtureServer(resetting_host, host="127.0.0.5") as reset:
        links = ["/status/500", "/status/503", "/slow?stall=4", "/fine",
                 reset.url("/gone"), reset.url("/gone-too")]
        router = Router().add("/status", status_route).add("/slow", slow_route)
        router.add("/fine", lambda r: html(html_page("fine", "a page that works")))
        router.add("/", lambda r: html(html_page("errors home", "links that fail", links)))
        with FixtureServer(router, host="127.0.0.4") as site:
            call_command("crawl", site.url("/"), "--max-seconds", "60", "--no-link-analysis")
    crawl = Crawl.objects.get()
    kinds = crawl.fetch_error_kinds
    assert {k: row["count"] for k, row in kinds.items()} == {
        "http_500": 1, "http_503": 1, "read_timeout": 1, "connection": 2}
    assert kinds["http_500"] == {"count": 1, "url": site.url("/status/500"),
                                 "message": "answered HTTP 500"}
    assert kinds["connection"]["url"] in (reset.url("/gone"), reset.url("/gone-too"))
    assert kinds["read_timeout"]["url"] == site.url("/slow?stall=4")
    assert crawl.fetch_errors == 5 and crawl.pages_fetched == 7
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    assert [(r["kind"], r["count"]) for r in data["fetch_errors_by_kind"]] == [
        ("connection", 2), ("http_500", 1), ("http_503", 1), ("read_timeout", 1)]
    assert data["errors_summary"].startswith("5 of 7 pages fetched failed: connection refused")
    body = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content
    assert site.url("/status/500").encode() + b": answered HTTP 500" in body
