"""The search settings and the admin's Appearance settings in headless Chromium against
live_server (issue 37): the time filter beside the search box, the settings page kept in a
cookie (results per page, new tab, the page's language), the footer's language switch, and an
admin's name, logo, colours and footer links reaching the search page and the admin's header.
Screenshots go to tmp_path (and to $SEARCH_SCREENSHOTS when set, for a look)."""

from __future__ import annotations

import pytest

from ranking.search_service import search_service
from tests.browser.helpers import shot, wait_for
from tests.web.dated_site import build_dated_index
from tests.web.test_appearance import png

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def dated(tmp_path, settings):
    work = tmp_path / "work"
    settings.WORK_DIRECTORY = work
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    search_service().forget_options()
    build_dated_index(work)
    yield work
    search_service().pool.close()
    search_service().lexicons.clear()
    search_service().forget_options()


def forget_cookies(browser, live_server):
    """Delete the live server's cookies (the settings and the language this module sets):
    delete_all_cookies() acts on the current page's site only, so go there first."""
    browser.get(live_server.url + "/site/appearance.css")
    browser.delete_all_cookies()


@pytest.fixture
def page(browser, live_server, dated):
    forget_cookies(browser, live_server)
    browser.set_window_size(1280, 900)
    yield browser
    forget_cookies(browser, live_server)


def result_links(browser):
    from selenium.webdriver.common.by import By

    return browser.find_elements(By.CSS_SELECTOR, "li.result h2 a")


def test_time_filter_and_settings_kept_in_a_cookie(page, live_server, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page.get(live_server.url + "/?q=lighthouse")
    assert wait_for(lambda: len(result_links(page)) == 10)
    assert "of 15" in page.find_element(By.ID, "result-stats").text
    Select(page.find_element(By.ID, "t")).select_by_value("week")
    page.find_element(By.CSS_SELECTOR, ".box button").click()
    assert wait_for(lambda: "of 12" in page.find_element(By.ID, "result-stats").text)
    assert "Past week" in page.find_element(By.ID, "period-note").text
    assert all("new.example.test" in a.get_attribute("href") for a in result_links(page))
    shot(page, tmp_path, "settings-period-week")
    page.find_element(By.ID, "any-time").click()
    assert wait_for(lambda: "of 15" in page.find_element(By.ID, "result-stats").text)

    page.find_element(By.ID, "settings-link").click()
    assert wait_for(lambda: page.find_elements(By.ID, "settings-form"))
    Select(page.find_element(By.ID, "s-num")).select_by_value("20")
    Select(page.find_element(By.ID, "s-safe")).select_by_value("off")
    page.find_element(By.ID, "s-nt").click()
    Select(page.find_element(By.ID, "s-language")).select_by_value("de")
    shot(page, tmp_path, "settings-page")
    page.find_element(By.ID, "save-settings").click()
    # back on the search, in German, 20 a page, results opening in a new tab
    assert wait_for(lambda: "Ergebnisse 1–15 von 15" in
                    page.find_element(By.ID, "result-stats").text)
    links = result_links(page)
    assert len(links) == 15 and all(a.get_attribute("target") == "_blank" for a in links)
    assert page.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    assert Select(page.find_element(By.ID, "safe")).first_selected_option.get_attribute(
        "value") == "off"
    shot(page, tmp_path, "settings-applied-de")

    # the cookie outlives the page: a new visit keeps them
    page.get(live_server.url + "/?q=lamp")
    assert wait_for(lambda: len(result_links(page)) == 15)
    assert "Suchen" == page.find_element(By.CSS_SELECTOR, ".box button").text

    # the footer's switch changes the page's language at once
    Select(page.find_element(By.ID, "ui-language")).select_by_value("fr")
    page.find_element(By.CSS_SELECTOR, ".language-switch button").click()
    assert wait_for(lambda: page.find_element(By.TAG_NAME, "html").get_attribute("lang")
                    == "fr")
    assert "Résultats 1–15 sur 15" in page.find_element(By.ID, "result-stats").text
    assert page.find_element(By.ID, "q").get_attribute("value") == "lamp"
    shot(page, tmp_path, "settings-switched-fr")


def test_appearance_from_the_admin_reaches_the_pages(admin_browser, live_server, dated,
                                                     tmp_path):
    from selenium.webdriver.common.by import By

    browser = admin_browser
    logo = tmp_path / "logo.png"
    logo.write_bytes(png(96, 40))
    browser.get(live_server.url + "/admin/ranking/appearance/")
    assert wait_for(lambda: browser.find_elements(By.ID, "id_site_name"))
    # too little contrast is refused with a message, nothing saved
    accent = browser.find_element(By.ID, "id_accent_color")
    accent.clear()
    accent.send_keys("#ffff00")
    browser.find_element(By.NAME, "_continue").click()
    assert wait_for(lambda: "Too little contrast" in browser.find_element(
        By.CSS_SELECTOR, ".errorlist").text)
    shot(browser, tmp_path, "appearance-admin-error")

    for field, value in (("id_site_name", "Harbour Search"), ("id_accent_color", "#7a1f5c"),
                         ("id_header_color", "#fff4dc"),
                         ("id_footer_links", "About us | /about\nPrivacy | /privacy")):
        element = browser.find_element(By.ID, field)
        element.clear()
        element.send_keys(value)
    browser.find_element(By.ID, "id_logo_file").send_keys(str(logo))
    browser.find_element(By.NAME, "_continue").click()
    assert wait_for(lambda: "Harbour Search administration" in browser.find_element(
        By.ID, "site-name").text), browser.find_element(By.ID, "content").text[:2000]
    header_logo = browser.find_element(By.CSS_SELECTOR, "#site-name img")
    assert wait_for(lambda: browser.execute_script(
        "return arguments[0].complete && arguments[0].naturalWidth", header_logo) == 96)
    shot(browser, tmp_path, "appearance-admin-saved")

    browser.get(live_server.url + "/?q=lighthouse")
    assert wait_for(lambda: len(result_links(browser)) == 10)
    assert browser.find_element(By.CSS_SELECTOR, ".brand .name").text == "Harbour Search"
    assert browser.title == "lighthouse - Harbour Search search"
    brand_logo = browser.find_element(By.CSS_SELECTOR, ".brand img.logo")
    assert browser.execute_script("return arguments[0].naturalWidth", brand_logo) == 96
    header = browser.find_element(By.CSS_SELECTOR, "header.top")
    assert header.value_of_css_property("background-color") == "rgba(255, 244, 220, 1)"
    button = browser.find_element(By.CSS_SELECTOR, ".box button")
    assert button.value_of_css_property("background-color") == "rgba(122, 31, 92, 1)"
    footer = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "a.footer-link")]
    assert footer == ["About us", "Privacy"]
    assert "Yioopy" not in browser.page_source
    shot(browser, tmp_path, "appearance-search-page")
