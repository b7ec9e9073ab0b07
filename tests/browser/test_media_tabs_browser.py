"""The Images and Videos tabs in headless Chromium against live_server (issue 37, item 2): the
image grid loads each picture from the crawler's stored copy, the size and length filters
narrow the tabs. Screenshots go to tmp_path (and to $SEARCH_SCREENSHOTS when set)."""

from __future__ import annotations

import pytest

from ranking.search_service import search_service
from tests.browser.helpers import shot, wait_for
from tests.web.media_site import build_media_index

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def page(browser, live_server, tmp_path, settings):
    work = tmp_path / "work"
    settings.WORK_DIRECTORY = work
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    build_media_index(work)
    browser.get(live_server.url + "/site/appearance.css")
    browser.delete_all_cookies()
    browser.set_window_size(1280, 900)
    yield browser
    search_service().pool.close()
    search_service().lexicons.clear()


def test_images_and_videos_tabs(page, live_server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page.get(live_server.url + "/?q=lighthouse")
    assert wait_for(lambda: len(page.find_elements(By.CSS_SELECTOR, "li.result")) == 8)
    page.find_element(By.ID, "tab-images").click()
    assert wait_for(lambda: len(page.find_elements(By.CSS_SELECTOR, "li.image-result")) == 3)
    pictures = page.find_elements(By.CSS_SELECTOR, "li.image-result img")
    assert wait_for(lambda: [page.execute_script(
        "return arguments[0].complete && arguments[0].naturalWidth", p) for p in pictures]
        == [40, 400, 1200])
    assert all(p.get_attribute("src").startswith(live_server.url + "/cache/image?")
               for p in pictures)
    shot(page, tmp_path, "tabs-images")
    Select(page.find_element(By.ID, "size")).select_by_value("large")
    page.find_element(By.CSS_SELECTOR, ".box button").click()
    assert wait_for(lambda: len(page.find_elements(By.CSS_SELECTOR, "li.image-result")) == 1)
    assert "lighthouse-large.png" in page.find_element(
        By.CSS_SELECTOR, "li.image-result a").get_attribute("href")

    page.find_element(By.ID, "tab-videos").click()
    assert wait_for(lambda: len(page.find_elements(By.CSS_SELECTOR, "li.result")) == 3)
    lengths = [e.text for e in page.find_elements(By.CSS_SELECTOR, ".duration")]
    assert lengths == ["Video, 3:00", "Video, 14:00", "Video, 50:00"]
    shot(page, tmp_path, "tabs-videos")
    Select(page.find_element(By.ID, "duration")).select_by_value("long")
    page.find_element(By.CSS_SELECTOR, ".box button").click()
    assert wait_for(lambda: [e.text for e in page.find_elements(By.CSS_SELECTOR, ".duration")]
                    == ["Video, 50:00"])
    page.find_element(By.ID, "tab-all").click()
    assert wait_for(lambda: len(page.find_elements(By.CSS_SELECTOR, "li.result")) == 8)
