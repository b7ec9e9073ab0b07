"""The admin's crawl options of issue 37, item 8: a sleep window and per-site quotas
(``site#N``) are validated with clear errors, and a running crawl's seeds and sites are saved
and said to reach it within a minute, while its order cannot change."""

from __future__ import annotations

import pytest
from django.urls import reverse

from crawler import services
from crawler.core.definition.sleep import SleepWindow
from crawler.models import Crawl
from crawler.selectors import crawl_config_get
from tests.web.forms import admin_change_data
from tests.web.test_admin import crawl_form

pytestmark = pytest.mark.django_db


def test_bad_sleep_windows_and_quotas_are_named(admin_client, options):
    response = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, sleep_window="8-20", allowed_sites="a.com#5",
        disallowed_sites="b.com#0\nc.com#12"))
    body = response.content.decode()
    assert response.status_code == 200 and not Crawl.objects.exists()
    assert "a sleep window is written HH:MM-HH:MM, for example 08:00-20:00" in body
    assert "line 1: a quota (site#N) belongs in the disallowed sites" in body
    assert "line 1: a quota must be a whole number of urls per hour from 1 to 10000000" in body
    assert "line 2" not in body  # c.com#12 is a good quota


def test_a_sleep_window_and_quotas_reach_the_crawl(admin_client, options):
    admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, sleep_window="22:00-06:00", bulk_seeds="https://a.com/",
        disallowed_sites="domain:a.com#100\nb.com"))
    config = crawl_config_get(Crawl.objects.get(name="docs").pk)
    assert config.sleep == SleepWindow(22 * 60, 6 * 60)
    assert [(r.source, n) for r, n in config.site_rules.quotas] == [("domain:a.com", 100)]
    assert [r.source for r in config.site_rules.disallowed] == ["b.com"]


def test_a_running_crawl_takes_new_sites_but_keeps_its_order(admin_client, make_crawl):
    crawl = make_crawl(seeds=("https://a.com/",))
    services.crawl_start(crawl.pk)
    url = reverse("admin:crawler_crawl_change", args=[crawl.pk])
    data = admin_change_data(admin_client, url)
    data.update({"bulk_seeds": "https://b.com/", "disallowed_sites": "c.com",
                 "sleep_window": "09:00-17:00", "bulk_policy": "default",
                 "bulk_trust_weight": "1.0"})
    response = admin_client.post(url, data, follow=True)
    body = response.content.decode()
    form = response.context.get("adminform")
    assert form is None, form.form.errors if form else ""
    assert "is running: its queue servers follow the new seeds, sites, quotas and sleep " \
           "window within a minute" in body
    config = crawl_config_get(crawl.pk)
    assert [s.url for s in config.seeds] == ["https://a.com/", "https://b.com/"]
    assert [r.source for r in config.site_rules.disallowed] == ["c.com"]
    assert str(config.sleep) == "09:00-17:00"
    data = admin_change_data(admin_client, url)
    data.update({"bulk_policy": "default", "bulk_trust_weight": "1.0"})
    data["order"] = "breadth_first" if data["order"] != "breadth_first" else "opic"
    body = admin_client.post(url, data).content.decode()
    assert "A running crawl keeps the order it started with" in body
    assert Crawl.objects.get(pk=crawl.pk).order == crawl.order


def test_the_status_page_says_when_the_crawl_sleeps(admin_client, make_crawl):
    crawl = make_crawl(seeds=("https://a.com/",))
    Crawl.objects.filter(pk=crawl.pk).update(sleep_window="08:00-20:00")
    services.crawl_start(crawl.pk)
    status_json = reverse("admin:crawler_crawl_status_json", args=[crawl.pk])
    services.queue_server_heartbeat(0, "http://127.0.0.1:9/", {"crawl": crawl.pk,
                                                                "asleep": False})
    assert admin_client.get(status_json).json()["asleep"] is False
    services.queue_server_heartbeat(0, "http://127.0.0.1:9/", {"crawl": crawl.pk,
                                                                "asleep": True})
    data = admin_client.get(status_json).json()
    assert data["asleep"] is True and data["sleep_window"] == "08:00-20:00"
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    body = page.content.decode()
    assert '<div id="crawl-sleep" role="status">' in body and "Crawl asleep" in body
