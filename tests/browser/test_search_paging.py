"""Paging through every result page of a query in headless Chromium (issue 39, item 5): over
an index whose matches are mostly links to pages never crawled, the browser follows every page
link and Next, and no page it reaches is empty; the count above the results says how many
there are (tests/web/test_search_totals.py builds the index)."""

from __future__ import annotations

import pytest

from ranking.search_service import search_service
from tests.browser.helpers import wait_for
from tests.web.test_search_totals import PAGES, build_index

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def zephyr(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    build_index(tmp_path)
    yield tmp_path
    search_service().pool.close()


def test_every_result_page_reached_by_clicking_has_results(browser, live_server, zephyr):
    from selenium.webdriver.common.by import By

    browser.get(f"{live_server.url}/?q=zephyr&num=3")
    assert wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "li.result"))
    assert f"of {PAGES} (" in browser.find_element(By.ID, "result-stats").text
    links = [a.get_attribute("href")
             for a in browser.find_elements(By.CSS_SELECTOR, "nav.pages a")]
    seen = {browser.current_url}
    urls = set()
    while links:
        href = links.pop()
        if href in seen:
            continue
        seen.add(href)
        browser.get(href)
        results = browser.find_elements(By.CSS_SELECTOR, "li.result")
        assert results, f"the page link {href} led to an empty page"
        urls.update(r.find_element(By.CSS_SELECTOR, "a").get_attribute("href") for r in results)
        links.extend(a.get_attribute("href")
                     for a in browser.find_elements(By.CSS_SELECTOR, "nav.pages a"))
    # pages 2 and 3 hold the 4 results after the first page's 3
    assert len(urls) == PAGES - 3
