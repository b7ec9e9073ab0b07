"""The crawl status page and its JSON keep up with the crawl (issue 19): the buttons each state
allows (and none to a user who may only look), the counters' legend, "now" as a rate over a
stated window, the three-series chart, and failed pages by kind with examples; the Machines page
is in the admin's menu and shows each fetcher process, gone ones as gone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse
from django.utils import timezone

from crawler import services
from crawler.models import Crawl, CrawlSample, Fetcher, QueueServer

pytestmark = pytest.mark.django_db


def status_json(client, crawl):
    response = client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk]))
    assert response.status_code == 200
    return response.json()


def test_allowed_actions_follow_the_state(admin_client, make_crawl):
    crawl = make_crawl()
    def stopping(pk):  # what a stop is while queue servers still save the crawl
        Crawl.objects.filter(pk=pk).update(status="stopping")

    steps = [(None, "new", ["start"]), (services.crawl_start, "running", ["stop"]),
             (stopping, "stopping", []), (services.crawl_mark_saved, "resumable",
                                          ["close", "resume"]),
             (services.crawl_resume, "running", ["stop"]),
             (lambda pk: services.crawl_finish(pk, analyse=False), "stopped", ["close"]),
             (services.crawl_close, "closed", [])]
    for service, status, actions in steps:
        if service:
            service(crawl.pk)
        data = status_json(admin_client, crawl)
        assert (data["status"], data["actions"]) == (status, actions)
        assert data["status_label"].lower() == status
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content
    assert b'data-action-url="/admin/crawler/crawl/%d/do/ACTION/"' % crawl.pk in page


def test_a_viewer_gets_no_buttons(client, make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    viewer = User.objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_crawl"))
    client.force_login(viewer)
    assert status_json(client, crawl)["actions"] == []
    page = client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content.decode()
    assert 'name="crawl-stop"' not in page and 'id="crawl-csrf"' not in page


def test_counters_legend_on_the_page(admin_client, make_crawl):
    crawl = make_crawl()
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    body = page.content.decode()
    assert 'id="crawl-counters-legend"' in body
    for text in ("robots.txt fetches are not pages", "Distinct urls accepted",
                 "one link document per kept link", "Pages per second (last 60 s)"):
        assert text in body
    # each counter's row carries its meaning as a tooltip
    assert body.count('<tr title="') >= 9


def test_rate_now_is_over_the_last_minute(admin_client, make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    now = timezone.now()
    Crawl.objects.filter(pk=crawl.pk).update(started_at=now - timedelta(seconds=300),
                                             pages_fetched=1000)
    for ago, pages in ((200, 100), (70, 400), (40, 700)):
        CrawlSample.objects.create(crawl=crawl, at=now - timedelta(seconds=ago),
                                   pages_fetched=pages, documents_indexed=0, fetch_errors=0)
    data = status_json(admin_client, crawl)
    # 600 pages since the sample 70 s ago (the newest at least 60 s old): about 8.6/s
    assert data["rate_window_wanted"] == 60.0
    assert 69.0 <= data["rate_window"] <= 75.0
    assert data["rate_now"] == pytest.approx(600 / data["rate_window"], abs=0.01)
    assert data["pages_per_second"] == pytest.approx(1000 / 300, abs=0.05)
    # a young crawl: the window is its age
    young = make_crawl(name="young")
    services.crawl_finish(crawl.pk, analyse=False)  # one crawl is active at a time
    services.crawl_start(young.pk)
    Crawl.objects.filter(pk=young.pk).update(started_at=now - timedelta(seconds=20),
                                             pages_fetched=40)
    data = status_json(admin_client, young)
    assert 19.0 <= data["rate_window"] <= 25.0 and data["rate_now"] > 1.5


def test_chart_has_three_series_axes_and_a_legend(admin_client, make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    start = timezone.now() - timedelta(seconds=100)
    Crawl.objects.filter(pk=crawl.pk).update(started_at=start)
    for i, (pages, docs, errors) in enumerate([(0, 0, 0), (40, 90, 4), (100, 200, 4)]):
        CrawlSample.objects.create(crawl=crawl, at=start + timedelta(seconds=20 * (i + 1)),
                                   pages_fetched=pages, documents_indexed=docs,
                                   fetch_errors=errors)
    chart = status_json(admin_client, crawl)["chart"]
    assert [s["label"] for s in chart["series"]] == ["fetched", "indexed", "errors"]
    # steps from the start (0) to each sample and on to now: 4 intervals, 2 points each
    assert all(len(s["points"].split()) == 8 for s in chart["series"])
    assert chart["x_label"] == "time since the crawl started"
    assert chart["x_ticks"][-1]["label"].endswith((" s", " min"))  # 100 s and more
    assert 3 <= float(chart["y_ticks"][-1]["label"]) < 5.5  # pages: 3 per second at most
    assert float(chart["y2_ticks"][-1]["label"]) >= 5.5  # indexed: 5.5 documents per second
    assert [s["axis"] for s in chart["series"]] == ["left", "right", "left"]
    body = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content
    assert b'data-series="errors"' in body and b"indexed per second" in body


def test_errors_by_kind_with_examples(admin_client, make_crawl):
    crawl = make_crawl()
    services.crawl_start(crawl.pk)
    Crawl.objects.filter(pk=crawl.pk).update(
        pages_fetched=10, fetch_errors=4, fetch_error_kinds={
            "connection": {"count": 3, "url": "http://127.0.0.1:1/a", "message": "refused"},
            "http_500": {"count": 1, "url": "http://127.0.0.1:2/b",
                         "message": "answered HTTP 500"}})
    data = status_json(admin_client, crawl)
    assert [(r["label"], r["count"]) for r in data["fetch_errors_by_kind"]] == [
        ("connection refused or reset", 3), ("HTTP 500", 1)]
    assert data["errors_summary"].startswith("4 of 10 pages fetched failed: connection")
    body = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content
    assert b"http://127.0.0.1:1/a: refused" in body and b"Why pages failed" in body
    # a crawl that ends with nothing indexed says why
    services.crawl_finish(crawl.pk, analyse=False)
    crawl.refresh_from_db()
    assert crawl.end_reason.startswith("nothing was indexed; 4 of 10 pages fetched failed")


def test_machines_in_the_menu_one_row_per_process_gone_ones_gone(admin_client, settings):
    settings.FETCHER_HEARTBEAT_SECONDS = 10.0
    QueueServer.objects.create(server_id=0, base_url="http://127.0.0.1:9/")
    services.fetcher_heartbeat("vm:41", "vm", 41, "idle", rate=0.0)
    services.fetcher_heartbeat("vm:42", "vm", 42, "fetching", schedule="s-7", rate=2.5)
    services.fetcher_heartbeat("vm:43", "vm", 43, "idle")
    Fetcher.objects.filter(name="vm:43").update(
        last_heartbeat=timezone.now() - timedelta(seconds=31))
    index = admin_client.get("/admin/").content.decode()
    menu = reverse("admin:crawler_machine_changelist")
    assert f'href="{menu}"' in index and ">Machines<" in index
    page = admin_client.get(menu)
    assert page.status_code == 200 and b"machines.js" in page.content
    rows = {m["name"]: m for m in admin_client.get(
        reverse("admin:crawler_machines_json")).json()["machines"]}
    assert rows["vm:41"]["state"] == "idle" and rows["vm:43"]["state"] == "gone"
    assert rows["vm:42"]["schedule"] == "s-7" and rows["vm:42"]["rate"] == 2.5
    assert rows["0 (http://127.0.0.1:9/)"]["kind"] == "queue server"
    # a row silent for longer than FETCHER_ROWS_KEPT is pruned by the next heartbeat
    Fetcher.objects.filter(name="vm:43").update(
        last_heartbeat=timezone.now() - services.FETCHER_ROWS_KEPT - timedelta(seconds=1))
    services.fetcher_heartbeat("vm:41", "vm", 41, "idle")
    assert not Fetcher.objects.filter(name="vm:43").exists()


def test_machines_refused_to_staff_without_crawl_permissions(client):
    user = User.objects.create_user("nobody", password="pw", is_staff=True)
    client.force_login(user)
    assert client.get(reverse("admin:crawler_machine_changelist")).status_code == 403
    assert client.get(reverse("admin:crawler_machines_json")).status_code == 403
