""""Is my site indexed?" in headless Chromium, through to "indexed" (issue 38, item 4):
`manage.py up` runs the engine; a visitor looks up a page no link leads to (an orphan of a
loopback site), answers the question and submits it ("Awaiting review"); the operator starts a
crawl of the site and approves the submission in the admin; the running crawl's queue server
picks the new seed up, fetches and indexes it, and the visitor's page says "Indexed" with the
crawl date. Screenshots go to the test's tmp_path."""

from __future__ import annotations

import re
import time

import pytest

from tests.browser.engine import add_crawl
from tests.browser.engine import engine as engine_up
from tests.browser.helpers import wait_for
from tests.fixtures.sites import FixtureServer, normal_site

PAGES = 40
DELAY = 0.5  # seconds between fetches: the crawl runs ~20 s, long enough to approve in


@pytest.fixture
def engine(tmp_path, migrated_sqlite):
    with engine_up(tmp_path, migrated_sqlite, settled=True) as (base, _up):
        yield base


def state(browser) -> str:
    from selenium.webdriver.common.by import By

    found = browser.find_elements(By.ID, "state")
    return found[0].get_attribute("data-state") if found else ""


@pytest.mark.long
def test_a_submitted_page_is_approved_crawled_and_shown_indexed(browser, engine, tmp_path):
    from selenium.webdriver.common.by import By

    site = normal_site("submitted", pages=PAGES, crawl_delay=DELAY)
    with FixtureServer(site.route) as server:
        orphan = server.url("/orphan-0.html")
        browser.delete_all_cookies()
        browser.get(engine + "/indexed")
        browser.find_element(By.ID, "lookup-url").send_keys(orphan)
        browser.find_element(By.ID, "lookup").click()
        assert wait_for(lambda: state(browser) == "unknown", 30)
        question = browser.find_element(By.CSS_SELECTOR, "label[for=answer]").text
        a, b = map(int, re.search(r"(\d+) \+ (\d+)", question).groups())
        browser.find_element(By.ID, "answer").send_keys(str(a + b))
        browser.find_element(By.ID, "submit").click()
        assert wait_for(lambda: state(browser) == "pending", 30)
        assert browser.find_elements(By.ID, "submitted")
        browser.save_screenshot(str(tmp_path / "submitted.png"))

        add_crawl(browser, engine, server.url("/"), name="submissions crawl")
        browser.find_element(By.NAME, "crawl-start").click()
        assert wait_for(lambda: "running" in (browser.find_element(
            By.ID, "crawl-status").text or ""), 30)
        browser.get(engine + "/admin/crawler/urlsubmission/")
        browser.find_element(By.CSS_SELECTOR, "input.action-select").click()
        browser.find_element(By.CSS_SELECTOR, "select[name=action] option[value=approve]"
                             ).click()
        browser.find_element(By.CSS_SELECTOR, "button[name=index]").click()
        assert wait_for(lambda: "added to the running crawl" in browser.page_source, 30)

        deadline = time.monotonic() + 180
        while True:
            browser.get(engine + "/indexed?url=" + orphan)
            if state(browser) == "indexed":
                break
            assert time.monotonic() < deadline, (state(browser), browser.page_source[-3000:])
            time.sleep(2)
        assert server.requests_for("/orphan-0.html")
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC",
                         browser.find_element(By.ID, "state-date").text)
        assert browser.find_element(By.ID, "state-recrawl").text
        browser.save_screenshot(str(tmp_path / "indexed.png"))
