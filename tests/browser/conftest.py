"""Headless Chromium (Debian's chromium and chromedriver) driven by Selenium.

Marked ``browser``. scripts/run_tests.py runs them when /usr/bin/chromium and
/usr/bin/chromedriver exist (.ci/run installs both); Selenium is pointed at the system driver so
nothing is downloaded.
"""

from __future__ import annotations

import shutil
import tempfile

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def admin_browser(browser, live_server, admin_user):
    """The browser logged in to the admin as ``admin`` (password ``password``)."""
    from selenium.webdriver.common.by import By

    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.NAME, "username").send_keys("admin")
    browser.find_element(By.NAME, "password").send_keys("password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # click() returns once the click is sent, not once the login POST has been answered: on a
    # cold Chromium the old login page was still the one read. Wait for the admin's logout form.
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(
        lambda b: "/admin/login/" not in b.current_url
        and ("Log out" in b.page_source or "logout" in b.page_source),
        "the admin login did not lead to a logged-in page")
    return browser


@pytest.fixture(autouse=True)
def _blank_page_after_test(request):
    """Leave no page open after a browser test: a page that keeps polling (the crawl status
    page refreshes itself) would reach the live server after this test's database is gone."""
    yield
    if "browser" in request.fixturenames:
        request.getfixturevalue("browser").get("about:blank")
