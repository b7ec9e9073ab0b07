"""A crawl page in a real browser follows its crawl from running to stopped by itself (issue
19): Stop stayed after the crawl stopped and Resume appeared only after a reload, and the
"start done; now running" banner stayed. Here the page is never reloaded: the crawl is started
with the page's own button, stopped elsewhere, and the page's buttons, banner, counters and
chart follow; the Resume button the script drew then works (its form carries the CSRF token).
With YIOOPY_SCREENSHOTS set, a screenshot of the page is saved there."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from crawler import services
from crawler.models import Crawl, CrawlSample, SeedSite
from tests.browser.helpers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def screenshot(browser, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("YIOOPY_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(folder / f"{name}.png"))


def buttons(browser) -> list[str]:
    from selenium.webdriver.common.by import By

    return [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#crawl-buttons button")]


def test_crawl_page_follows_the_crawl_from_running_to_stopped(admin_browser, live_server,
                                                              tmp_path):
    from selenium.webdriver.common.by import By

    crawl = Crawl.objects.create(name="watched", page_options=services.page_options_default_get(),
                                 restrict_to_seeds=True)  # its Start asks nothing
    SeedSite.objects.create(crawl=crawl, url="https://example.com/")
    browser = admin_browser
    browser.get(live_server.url + reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    assert buttons(browser) == ["Start"]
    browser.find_element(By.NAME, "crawl-start").click()
    assert wait_for(lambda: "now running" in browser.find_element(
        By.CSS_SELECTOR, "ul.messagelist").text), browser.page_source
    assert buttons(browser) == ["Stop"]
    browser.execute_script("window.__notReloaded = true;")

    # the crawl fetches: counters, rates and the chart move
    start = timezone.now() - timedelta(seconds=40)
    Crawl.objects.filter(pk=crawl.pk).update(started_at=start, pages_fetched=120,
                                             documents_indexed=300, fetch_errors=3)
    for i, (pages, docs, errors) in enumerate([(0, 0, 0), (50, 120, 1), (120, 300, 3)]):
        CrawlSample.objects.create(crawl=crawl, at=start + timedelta(seconds=10 * (i + 1)),
                                   pages_fetched=pages, documents_indexed=docs,
                                   fetch_errors=errors)
    assert wait_for(lambda: browser.find_element(
        By.CSS_SELECTOR, '[data-counter="pages-fetched"]').text == "120"), (
        browser.find_element(By.ID, "crawl-refreshed").text, browser.get_log("browser"))
    assert float(browser.find_element(By.ID, "crawl-rate-now").text) > 0
    fetched_line = browser.find_element(By.CSS_SELECTOR, 'polyline[data-series="fetched"]')
    # steps from the start to each of the 3 samples and on to now: 2 points each
    assert len(fetched_line.get_attribute("points").split()) == 8
    browser.execute_script("document.getElementById('crawl-counters').scrollIntoView()")
    screenshot(browser, "crawl-page-running", tmp_path)  # counters, rates and the chart
    browser.execute_script("window.scrollTo(0, 0)")

    # stopped elsewhere (no queue server holds it: saved at once, resumable)
    services.crawl_stop(crawl.pk, analyse=False)
    Crawl.objects.filter(pk=crawl.pk).update(pages_fetched=121)
    assert wait_for(lambda: buttons(browser) == ["Close", "Resume"]), buttons(browser)
    assert browser.find_element(By.ID, "crawl-status").text == "resumable"
    banner = browser.find_element(By.CSS_SELECTOR, "ul.messagelist").text
    assert "now running" not in banner and "is now resumable" in banner
    assert browser.find_element(By.CSS_SELECTOR, '[data-counter="pages-fetched"]').text == "121"
    assert browser.execute_script("return window.__notReloaded === true")
    assert not browser.find_element(By.ID, "crawl-errors-summary").is_displayed()
    screenshot(browser, "crawl-page-stopped", tmp_path)

    # the Resume button the script drew posts with the CSRF token
    browser.find_element(By.NAME, "crawl-resume").click()
    assert wait_for(lambda: Crawl.objects.get(pk=crawl.pk).status == "running")
    assert wait_for(lambda: buttons(browser) == ["Stop"])
