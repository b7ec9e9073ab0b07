"""Every admin page and action, through the Django test client."""

import pytest
from django.urls import reverse

from crawler.models import Crawl, PageOptions, QueueServer, Scraper, SeedSite
from tests.web.forms import admin_change_data

pytestmark = pytest.mark.django_db

MODELS = ["crawl", "seedsite", "pageoptions", "scraper", "queueserver"]


@pytest.fixture
def objects(make_crawl):
    # restricted to its seed's site: Start starts it without asking (issue 39, item 7)
    crawl = make_crawl(restrict_to_seeds=True)
    scraper = Scraper.objects.create(name="wp", signature="//meta")
    server = QueueServer.objects.create(server_id=0, base_url="http://127.0.0.1:9/")
    return {"crawl": crawl, "seedsite": crawl.seeds.first(),
            "pageoptions": PageOptions.objects.get(is_default=True), "scraper": scraper,
            "queueserver": server}


@pytest.mark.parametrize("model", MODELS)
def test_changelist_add_and_change_pages(admin_client, objects, model):
    for url in (reverse(f"admin:crawler_{model}_changelist"),
                reverse(f"admin:crawler_{model}_add"),
                reverse(f"admin:crawler_{model}_change", args=[objects[model].pk])):
        response = admin_client.get(url)
        # queue-server rows are written by their queue servers only: no add page
        expected = 403 if model == "queueserver" and url.endswith("/add/") else 200
        assert response.status_code == expected, url


def test_admin_index_lists_crawl_management(admin_client):
    body = admin_client.get("/admin/").content.decode()
    for name in ("Crawls", "Seed sites", "Page options", "Scrapers", "Queue servers"):
        assert name in body


def test_anonymous_is_sent_to_login(client, objects):
    response = client.get(reverse("admin:crawler_crawl_status", args=[objects["crawl"].pk]))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def crawl_form(options, **overrides):
    data = {
        "name": "docs", "description": "", "order": "host_budgeting", "max_pages": "0",
        "max_depth": "-1", "recrawl_days": "-1", "max_domain_share": "100",
        "allowed_sites": "", "disallowed_sites": "",
        "page_options": str(options.pk), "bulk_seeds": "", "bulk_policy": "default",
        "bulk_trust_weight": "1.0",
        "seeds-TOTAL_FORMS": "0", "seeds-INITIAL_FORMS": "0",
        "seeds-MIN_NUM_FORMS": "0", "seeds-MAX_NUM_FORMS": "1000",
    }
    data.update(overrides)
    return data


def test_add_crawl_with_bulk_seeds(admin_client, options):
    response = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, bulk_seeds="https://a.com\nhttps://B.com/docs\n", bulk_policy="favor",
        bulk_trust_weight="3"), follow=True)
    assert response.status_code == 200
    crawl = Crawl.objects.get(name="docs")
    assert sorted(crawl.seeds.values_list("url", "policy", "trust_weight")) == [
        ("https://a.com/", "favor", 3.0), ("https://b.com/docs", "favor", 3.0)]
    assert "Added 2 seed site(s)." in response.content.decode()


def test_add_crawl_with_a_bad_seed_line_is_refused_whole(admin_client, options):
    response = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, bulk_seeds="https://a.com\nftp://nope\n"))
    assert response.status_code == 200
    assert "line 2" in response.content.decode()
    assert not Crawl.objects.filter(name="docs").exists()
    assert not SeedSite.objects.exists()


def test_add_crawl_with_a_bad_site_rule(admin_client, options):
    response = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, disallowed_sites="ok.com\nregex:[oops"))
    body = response.content.decode()
    assert response.status_code == 200 and "line 2" in body and "bad regular expression" in body
    assert not Crawl.objects.exists()


def test_a_form_names_every_bad_line_at_once(admin_client, options):
    # issue 39, item 10: the seeds and the site rules named only their first bad line, so a
    # pasted block took one submit per mistake
    response = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, bulk_seeds="https://a.com\nftp://nope\n# note\nhttps://b.com\nno-scheme.org\n",
        allowed_sites="ok.com\nregex:[oops\ndomain:\nfine.org\nregex:(a"))
    body = response.content.decode()
    assert response.status_code == 200 and not Crawl.objects.exists()
    for bad in ("line 2 (&#x27;ftp://nope&#x27;)", "line 5 (&#x27;no-scheme.org&#x27;)",
                "line 2: bad regular expression", "line 3:", "line 5: bad regular expression"):
        assert bad in body, bad
    many = "\n".join(f"nope{i}" for i in range(25))
    body = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, bulk_seeds=many)).content.decode()
    assert "line 20 (" in body and "line 21 (" not in body and "and 5 more bad lines" in body


def test_page_options_out_of_range_shows_message(admin_client, options):
    url = reverse("admin:crawler_pageoptions_change", args=[options.pk])
    data = admin_change_data(admin_client, url)
    data["server_alpha"] = "0.1"
    response = admin_client.post(url, data)
    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 1.0" in response.content.decode()
    options.refresh_from_db()
    assert options.server_alpha == pytest.approx(1.6)


def test_add_scraper_with_bad_xpath(admin_client):
    response = admin_client.post(reverse("admin:crawler_scraper_add"), {
        "name": "bad", "signature": "//div[", "priority": "0", "text_path": "",
        "delete_paths": "", "extract_fields": ""})
    assert "invalid XPath" in response.content.decode()
    assert not Scraper.objects.exists()


def test_add_seed_duplicate_via_admin(admin_client, objects):
    crawl = objects["crawl"]
    response = admin_client.post(reverse("admin:crawler_seedsite_add"), {
        "crawl": crawl.pk, "url": "HTTPS://example.com", "policy": "default",
        "trust_weight": "1"})
    assert response.status_code == 200
    assert "already a seed of this crawl" in response.content.decode()


def run_list_action(admin_client, action, crawl):
    return admin_client.post(reverse("admin:crawler_crawl_changelist"), {
        "action": action, "_selected_action": [crawl.pk]}, follow=True)


def test_list_actions_walk_the_state_machine(admin_client, objects):
    crawl = objects["crawl"]
    body = run_list_action(admin_client, "start_crawls", crawl).content.decode()
    assert "start done; now running" in body
    body = run_list_action(admin_client, "start_crawls", crawl).content.decode()
    assert "cannot start a crawl that is running" in body
    run_list_action(admin_client, "stop_crawls", crawl)
    assert Crawl.objects.get(pk=crawl.pk).status == "resumable"
    run_list_action(admin_client, "resume_crawls", crawl)
    assert Crawl.objects.get(pk=crawl.pk).status == "running"
    body = run_list_action(admin_client, "close_crawls", crawl).content.decode()
    assert "cannot close a crawl that is running" in body
    run_list_action(admin_client, "stop_crawls", crawl)
    run_list_action(admin_client, "close_crawls", crawl)
    assert Crawl.objects.get(pk=crawl.pk).status == "closed"


def test_buttons_and_status_page(admin_client, objects):
    crawl = objects["crawl"]
    change = admin_client.get(reverse("admin:crawler_crawl_change", args=[crawl.pk]))
    assert 'name="crawl-start"' in change.content.decode()
    status_url = reverse("admin:crawler_crawl_status", args=[crawl.pk])
    page = admin_client.get(status_url).content.decode()
    assert 'id="crawl-counters"' in page and "https://example.com/" in page
    assert 'name="crawl-start"' in page
    start = reverse("admin:crawler_crawl_action", args=[crawl.pk, "start"])
    assert admin_client.get(start).status_code == 405
    response = admin_client.post(start, follow=True)
    assert response.redirect_chain[-1][0] == status_url
    page = response.content.decode()
    assert '<strong id="crawl-status">running</strong>' in page
    assert 'name="crawl-stop"' in page and 'name="crawl-start"' not in page
    assert "Page Options copied at start" in page
    bogus = reverse("admin:crawler_crawl_action", args=[crawl.pk, "explode"])
    assert "Unknown action" in admin_client.post(bogus, follow=True).content.decode()
    missing = reverse("admin:crawler_crawl_action", args=[9999, "start"])
    assert admin_client.post(missing).status_code == 404


def test_setting_a_new_default_page_options(admin_client, options):
    other = PageOptions.objects.create(name="Other")
    url = reverse("admin:crawler_pageoptions_change", args=[other.pk])
    data = admin_change_data(admin_client, url)
    data["is_default"] = "on"
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert PageOptions.objects.get(is_default=True) == other


def test_status_json_has_live_counters(admin_client, objects):
    from django.utils import timezone

    crawl = objects["crawl"]
    admin_client.post(reverse("admin:crawler_crawl_action", args=[crawl.pk, "start"]))
    Crawl.objects.filter(pk=crawl.pk).update(pages_fetched=42, documents_indexed=40)
    QueueServer.objects.filter(server_id=0).update(
        state="up", last_heartbeat=timezone.now(),
        counters={"crawl": crawl.pk, "tiers": {"0": 5, "2": 7}, "queued": 12, "inbox": 1})
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    assert data["status"] == "running"
    assert data["counters"]["pages_fetched"] == 42
    assert data["tiers"] == {"0": 5, "2": 7}
    (server,) = data["queue_servers"]
    assert server["working_on_this_crawl"] and server["queued"] == 12 and server["inbox"] == 1
    assert server["seconds_since_heartbeat"] < 5
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    body = page.content.decode()
    assert "Tier 2" in body and "crawl_status.js" in body and "data-status-url" in body


def test_samples_series_chart_and_machines_page(admin_client, objects):
    from datetime import timedelta

    from django.utils import timezone

    from crawler import crawl_page, selectors, services
    from crawler.models import CrawlSample

    crawl = objects["crawl"]
    services.crawl_start(crawl.pk)
    start = timezone.now() - timedelta(seconds=60)
    Crawl.objects.filter(pk=crawl.pk).update(started_at=start)
    for i, pages in enumerate([0, 50, 150]):
        CrawlSample.objects.create(crawl=crawl, at=start + timedelta(seconds=10 * (i + 1)),
                                   pages_fetched=pages, documents_indexed=0, fetch_errors=0)
    crawl.refresh_from_db()
    series = selectors.crawl_rate_series(crawl)
    assert series == [[20.0, 5.0], [30.0, 10.0]]
    chart = crawl_page.chart(crawl, now=start + timedelta(seconds=30))  # at the last sample
    assert [s["name"] for s in chart["series"]] == ["fetched", "indexed", "errors"]
    # steps: 0 from the start to the first sample, then 5 and 10 pages per second
    assert chart["series"][0]["points"] == (
        "56.0,160.0 232.0,160.0 232.0,85.0 408.0,85.0 408.0,10.0 584.0,10.0")
    assert [t["label"] for t in chart["x_ticks"]] == ["0 s", "10 s", "20 s", "30 s"]
    assert [t["label"] for t in chart["y_ticks"]] == ["0", "2.5", "5", "7.5", "10"]
    QueueServer.objects.filter(server_id=0).update(
        counters={"crawl": crawl.pk, "error_hosts": {"https://bad.example": 7}})
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    assert data["series"] == series and data["error_hosts"] == [["https://bad.example", 7]]
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content
    assert b'<polyline data-series="fetched"' in page and b"https://bad.example" in page
    assert b'class="y2-ticks"' in page and b"documents per second" in page
    assert b"time since the crawl started" in page and b"per second" in page

    services.fetcher_heartbeat("vm:42", "vm", 42, "fetching", schedule="s1")
    services.fetcher_heartbeat("vm:42", "vm", 42, "idle", pages=30, finished_schedule=True)
    machines = admin_client.get(reverse("admin:crawler_machines")).content.decode()
    assert "vm:42" in machines and "1 schedules, 30 pages" in machines
    assert "queue server" in machines
    services.crawl_sample_record(crawl.pk)
    services.crawl_sample_record(crawl.pk)  # within SAMPLE_EVERY: not recorded twice
    assert CrawlSample.objects.filter(crawl=crawl).count() == 4
