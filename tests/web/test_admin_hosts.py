"""The admin's url and host pages of a crawl (issue 19, item 3), through the Django client:
fetched urls paged newest first by key, refused urls grouped by reason, queued urls by tier
from the heartbeats, hosts paged in three orders, one host's page and its actions, and the
permissions (view for the pages, change for the actions)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils.html import escape

from crawler import services
from crawler.models.hosts import CrawlHost, FetchedUrl, HostOverride, RefusalCount, RefusedUrl

pytestmark = pytest.mark.django_db

A = "http://a.example"
WHEN = "2025-01-01T00:00:00Z"


def older_link(body: str) -> str | None:
    found = re.search(r'<a href="([^"]+)" rel="next"', body)
    return found and found.group(1).replace("&amp;", "&")


def fetched_urls(body: str) -> list[str]:
    return re.findall(r'<tr data-id="\d+"><td><a [^>]+>([^<]+)</a>', body)


@pytest.fixture
def crawl(make_crawl):
    crawl = make_crawl(seeds=())
    FetchedUrl.objects.bulk_create(
        FetchedUrl(crawl=crawl, url=f"{A}/{i}", origin=A, status=200 if i % 10 else 503,
                   size=i, fetched_at=WHEN) for i in range(120))
    return crawl


def test_fetched_urls_are_paged_newest_first(admin_client, crawl):
    url = reverse("admin:crawler_crawl_fetched", args=[crawl.pk])
    first = admin_client.get(url).content.decode()
    assert fetched_urls(first) == [f"{A}/{i}" for i in range(119, 69, -1)]
    second = admin_client.get(older_link(first)).content.decode()
    assert fetched_urls(second) == [f"{A}/{i}" for i in range(69, 19, -1)]
    third = admin_client.get(older_link(second)).content.decode()
    assert fetched_urls(third) == [f"{A}/{i}" for i in range(19, -1, -1)]
    assert older_link(third) is None
    newer = re.search(r'<a href="([^"]+)" rel="prev"', third).group(1).replace("&amp;", "&")
    assert fetched_urls(admin_client.get(newer).content.decode()) == fetched_urls(second)
    assert admin_client.get(url + "?before=x").status_code == 400
    assert admin_client.get(url + "?after=-3").status_code == 400


def test_refused_urls_are_grouped_by_reason(admin_client, crawl):
    for server, (reason, count) in enumerate((("robots", 40), ("depth", 3), ("robots", 2))):
        RefusalCount.objects.create(crawl=crawl, server=server, reason=reason, count=count)
    RefusedUrl.objects.bulk_create(
        RefusedUrl(crawl=crawl, url=f"{A}/private/{i}", origin=A, reason="robots",
                   refused_at=WHEN) for i in range(60))
    RefusedUrl.objects.create(crawl=crawl, url=f"{A}/deep", origin=A, reason="depth",
                              refused_at=WHEN)
    url = reverse("admin:crawler_crawl_refused", args=[crawl.pk])
    body = admin_client.get(url).content.decode()
    groups = re.findall(r'<tr data-reason="(\w+)"><th scope="row"><a [^>]+>([^<]+)</a></th>'
                        r'<td>(\d+)</td>', body)
    assert groups == [("robots", "robots.txt disallows it", "42"),
                      ("depth", "past the crawl&#x27;s depth limit", "3")]
    assert f"{A}/private/59" in body and f"{A}/private/54" not in body  # 5 newest examples
    robots = admin_client.get(url + "?reason=robots").content.decode()
    assert "robots.txt disallows it" in robots and len(fetched_urls(robots)) == 50
    rest = admin_client.get(older_link(robots)).content.decode()
    assert fetched_urls(rest) == [f"{A}/private/{i}" for i in range(9, -1, -1)]
    assert admin_client.get(url + "?reason=nonsense").status_code == 400


def test_queued_urls_by_tier_from_the_heartbeats(admin_client, crawl):
    services.queue_server_heartbeat(0, "http://127.0.0.1:9/", {
        "crawl": crawl.pk, "tiers": {"0": 5, "2": 7}, "queued": 14, "robots_txt_queued": 2,
        "waiting_robots": 3, "crawl_delayed": 1, "needy_queued": 0})
    services.queue_server_heartbeat(1, "http://127.0.0.1:10/", {
        "crawl": crawl.pk, "tiers": {"2": 1}, "queued": 1})
    body = admin_client.get(reverse("admin:crawler_crawl_queued", args=[crawl.pk])
                            ).content.decode()
    tiers = re.search(r'id="queued-tiers">.*?</table>', body, re.S).group(0)
    assert re.findall(r'<th scope="row">(\d+)</th><td>(\d+)</td>', tiers) == [
        ("0", "5"), ("2", "8")]
    assert "15 urls queued" in body


def test_hosts_are_paged_in_each_order(admin_client, crawl):
    CrawlHost.objects.bulk_create(
        CrawlHost(crawl=crawl, origin=f"http://h{i:03}.example", server=0, requests=i % 7,
                  errors=i % 3) for i in range(75))
    url = reverse("admin:crawler_crawl_hosts", args=[crawl.pk])
    seen = []
    page = url + "?sort=requests"
    while page:
        body = admin_client.get(page).content.decode()
        seen += re.findall(r'\?origin=[^"]+">(http://h\d+\.example)</a></td><td>(\d+)', body)
        page = older_link(body)
    assert len(seen) == 75 and len({o for o, _ in seen}) == 75
    assert [int(r) for _, r in seen] == sorted((int(r) for _, r in seen), reverse=True)
    body = admin_client.get(url).content.decode()
    assert re.findall(r'>(http://h\d+\.example)</a>', body)[:2] == [
        "http://h000.example", "http://h001.example"]
    body = admin_client.get(url + "?q=h07").content.decode()
    assert re.findall(r'>(http://h\d+\.example)</a>', body) == [
        f"http://h07{i}.example" for i in range(5)]
    assert admin_client.get(url + "?sort=bogus").status_code == 400


def test_the_host_page_and_its_actions(admin_client, crawl):
    CrawlHost.objects.create(crawl=crawl, origin=A, server=0, requests=120, errors=12,
                             size=7140, robots_status=200, delay=2.0,
                             robots_text="User-agent: *\nDisallow: /private/\nCrawl-delay: 2",
                             state="crawl-delayed (2 s between requests)")
    RefusedUrl.objects.create(crawl=crawl, url=f"{A}/private/1", origin=A, reason="robots",
                              refused_at=WHEN)
    url = reverse("admin:crawler_crawl_host", args=[crawl.pk])
    body = admin_client.get(url, {"origin": A}).content.decode()
    assert escape("Disallow: /private/") in body and "crawl-delayed (2 s" in body
    assert 'data-host="requests">120<' in body and f"{A}/119" in body
    assert "robots.txt disallows it" in body and 'id="host-exclude"' in body
    response = admin_client.post(url, {"origin": A, "action": "slow", "min_delay": "5"})
    assert response.status_code == 302
    admin_client.post(url, {"origin": A, "action": "exclude"})
    row = HostOverride.objects.get(crawl=crawl, origin=A)
    assert (row.min_delay, row.excluded, row.applied_at) == (5.0, True, None)
    assert "Waiting for its queue server" in admin_client.get(url, {"origin": A}
                                                              ).content.decode()
    admin_client.post(url, {"origin": A, "action": "lift"})
    row.refresh_from_db()
    assert (row.min_delay, row.excluded) == (0.0, False)
    for bad in ({"origin": A, "action": "slow", "min_delay": "-1"},
                {"origin": A, "action": "slow", "min_delay": "soon"},
                {"origin": A, "action": "explode"},
                {"origin": A + "/path", "action": "exclude"}):
        assert admin_client.post(url, bad).status_code == 400, bad
    assert admin_client.get(url, {"origin": "http://nowhere.example"}).status_code == 404


def staff(client, django_user_model, *codenames):
    user = django_user_model.objects.create_user("staff", password="pw-staff-1", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client.force_login(user)
    client.raise_request_exception = False
    return client


def test_permissions(client, django_user_model, crawl):
    CrawlHost.objects.create(crawl=crawl, origin=A, server=0)
    pages = [reverse(f"admin:crawler_crawl_{name}", args=[crawl.pk])
             for name in ("fetched", "refused", "queued", "hosts")]
    host = reverse("admin:crawler_crawl_host", args=[crawl.pk])
    c = staff(client, django_user_model)
    assert all(c.get(p).status_code == 403 for p in pages)
    assert c.get(host, {"origin": A}).status_code == 403
    user = django_user_model.objects.get(username="staff")
    user.user_permissions.set(Permission.objects.filter(codename="view_crawl"))
    assert all(c.get(p).status_code == 200 for p in pages)
    body = c.get(host, {"origin": A}).content.decode()
    assert 'id="host-exclude"' not in body  # no buttons it may not use
    assert c.post(host, {"origin": A, "action": "exclude"}).status_code == 403
    assert not HostOverride.objects.exists()
    status = c.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content.decode()
    assert reverse("admin:crawler_crawl_refused", args=[crawl.pk]) in status
