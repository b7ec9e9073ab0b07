"""The crawl's change page shows its Start button as one of the pill-shaped links beside it
(issue 39, item 10: a small square admin button among the "Status" and "History" pills), in
headless Chromium; the button still starts the crawl."""

from __future__ import annotations

import pytest
from django.urls import reverse

from crawler import services
from crawler.models import Crawl, SeedSite
from tests.browser.helpers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

LOOK = ("height", "borderTopLeftRadius", "fontSize", "textTransform", "backgroundColor",
        "color", "paddingTop", "paddingLeft", "letterSpacing", "fontWeight")


def test_the_start_button_looks_like_the_links_beside_it(admin_browser, live_server):
    from selenium.webdriver.common.by import By

    crawl = Crawl.objects.create(name="pills", restrict_to_seeds=True,
                                 page_options=services.page_options_default_get())
    SeedSite.objects.create(crawl=crawl, url="https://example.com/")
    browser = admin_browser
    browser.get(live_server.url + reverse("admin:crawler_crawl_change", args=[crawl.pk]))
    looks = browser.execute_script("""
        const look = (e) => { const s = getComputedStyle(e); const r = e.getBoundingClientRect();
            return Object.fromEntries(arguments[0].map((k) => [k, k === 'height' ?
                Math.round(r.height) : s[k]])); };
        const link = [...document.querySelectorAll('.object-tools a')]
            .find((a) => a.textContent.trim() === 'Status');
        const button = document.querySelector('.object-tools button[name="crawl-start"]');
        const top = (e) => Math.round(e.getBoundingClientRect().top);
        return [look(link), look(button), top(link), top(button)];
    """, list(LOOK))
    link, button, link_top, button_top = looks
    assert button == link, (button, link)
    assert link_top == button_top  # on one line
    browser.find_element(By.NAME, "crawl-start").click()
    assert wait_for(lambda: Crawl.objects.get(pk=crawl.pk).status == "running")
