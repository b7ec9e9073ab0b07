"""The News tab in headless Chromium against live_server (issue 37, item 1): feeds on a
loopback HTTP server read by the news update, their items on the News tab newest and best
first, each with its source and date; the admin's list of sources shows a broken feed's
error. Screenshots go to tmp_path (and to $SEARCH_SCREENSHOTS when set)."""

from __future__ import annotations

import time

import pytest

from crawler.models import NewsSource
from crawler.news.updates import news_update_due
from ranking.search_service import search_service
from tests.browser.helpers import shot, wait_for
from tests.web.media_site import build_media_index
from tests.web.news_feeds import atom, feed_server, rss

pytestmark = pytest.mark.django_db(transaction=True)
DAY = 24 * 3600.0


@pytest.fixture
def news_site(tmp_path, settings):
    work = tmp_path / "work"
    settings.WORK_DIRECTORY = work
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    build_media_index(work)
    now = time.time()
    with feed_server() as feeds:
        harbour = feeds.serve("/harbour.rss", rss("Harbour", [
            ("Lighthouse lamp replaced after storm", feeds.url("/h/lamp"),
             "Engineers fitted a new LED lamp in the old lighthouse tower.", now - 2 * 3600),
            ("Lighthouse museum opens its doors", feeds.url("/h/museum"),
             "The former keeper's cottage beside the lighthouse is now a museum.",
             now - 9 * DAY)]))
        coast = feeds.serve("/coast.atom", atom("Coast", [
            ("Ferry to the lighthouse island doubles its crossings", feeds.url("/c/ferry"),
             "From Monday boats to the lighthouse leave every half hour.", now - DAY)]),
            kind="application/atom+xml")
        NewsSource.objects.create(name="Harbour Gazette", url=harbour)
        NewsSource.objects.create(name="Coast Radio", url=coast)
        NewsSource.objects.create(name="Broken Bulletin",
                                  url=feeds.serve("/broken", b"<html>no", status=503))
        assert news_update_due().indexed == 3
    yield work
    search_service().pool.close()
    search_service().lexicons.clear()


def test_news_tab_shows_items_by_recency_with_source_and_date(browser, live_server, news_site,
                                                               tmp_path):
    from selenium.webdriver.common.by import By

    browser.set_window_size(1280, 900)
    browser.get(live_server.url + "/?q=lighthouse")
    assert wait_for(lambda: page_results(browser))
    assert not browser.find_elements(By.CSS_SELECTOR, ".news-source")  # the All tab: crawls
    browser.find_element(By.ID, "tab-news").click()
    assert wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, ".news-source")) == 3)
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "li.result h2 a")]
    assert titles == ["Lighthouse lamp replaced after storm",
                      "Ferry to the lighthouse island doubles its crossings",
                      "Lighthouse museum opens its doors"]
    sources = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".news-source")]
    assert sources == ["Harbour Gazette", "Coast Radio", "Harbour Gazette"]
    dates = browser.find_elements(By.CSS_SELECTOR, "time.news-date")
    assert len(dates) == 3 and all(d.text.strip() for d in dates)
    stamps = [d.get_attribute("datetime") for d in dates]
    assert stamps[0] > stamps[1] > stamps[2]  # ISO 8601: newest first
    current = browser.find_element(By.CSS_SELECTOR, "nav.tabs .current")
    assert current.get_attribute("id") == "tab-news"
    links = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "li.result ul.links a")]
    assert links == []  # no "More from", "Similar", "Inlinks" into the crawls' index
    shot(browser, tmp_path, "news-tab")
    # in German, the tab and the dates follow the reader's language
    browser.get(live_server.url + "/?q=lighthouse&tab=news")
    browser.add_cookie({"name": "django_language", "value": "de"})
    browser.get(live_server.url + "/?q=lighthouse&tab=news")
    assert wait_for(lambda: browser.find_element(By.ID, "tab-news").text == "Nachrichten")
    shot(browser, tmp_path, "news-tab-de")
    browser.delete_all_cookies()


def page_results(browser) -> bool:
    from selenium.webdriver.common.by import By

    return bool(browser.find_elements(By.CSS_SELECTOR, "li.result"))


def test_admin_lists_sources_with_their_state(admin_browser, live_server, news_site,
                                              tmp_path):
    from selenium.webdriver.common.by import By

    admin_browser.set_window_size(1400, 700)
    admin_browser.get(live_server.url + "/admin/crawler/newssource/")
    assert wait_for(lambda: "Broken Bulletin" in admin_browser.page_source)
    rows = {r.find_element(By.CSS_SELECTOR, "th").text: r.text
            for r in admin_browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")}
    assert "error: the server answered HTTP 503" in rows["Broken Bulletin"]
    assert "ok, 2 new items" in rows["Harbour Gazette"]
    shot(admin_browser, tmp_path, "news-sources-admin")
