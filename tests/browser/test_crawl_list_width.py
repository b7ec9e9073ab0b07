"""The crawl list fits a 1366-pixel-wide screen (issue 39, item 10: it needed horizontal
scrolling, beside the admin's menu and filters), in headless Chromium."""

from __future__ import annotations

import pytest
from django.urls import reverse

from crawler import services
from crawler.models import Crawl, SeedSite

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_crawl_list_needs_no_horizontal_scrolling_at_1366_pixels(admin_browser,
                                                                     live_server):
    for i in range(3):
        crawl = Crawl.objects.create(name=f"Python documentation crawl {i}", restrict_to_seeds=True,
                                     page_options=services.page_options_default_get())
        SeedSite.objects.create(crawl=crawl, url="https://docs.python.org/3/")
    services.crawl_start(crawl.pk)
    browser = admin_browser
    browser.set_window_size(1366, 768)
    try:
        browser.get(live_server.url + reverse("admin:crawler_crawl_changelist"))
        overflow = browser.execute_script(
            "const box = document.querySelector('#changelist .results');"
            "return [box.scrollWidth, box.clientWidth];")
        assert overflow[0] <= overflow[1], overflow
    finally:
        browser.set_window_size(1280, 900)
