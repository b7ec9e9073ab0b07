"""A fetcher that cannot fetch because of its configuration says so on the crawl page (issue
39, item 2): `manage.py up` starts with a good ``CRAWLER_CA_BUNDLE`` (its start-up check
passes), the file is then spoilt, and a crawl is started in the admin. Every fetch of the
fetcher fails with kind "configuration" naming the bundle; the crawl ends by itself and its
page, never reloaded, shows the failure and why nothing was indexed. Before, building the
fetcher raised for every schedule and the schedule was handed out again, without end: the page
said running, 0 pages, 0 errors."""

from __future__ import annotations

import shutil

import pytest

from tests.browser.engine import add_crawl, engine
from tests.browser.helpers import wait_for
from tests.fixtures.sites import FixtureServer, make_tls_files, normal_site


@pytest.fixture
def spoilt_bundle_engine(tmp_path, migrated_sqlite):
    tls = make_tls_files(tmp_path / "tls", hostnames=("localhost",), ips=("127.0.0.1",))
    bundle = tmp_path / "ca.pem"
    shutil.copy(tls.ca_cert, bundle)
    with engine(tmp_path, migrated_sqlite, settled=True,
                CRAWLER_CA_BUNDLE=str(bundle)) as (base, up):
        bundle.write_text("not a certificate\n")  # spoilt after the start-up check
        yield base, bundle, up


@pytest.mark.long
def test_a_spoilt_ca_bundle_ends_the_crawl_with_a_configuration_error(browser,
                                                                      spoilt_bundle_engine):
    from selenium.webdriver.common.by import By

    base, bundle, up = spoilt_bundle_engine
    site = normal_site("config", pages=3, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        add_crawl(browser, base, server.url("/"), name="spoilt bundle")
        browser.find_element(By.NAME, "crawl-start").click()
        assert wait_for(lambda: "running" in browser.find_element(By.ID, "crawl-status").text,
                        20)
        browser.execute_script("window.__notReloaded = true;")
        assert wait_for(lambda: browser.find_element(By.ID, "crawl-status").text == "stopped",
                        120), (browser.find_element(By.ID, "content-main").text,
                               up.text()[-4000:])
        assert browser.execute_script("return window.__notReloaded === true")
        assert not server.requests_for("/")  # nothing was fetched
    failures = browser.find_element(By.ID, "crawl-robots-failures").text
    assert "the crawler's configuration" in failures, failures
    assert f"the CA bundle '{bundle}' cannot be loaded" in failures, failures
    reason = browser.find_element(By.ID, "crawl-end-reason")
    assert reason.is_displayed() and "configuration" in reason.text, reason.text
