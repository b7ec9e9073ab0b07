"""Refused urls counted wherever they are refused, the fetcher included (issue 39, item 3): a
crawl restricted to its seed site with a depth limit of 1 (``manage.py crawl``, in this
process, of a loopback site) used to drop the links to other hosts and past the depth in the
fetcher, uncounted: the refused urls view said "No url has been refused". Now the view counts
both reasons, per host, with examples, and no other host was contacted."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from crawler.models import Crawl
from tests.fixtures.sites import FixtureServer
from tests.fixtures.sites.sites import html, html_page, not_found

pytestmark = pytest.mark.django_db(transaction=True)

FAR = ("http://far-one.example.test/a.html", "http://far-two.example.test/b.html",
       "http://far-two.example.test/c.html")
PAGES = {"/": ["/level1.html", *FAR], "/level1.html": ["/level2.html", "/level2b.html"],
         "/level2.html": ["/level3.html"]}


def route(request):
    links = PAGES.get(request.path)
    if links is None:
        return not_found(request)
    return html(html_page(f"page {request.path}", "refusal counting site", links))


@pytest.fixture
def crawled(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "work"
    with FixtureServer(route) as server:
        call_command("crawl", server.url("/"), "--restrict", "--max-depth", "1",
                     "--max-seconds", "60", "--no-link-analysis")
    return server, Crawl.objects.get()


def test_fetcher_refusals_are_counted_per_reason_and_host(admin_client, crawled):
    server, crawl = crawled
    assert server.requests_for("/level1.html") and server.requests_for("/level2.html") == []
    refused = reverse("admin:crawler_crawl_refused", args=[crawl.pk])
    summary = admin_client.get(refused).content.decode()
    assert "No url has been refused" not in summary
    outside = re.search(r'<tr data-reason="outside_seeds">(.*?)</tr>', summary, re.S).group(1)
    assert "outside the seed and allowed sites" in outside
    assert "<td>3</td>" in outside  # three urls, on two hosts
    assert re.search(r'class="refused-hosts">2<', outside)
    assert "http://far-two.example.test: 2" in outside and "http://far-one.example.test: 1" in \
        outside
    assert FAR[0] in outside
    depth = re.search(r'<tr data-reason="depth">(.*?)</tr>', summary, re.S).group(1)
    assert "past the crawl&#x27;s depth limit" in depth and "<td>2</td>" in depth
    assert server.url("/level2.html") in depth and "depth 2 &gt; the limit 1" in depth

    page = admin_client.get(refused, {"reason": "outside_seeds"}).content.decode()
    hosts = re.search(r'<table id="refused-hosts".*?</table>', page, re.S).group(0)
    assert re.findall(r'data-origin="([^"]+)"', hosts) == ["http://far-two.example.test",
                                                          "http://far-one.example.test"]
    assert "By host (2 hosts)" in page
    for url in FAR:
        assert url in page
    # the host page of a refused host lists its refused urls
    host = admin_client.get(reverse("admin:crawler_crawl_host", args=[crawl.pk]),
                            {"origin": "http://far-two.example.test"})
    assert host.status_code == 200 and FAR[1] in host.content.decode()

    for reason in ("nope", "outside_seeds\x00", "x" * 500):  # bad input: 400, never a 500
        assert admin_client.get(refused, {"reason": reason}).status_code == 400
