"""Which index answers, in Chromium (issue 19, acceptance): an operator chooses an older crawl
for search in the admin, starts a new crawl, and the search page still answers from the chosen
one, naming it; then builds a crawl mix of both crawls in the admin and searches it with m:.
Screenshots of the search page's index line go to YIOOPY_SCREENSHOTS when it is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.urls import reverse

from crawler.models import Crawl
from searchindex.models import SearchIndex
from tests.browser.helpers import wait_for
from tests.unit.ranking.helpers import text_doc
from tests.web.test_search_index_choice import build, ended_crawl

pytestmark = pytest.mark.django_db(transaction=True)


def screenshot(browser, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("YIOOPY_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(folder / f"{name}.png"))


@pytest.fixture
def make_crawl():
    from crawler import services
    from crawler.models import SeedSite

    def make(name: str) -> Crawl:
        crawl = Crawl.objects.create(name=name, page_options=services.page_options_default_get(),
                                     restrict_to_seeds=True)  # its Start asks nothing
        SeedSite.objects.create(crawl=crawl, url="https://example.com/")
        return crawl

    return make


def test_choose_an_older_crawl_then_a_mix(admin_browser, live_server, settings, tmp_path,
                                          make_crawl):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    settings.WORK_DIRECTORY = tmp_path / "work"
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.SEARCH_OPTIONS_TTL = 0
    work = settings.WORK_DIRECTORY
    old = ended_crawl(make_crawl, work, "old", [
        ("https://old.example/a", "Old lighthouse page", "the lighthouse keeper")])
    new = ended_crawl(make_crawl, work, "new", [
        ("https://new.example/a", "New lighthouse guide", "a lighthouse guide"),
        ("https://new.example/b", "Another lighthouse", "more lighthouse text")])
    browser = admin_browser

    # choose the older crawl on the crawl list
    browser.get(live_server.url + reverse("admin:crawler_crawl_changelist"))
    browser.find_element(By.CSS_SELECTOR, f'input[name="_selected_action"][value="{old.pk}"]'
                         ).click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("use_crawl_for_search")
    browser.find_element(By.NAME, "index").click()
    assert wait_for(lambda: "now answers from crawl old" in browser.page_source)

    # a newer crawl starts (from the admin) and indexes a page: the chosen one still answers
    newer = make_crawl(name="newer")
    browser.get(live_server.url + reverse("admin:crawler_crawl_changelist"))
    browser.find_element(By.CSS_SELECTOR, f'input[name="_selected_action"][value="{newer.pk}"]'
                         ).click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("start_crawls")
    browser.find_element(By.NAME, "index").click()
    assert wait_for(lambda: Crawl.objects.get(pk=newer.pk).status == "running")
    build(work / "qs0" / f"IndexData{newer.timestamp}",
          [text_doc("https://newer.example/", "Newer lighthouse", "lighthouse")])
    browser.get(live_server.url + "/?q=lighthouse")
    results = [a.get_attribute("href") for a in
               browser.find_elements(By.CSS_SELECTOR, "ol.results li.result h2 a, "
                                                      "ol.results li.result h3 a")]
    line = browser.find_element(By.ID, "index-line").text
    assert f"Index: crawl 'old' ({old.timestamp}) · 1 page" in line
    assert "old.example" in browser.page_source and "newer.example" not in browser.page_source
    assert "new.example" not in " ".join(results)
    screenshot(browser, "search-index-line", tmp_path)

    # a crawl mix of old and new, made in the admin, searched with m:
    browser.get(live_server.url + reverse("admin:searchindex_crawlmix_add"))
    browser.find_element(By.NAME, "name").send_keys("both")
    Select(browser.find_element(By.NAME, "members-0-crawl")).select_by_value(str(old.pk))
    Select(browser.find_element(By.NAME, "members-1-crawl")).select_by_value(str(new.pk))
    weight = browser.find_element(By.NAME, "members-1-weight")
    weight.clear()
    weight.send_keys("2")
    browser.find_element(By.NAME, "_save").click()
    assert wait_for(lambda: "was added successfully" in browser.page_source)
    browser.get(live_server.url + "/?q=lighthouse+m%3Aboth")
    page = browser.page_source
    assert "old.example" in page and "new.example" in page and "newer.example" not in page
    assert "crawl mix &#x27;both&#x27;" in page or "crawl mix 'both'" in page
    assert SearchIndex.objects.get(pk=1).crawl_id == old.pk  # the choice is unchanged
    screenshot(browser, "search-mix", tmp_path)
