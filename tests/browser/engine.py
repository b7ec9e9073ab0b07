"""`manage.py up` for the browser tests that watch real crawls, and the admin steps they share.

``engine(tmp_path, migrated_sqlite, **env)`` runs the engine (one fetcher, loopback allowed,
``ensure_admin``'s admin with PASSWORD) until the block ends, and gives its base url and its
:class:`~tests.integration.foundation.test_up_lifetime.Up`; with ``settled``, once the fetcher
and the queue server have passed their own start-up checks; ``add_crawl`` logs in, adds a crawl
of one seed restricted to its site and opens its status page."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tests.browser.helpers import wait_for
from tests.conftest import ROOT
from tests.integration.foundation.test_up_lifetime import Up, up_env

PASSWORD = "watch-crawl-pw-1234"


def queue_server_reports(database: str) -> bool:
    """Has queue server 0 written a heartbeat into the engine's SQLite database?"""
    with sqlite3.connect(database, timeout=5) as db:
        return bool(db.execute("SELECT count(*) FROM crawler_queueserver").fetchone()[0])


@contextmanager
def engine(tmp_path, migrated_sqlite, settled: bool = False,
           **extra: str) -> Iterator[tuple[str, Up]]:
    env = up_env(tmp_path, migrated_sqlite)
    env.update({"CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8", "ADMIN_PASSWORD": PASSWORD,
                "INDEX_REFRESH_SECONDS": "1", **extra})
    subprocess.run([sys.executable, "manage.py", "ensure_admin"], cwd=ROOT, env=env,
                   check=True, capture_output=True, timeout=120)
    up = Up(tmp_path, env)
    try:
        up.wait_for(lambda text: "all processes are up" in text, "start", timeout=120)
        if settled:  # every process past its start-up checks: the queue server reports
            database = env["DATABASE_URL"].removeprefix("sqlite:///")
            up.wait_for(lambda text: "fetch@" in text and "ready." in text
                        and queue_server_reports(database), "fetcher and queue server",
                        timeout=120)
        yield f"http://{env['WEB_BIND']}", up
    finally:
        up.close()


def add_crawl(browser, base: str, seed: str, name: str = "watched crawl") -> None:
    """Log in, add a crawl of ``seed`` restricted to its site (the form's default), and open
    its status page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.delete_all_cookies()
    browser.get(base + "/admin/")
    browser.find_element(By.NAME, "username").send_keys("admin")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD, Keys.ENTER)
    assert wait_for(lambda: "Log out" in browser.page_source, 30)
    browser.get(base + "/admin/crawler/crawl/add/")
    browser.find_element(By.NAME, "name").send_keys(name)
    browser.find_element(By.NAME, "bulk_seeds").send_keys(seed)
    browser.find_element(By.NAME, "_save").click()
    assert wait_for(lambda: browser.find_elements(By.LINK_TEXT, "status"), 30)
    browser.find_element(By.LINK_TEXT, "status").click()
    assert wait_for(lambda: browser.find_elements(By.NAME, "crawl-start"), 30)
