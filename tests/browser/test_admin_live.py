"""The crawl status page refreshes its counters in a real browser without a reload."""


import re

import pytest
from django.urls import reverse
from django.utils import timezone

from crawler import services
from crawler.models import Crawl, QueueServer, SeedSite
from tests.browser.helpers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)




def test_status_page_updates_live(admin_browser, live_server):
    from selenium.webdriver.common.by import By

    crawl = Crawl.objects.create(name="live", page_options=services.page_options_default_get())
    SeedSite.objects.create(crawl=crawl, url="https://example.com/")
    services.crawl_start(crawl.pk)
    browser = admin_browser
    browser.get(live_server.url + reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    counter = browser.find_element(By.CSS_SELECTOR, '[data-counter="pages-fetched"]')
    assert counter.text == "0"
    marker = browser.execute_script("window.__notReloaded = true; return 1;")
    Crawl.objects.filter(pk=crawl.pk).update(pages_fetched=1234)
    QueueServer.objects.create(server_id=0, base_url="http://127.0.0.1:1/", state="up",
                               last_heartbeat=timezone.now(),
                               counters={"crawl": crawl.pk, "tiers": {"3": 9}})
    assert wait_for(lambda: browser.find_element(
        By.CSS_SELECTOR, '[data-counter="pages-fetched"]').text == "1234"), browser.page_source
    assert wait_for(lambda: "Tier 3" in browser.find_element(By.ID, "crawl-tiers").text)
    assert browser.execute_script("return window.__notReloaded === true") == marker == 1
    # the page's one date format (issue 39: three on one page), the refresh time included
    refreshed = browser.find_element(By.ID, "crawl-refreshed").text
    assert re.fullmatch(r"Updated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.", refreshed), refreshed
    started = re.search(r"Started (\S+ \S+ UTC)", browser.find_element(By.ID, "content-main").text)
    assert started, "no start time"


def test_machines_page_updates_live(admin_browser, live_server):
    from selenium.webdriver.common.by import By

    browser = admin_browser
    browser.get(live_server.url + reverse("admin:crawler_machines"))
    browser.execute_script("window.__notReloaded = true;")
    services.fetcher_heartbeat("node-b:4242", "node-b", 4242, "fetching", schedule="s-9")
    assert wait_for(lambda: "node-b:4242" in browser.find_element(By.ID, "machines").text,
                    timeout=15), browser.page_source
    assert browser.execute_script("return window.__notReloaded === true")
    assert "Updated" in browser.find_element(By.ID, "machines-refreshed").text
