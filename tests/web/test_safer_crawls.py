"""Safer new crawls and a crawl stopped at its page limit (issue 39, items 7 and 9).

A new crawl's form starts restricted to its seeds' sites with a page limit; Start on a crawl
with neither asks to confirm (the list action does not start it). A crawl that reaches its
page limit with urls still queued says "page limit reached; N urls left; raise the limit and
resume", and goes on from its saved queues when the limit is raised: a real ``manage.py
crawl`` of a loopback site, its status page's form, then ``manage.py crawl --resume``."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from crawler import services
from crawler.core.definition.crawl import CrawlStatus
from crawler.models import Crawl
from tests.fixtures.sites import FixtureServer, normal_site
from tests.web.test_admin import crawl_form


@pytest.mark.django_db
def test_new_crawl_form_starts_restricted_with_a_page_limit(admin_client):
    html = admin_client.get(reverse("admin:crawler_crawl_add")).content.decode()
    box = re.search(r'<input[^>]*name="restrict_to_seeds"[^>]*>', html).group(0)
    assert "checked" in box
    limit = re.search(r'<input[^>]*name="max_pages"[^>]*>', html).group(0)
    assert f'value="{services.NEW_CRAWL_MAX_PAGES}"' in limit


@pytest.mark.django_db
def test_a_crawl_saved_without_seeds_is_told_at_once(admin_client, options):
    """Issue 39, item 10: a crawl with no seeds saved quietly and failed only at Start."""
    answer = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(options),
                               follow=True)
    assert answer.status_code == 200
    assert "no seed sites yet, so Start would refuse it" in answer.content.decode()
    seeded = admin_client.post(reverse("admin:crawler_crawl_add"), crawl_form(
        options, name="seeded", bulk_seeds="https://a.example/"), follow=True)
    assert "no seed sites yet" not in seeded.content.decode()


@pytest.mark.django_db
def test_start_of_an_open_ended_crawl_asks_to_confirm(admin_client, make_crawl):
    crawl = make_crawl(name="anywhere")  # not restricted, no page limit
    start = reverse("admin:crawler_crawl_action", args=[crawl.pk, "start"])
    asked = admin_client.post(start)
    assert asked.status_code == 200
    page = asked.content.decode()
    assert "follows links to any site, without end" in page and 'name="confirm"' in page
    crawl.refresh_from_db()
    assert crawl.status == CrawlStatus.NEW
    listing = reverse("admin:crawler_crawl_changelist")
    answer = admin_client.post(listing, {"action": "start_crawls", "_selected_action": [crawl.pk]},
                               follow=True)
    assert "not started: it is neither restricted" in answer.content.decode()
    crawl.refresh_from_db()
    assert crawl.status == CrawlStatus.NEW
    assert admin_client.post(start, {"confirm": "yes please"}).status_code == 200  # not it
    crawl.refresh_from_db()
    assert crawl.status == CrawlStatus.NEW
    done = admin_client.post(start, {"confirm": "open-web"})
    assert done.status_code == 302
    crawl.refresh_from_db()
    assert crawl.status == CrawlStatus.RUNNING


@pytest.mark.django_db
@pytest.mark.parametrize("fields", [{"restrict_to_seeds": True}, {"max_pages": 50}])
def test_a_restricted_or_limited_crawl_starts_at_once(admin_client, make_crawl, fields):
    crawl = make_crawl(name="bounded", **fields)
    answer = admin_client.post(reverse("admin:crawler_crawl_action", args=[crawl.pk, "start"]))
    assert answer.status_code == 302
    crawl.refresh_from_db()
    assert crawl.status == CrawlStatus.RUNNING


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("raised_in", ["admin", "command"])
def test_page_limit_reached_says_so_and_resumes_with_a_raised_limit(admin_client, tmp_path,
                                                                    settings, raised_in):
    settings.WORK_DIRECTORY = tmp_path / "work"
    site = normal_site("pagelimit", pages=12, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        call_command("crawl", server.url("/"), "--max-pages", "4", "--restrict",
                     "--max-seconds", "60", "--no-link-analysis", "--queue-servers", "1")
        crawl = Crawl.objects.get()
        assert crawl.status == CrawlStatus.STOPPED
        reason = re.fullmatch(r"page limit reached \(4 pages\); (\d+) urls left; raise the "
                              r"limit and resume", crawl.end_reason)
        assert reason and int(reason.group(1)) > 0, crawl.end_reason
        resume = ["--max-pages", "100"]  # manage.py crawl --resume raises it itself
        if raised_in == "admin":
            resume = []
            status = reverse("admin:crawler_crawl_status", args=[crawl.pk])
            page = admin_client.get(status).content.decode()
            assert "urls left; raise the limit and resume" in page
            assert 'id="crawl-raise-limit"' in page and 'value="8"' in page
            raise_url = reverse("admin:crawler_crawl_raise_limit", args=[crawl.pk])
            # bad numbers: a message, never a 5xx, nothing changes
            for bad in ("", "abc", "-3", "2", "4", "9" * 30, "1e9"):
                answer = admin_client.post(raise_url, {"max_pages": bad}, follow=True)
                assert answer.status_code == 200 and 'class="error"' in answer.content.decode()
                crawl.refresh_from_db()
                assert crawl.status == CrawlStatus.STOPPED and crawl.max_pages == 4, bad
            assert admin_client.get(raise_url).status_code == 405
            assert admin_client.post(raise_url, {"max_pages": "100"}).status_code == 302
            crawl.refresh_from_db()
            assert (crawl.status, crawl.max_pages, crawl.end_reason) == \
                (CrawlStatus.RUNNING, 100, "")
            # no queue server runs here to take it up: stopped (resumable at once, nothing to
            # save), it runs on in this process from its saved queues, with the raised limit
            services.crawl_stop(crawl.pk, analyse=False)
        call_command("crawl", "--resume", str(crawl.pk), *resume, "--max-seconds", "60",
                     "--no-link-analysis", "--queue-servers", "1")
        last = server.requests_for("/page/12.html")
    crawl.refresh_from_db()
    assert crawl.status == CrawlStatus.STOPPED and crawl.end_reason == ""
    assert crawl.pages_fetched > 4 and crawl.urls_queued == 0
    assert last, "the resumed crawl did not reach the pages left"
