"""A crawl's refused urls in a real browser (issue 19, item 3): a loopback site whose
robots.txt disallows /private/ is crawled (``manage.py crawl``, in this process), then the
crawl's status page leads to its refused urls, grouped by reason, and the robots reason's page
lists the /private/ urls; the hosts page and the host's page show the site. A screenshot of
the hosts page goes to YIOOPY_SCREENSHOTS when it is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from crawler.models import Crawl
from tests.fixtures.sites import FixtureServer, normal_site

pytestmark = pytest.mark.django_db(transaction=True)


def screenshot(browser, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("YIOOPY_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(folder / f"{name}.png"))


def test_refused_urls_show_the_robots_reason(admin_browser, live_server, tmp_path, settings):
    from selenium.webdriver.common.by import By

    settings.WORK_DIRECTORY = tmp_path / "work"
    site = normal_site("refusedbrowser", pages=4, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "60", "--no-link-analysis")
        assert server.requests_for("/private/") == []
    crawl = Crawl.objects.get()
    browser = admin_browser
    browser.get(live_server.url + reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    browser.find_element(By.LINK_TEXT, "refused urls").click()
    row = browser.find_element(By.CSS_SELECTOR, '#refused-reasons tr[data-reason="robots"]')
    assert "robots.txt disallows it" in row.text
    assert server.url(site.disallowed_paths[0]) in row.text
    row.find_element(By.LINK_TEXT, "robots.txt disallows it").click()
    listing = browser.find_element(By.ID, "refused-urls").text
    for path in site.disallowed_paths:
        assert server.url(path) in listing, path
    browser.find_element(By.LINK_TEXT, "Hosts").click()
    origin = server.url("/").rstrip("/")
    hosts = browser.find_element(By.ID, "crawl-hosts").text
    assert origin in hosts and "crawling" in hosts
    screenshot(browser, "crawl-hosts", tmp_path)
    browser.find_element(By.LINK_TEXT, origin).click()
    assert "Disallow: /private/" in browser.find_element(By.ID, "host-robots-text").text
    assert browser.find_element(By.ID, "host-exclude").is_displayed()
    screenshot(browser, "crawl-host", tmp_path)
