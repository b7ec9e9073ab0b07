"""The search page in headless Chromium against live_server, over a small index built from
fixture HTML (tests/web/test_search_page.py): search, the "why" toggle, pagination, keyboard
use, suggestions as you type, and a hostile cached page whose scripts must not run."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest

from ranking.search_service import search_service
from tests.browser.helpers import shot, wait_for
from tests.web.test_search_page import ITS, build_site_index

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def site(tmp_path, settings):
    work = tmp_path / "work"
    settings.WORK_DIRECTORY = work
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    build_site_index(work)
    yield work
    search_service().pool.close()
    search_service().lexicons.clear()


@pytest.fixture
def page(browser, live_server, site):
    browser.delete_all_cookies()
    browser.set_window_size(1280, 900)
    yield browser
    browser.set_window_size(1280, 900)


def test_search_why_toggle_and_pagination(page, live_server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page.get(live_server.url + "/")
    box = page.find_element(By.ID, "q")
    assert page.switch_to.active_element == box  # autofocus
    box.send_keys("threading locks", Keys.ENTER)
    assert wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "li.result"))
    results = page.find_elements(By.CSS_SELECTOR, "li.result")
    assert len(results) == 10
    assert page.find_element(By.ID, "q").get_attribute("value") == "threading locks"
    assert "Results 1–10 of 24 (" in page.find_element(By.ID, "result-stats").text  # exact
    shot(page, tmp_path, "results-desktop")

    why = results[0].find_element(By.CSS_SELECTOR, "details.why")
    table = why.find_element(By.CSS_SELECTOR, "table.explain")
    assert not table.is_displayed()
    why.find_element(By.TAG_NAME, "summary").click()
    assert wait_for(table.is_displayed)
    assert "Doc Rank" in table.text and "Relevance" in table.text

    first_urls = [a.get_attribute("href") for a in page.find_elements(By.CSS_SELECTOR, "h2 a")]
    page.find_element(By.ID, "next-page").click()
    assert wait_for(lambda: "Results 11–20" in page.find_element(By.ID, "result-stats").text)
    second_urls = [a.get_attribute("href") for a in page.find_elements(By.CSS_SELECTOR, "h2 a")]
    assert second_urls and not set(first_urls) & set(second_urls)
    assert page.find_element(By.CSS_SELECTOR, "[aria-current=page]").text == "2"
    page.find_element(By.ID, "prev-page").click()
    assert wait_for(lambda: "Results 1–10" in page.find_element(By.ID, "result-stats").text)


def test_keyboard_and_suggestions(page, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page.get(live_server.url + "/")
    box = page.find_element(By.ID, "q")
    box.send_keys("thre")
    listbox = page.find_element(By.ID, "q-suggestions")
    assert wait_for(lambda: listbox.is_displayed()
                    and "threading" in listbox.text), page.page_source
    assert box.get_attribute("aria-expanded") == "true"
    options = [o.text for o in listbox.find_elements(By.CSS_SELECTOR, "[role=option]")]
    box.send_keys(Keys.ARROW_DOWN)
    active = box.get_attribute("aria-activedescendant")
    assert active == "q-suggestion-0"
    box.send_keys(Keys.ENTER)
    assert wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "li.result"))
    assert page.find_element(By.ID, "q").get_attribute("value") == options[0]

    # Tab from the query box reaches the button, the filters and then the results' links
    page.find_element(By.ID, "q").click()
    seen = []
    for _ in range(8):
        page.switch_to.active_element.send_keys(Keys.TAB)
        el = page.switch_to.active_element
        seen.append(el.tag_name + ":" + (el.get_attribute("id") or el.text))
    assert seen[0].startswith("button") and "select:safe" in seen and "select:lang" in seen
    assert any(s.startswith("a:") for s in seen)
    # the "/" key brings the focus back to the query box
    page.find_element(By.TAG_NAME, "body").send_keys("/")
    assert page.switch_to.active_element.get_attribute("id") == "q"
    # Escape closes suggestions
    box = page.find_element(By.ID, "q")
    box.send_keys(Keys.END, " py")
    listbox = page.find_element(By.ID, "q-suggestions")
    assert wait_for(lambda: listbox.is_displayed() and "python" in listbox.text)
    box.send_keys(Keys.ESCAPE)
    assert wait_for(lambda: not listbox.is_displayed())


def test_hostile_cached_page_runs_no_script(page, live_server, tmp_path):
    from selenium.webdriver.common.by import By

    page.get(live_server.url + "/?" + urlencode({"q": "hostile threading"}))
    assert wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "li.result"))
    title = page.find_element(By.CSS_SELECTOR, "li.result h2").text
    assert "<script>alert(1)</script>" in title  # shown as text
    assert page.execute_script("return window.__pwned === undefined")
    cache_link = page.find_element(By.CSS_SELECTOR, "li.result .cache-link")
    cache_link.click()
    assert wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "iframe.cached"))
    assert "evil.example.test/hostile.html" in page.find_element(By.ID, "original-url").text
    frame = page.find_element(By.CSS_SELECTOR, "iframe.cached")
    page.switch_to.frame(frame)
    try:
        assert wait_for(lambda: "Hostile threading page" in page.find_element(
            By.TAG_NAME, "body").text)
        body = page.find_element(By.TAG_NAME, "body")
        assert body.find_elements(By.TAG_NAME, "mark")  # the query words are highlighted
        time.sleep(0.5)  # give an (unwanted) script or onerror handler time to run
        assert body.get_attribute("data-pwned") is None
        assert page.title != "pwned"
        page.find_element(By.TAG_NAME, "h1").click()  # an onclick handler must not run
    finally:
        page.switch_to.default_content()
    assert page.execute_script("return window.__pwned === undefined")
    shot(page, tmp_path, "cache-desktop")

    # opened on its own (not in the frame) the stored copy is still sandboxed by its CSP
    page.get(live_server.url + "/cache/frame?" + urlencode(
        {"url": "http://evil.example.test/hostile.html", "its": str(ITS)}))
    assert wait_for(lambda: "Hostile" in page.find_element(By.TAG_NAME, "body").text)
    time.sleep(0.5)
    assert page.find_element(By.TAG_NAME, "body").get_attribute("data-pwned") is None
    assert page.title != "pwned"


def test_layout_on_a_narrow_screen(page, live_server, tmp_path):
    from selenium.webdriver.common.by import By

    page.set_window_size(390, 844)
    page.get(live_server.url + "/?" + urlencode({"q": "python threading"}))
    assert wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "li.result"))
    # nothing is wider than the screen
    width = page.execute_script("return document.documentElement.clientWidth")
    scroll = page.execute_script("return document.documentElement.scrollWidth")
    assert scroll <= width + 1
    box = page.find_element(By.ID, "q").rect
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    shot(page, tmp_path, "results-mobile")
    page.get(live_server.url + "/")
    shot(page, tmp_path, "home-mobile")
