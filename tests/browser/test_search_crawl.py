"""From a crawl to the browser: `manage.py crawl` crawls a fixture site (with a hostile page),
then headless Chromium searches it, follows pagination, toggles the explanation, opens a cached
page, and shows that no script of the hostile page runs. Screenshots go to the test's tmp_path."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
from django.core.management import call_command

from ranking.search_service import search_service
from tests.browser.helpers import wait_for
from tests.fixtures.sites import FixtureServer, Response

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE_TITLE = "Hostile <script>window.parent.__pwned = 1; document.title='pwned'</script> lantern"
HOSTILE_BODY = """<p>The hostile lantern page <img src="x" onerror="window.top.__pwned = 2">
<b onmouseover="window.top.__pwned = 3">hover</b>
<script>window.top.__pwned = 4; document.body.innerHTML = 'pwned'</script>
quietly burning oil.</p>"""


def lantern_site(request):
    path = request.path
    if path == "/robots.txt":
        return Response(200, b"User-agent: *\nDisallow:\n", {"Content-Type": "text/plain"})
    if path == "/":
        links = "".join(f'<li><a href="/lantern/{i}.html">lantern page {i}</a></li>'
                        for i in range(24))
        body = (f"<html><head><title>Lantern home</title></head><body><h1>Lanterns</h1>"
                f"<ul>{links}<li><a href='/hostile.html'>hostile page</a></li></ul></body></html>")
    elif path.startswith("/lantern/"):
        n = path.rsplit("/", 1)[1].split(".")[0]
        body = (f"<html><head><title>Lantern number {n}</title></head><body><h1>Lantern {n}"
                f"</h1><p>This lantern number {n} gives warm light for reading.</p>"
                f"<p><a href='/'>home</a></p></body></html>")
    elif path == "/hostile.html":
        body = f"<html><head><title>{HOSTILE_TITLE}</title></head><body>{HOSTILE_BODY}</body></html>"
    else:
        return Response(404, b"not found", {"Content-Type": "text/plain"})
    return Response(200, body.encode(), {"Content-Type": "text/html; charset=utf-8"})




@pytest.fixture
def crawled(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "work"
    settings.INDEX_REFRESH_SECONDS = 0.0
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    search_service().lexicons.clear()
    with FixtureServer(lantern_site) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "60", "--fetchers", "2")
        assert server.requests_for("/hostile.html")
    yield server
    search_service().pool.close()
    search_service().lexicons.clear()


def test_crawl_then_search_paginate_explain_cache_and_hostile(browser, live_server, crawled,
                                                              tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page = browser
    page.delete_all_cookies()
    page.get(live_server.url + "/")
    page.find_element(By.ID, "q").send_keys("lantern", Keys.ENTER)
    assert wait_for(lambda: len(page.find_elements(By.CSS_SELECTOR, "li.result")) == 10)
    page.save_screenshot(str(tmp_path / "crawl-results.png"))
    first_urls = [a.get_attribute("href")
                  for a in page.find_elements(By.CSS_SELECTOR, "li.result h2 a, li.result a.title")]
    # pagination: the next page shows other results
    page.find_element(By.CSS_SELECTOR, "a[rel=next]").click()
    assert wait_for(lambda: "limit=10" in page.current_url)
    second_urls = [a.get_attribute("href")
                   for a in page.find_elements(By.CSS_SELECTOR, "li.result h2 a, li.result a.title")]
    assert len(first_urls) == 10 and second_urls and not set(first_urls) & set(second_urls)
    page.save_screenshot(str(tmp_path / "crawl-page2.png"))
    # the explanation toggle
    why = page.find_elements(By.CSS_SELECTOR, "li.result details.why")[0]
    why.find_element(By.TAG_NAME, "summary").click()
    assert wait_for(lambda: why.find_element(By.CSS_SELECTOR, "table.explain").is_displayed())

    # the hostile page: its title shows as text, nothing runs, on the results and cached pages
    page.get(live_server.url + "/?" + urlencode({"q": "hostile lantern oil"}))
    assert wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "li.result"))
    assert "window.parent.__pwned" in page.find_element(By.CSS_SELECTOR, "li.result").text \
        or "Hostile" in page.find_element(By.CSS_SELECTOR, "li.result").text
    assert page.execute_script("return window.__pwned === undefined")
    assert page.title != "pwned"
    page.find_element(By.CSS_SELECTOR, "li.result .cache-link").click()
    assert wait_for(lambda: page.find_elements(By.CSS_SELECTOR, "iframe.cached"))
    time.sleep(1.0)
    page.save_screenshot(str(tmp_path / "crawl-cached.png"))
    assert page.execute_script("return window.__pwned === undefined")
    frame = page.find_element(By.CSS_SELECTOR, "iframe.cached")
    page.switch_to.frame(frame)
    try:
        assert "quietly burning oil" in page.find_element(By.TAG_NAME, "body").text
    finally:
        page.switch_to.default_content()
    for name in ("crawl-results", "crawl-page2", "crawl-cached"):
        assert (tmp_path / f"{name}.png").stat().st_size > 1000
