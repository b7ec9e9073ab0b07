"""The README's "Your first crawl", walked as written in headless Chromium (issue 39, items 1
and 7, and item 10's console): `manage.py up` (what `make run` starts, after `ensure_admin`) with the setting the
README's "Crawling an intranet or a local site" gives for a site on this machine
(``CRAWLER_ALLOWED_NETWORKS=127.0.0.0/8``); the admin login, Crawls, Add crawl, one seed (a
loopback site), Restrict ticked by the form, a page limit of 200, Save, the crawl's status
link, Start, the crawl ending by itself, then the search page finding a word of the site. The
console ends with where to open the engine and holds no access-log lines."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT
from tests.fixtures.sites import FixtureServer, normal_site
from tests.integration.foundation.test_up_lifetime import Up, up_env

PASSWORD = "first-crawl-pw-1234"


@pytest.fixture
def engine(tmp_path, migrated_sqlite):
    env = up_env(tmp_path, migrated_sqlite)
    env.update({"CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8", "ADMIN_PASSWORD": PASSWORD,
                "INDEX_REFRESH_SECONDS": "1"})
    subprocess.run([sys.executable, "manage.py", "ensure_admin"], cwd=ROOT, env=env,
                   check=True, capture_output=True, timeout=120)
    up = Up(tmp_path, env)
    try:
        up.wait_for(lambda text: "all processes are up" in text, "start", timeout=120)
        yield f"http://{env['WEB_BIND']}", up, tmp_path / "var"
    finally:
        up.close()


def wait(predicate, what: str, timeout: float = 120.0):
    """Poll ``predicate`` until it is true; an element the page replaced or has not drawn yet
    (the status page redraws its panels and reloads when the crawl ends) counts as not yet."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except (StaleElementReferenceException, NoSuchElementException):
            value = None
        if value:
            return value
        assert time.monotonic() < deadline, f"no {what} after {timeout}s"
        time.sleep(0.5)


def test_readme_first_crawl_ends_with_a_result_on_the_search_page(browser, engine):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    engine, up, var = engine
    site = normal_site("firstcrawl", pages=6, crawl_delay=0.0)
    word = site.pages["/page/3.html"].word
    with FixtureServer(site.route) as server:
        browser.delete_all_cookies()
        # 1. open the admin and log in
        browser.get(engine + "/admin/")
        browser.find_element(By.NAME, "username").send_keys("admin")
        browser.find_element(By.NAME, "password").send_keys(PASSWORD, Keys.ENTER)
        wait(lambda: "Log out" in browser.page_source or "logout" in browser.page_source,
             "logged-in admin", 30)
        # 2. Crawls -> Add crawl, a name and one seed
        browser.find_element(By.LINK_TEXT, "Crawls").click()
        wait(lambda: browser.current_url.endswith("/admin/crawler/crawl/"), "crawl list", 30)
        browser.find_element(By.CSS_SELECTOR, ".object-tools a.addlink").click()  # Add crawl
        wait(lambda: browser.find_elements(By.NAME, "bulk_seeds"), "new-crawl form", 30)
        browser.find_element(By.NAME, "name").send_keys("my first crawl")
        browser.find_element(By.NAME, "bulk_seeds").send_keys(server.url("/"))
        # 3. Restrict is ticked already; a page limit of 200; Save
        assert browser.find_element(By.NAME, "restrict_to_seeds").is_selected()
        limit = browser.find_element(By.NAME, "max_pages")
        assert limit.get_attribute("value") == "10000"
        limit.clear()
        limit.send_keys("200")
        browser.find_element(By.NAME, "_save").click()
        # 4. the crawl's status link, Start, and the crawl ending by itself
        wait(lambda: browser.find_elements(By.LINK_TEXT, "status"), "crawl list", 30)
        browser.find_element(By.LINK_TEXT, "status").click()
        wait(lambda: browser.find_elements(By.NAME, "crawl-start"), "status page", 30)
        browser.find_element(By.NAME, "crawl-start").click()
        wait(lambda: browser.find_element(By.ID, "crawl-status").text == "stopped",
             "crawl that ended by itself", 180)
        assert server.requests_for("/page/3.html")
    # 5. search a word of the site
    browser.get(engine + "/")
    box = browser.find_element(By.ID, "q")
    box.send_keys(word, Keys.ENTER)
    results = wait(lambda: browser.find_elements(By.CSS_SELECTOR, "li.result"),
                   "search result", 30)
    assert any("/page/3.html" in r.text or "page 3" in r.text for r in results), \
        [r.text for r in results]
    # the console: where to open the engine after "all processes are up", no access-log
    # lines (issue 39: 60 % of it were); those go to var/web-access.log
    console = up.text()
    ready = console.index("all processes are up")
    assert f"Search page: {engine}/" in console[ready:]
    assert '"GET /admin/' not in console and '"GET /?q=' not in console
    assert '"GET /?q=' in (var / "web-access.log").read_text()
