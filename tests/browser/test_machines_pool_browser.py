"""The Machines page's fetcher pool section in headless Chromium (issue 37, item 9): its
recent output, and the Restart button leaving a request for manage.py up's supervisor, with a
message. Screenshot to tmp_path (and to $SEARCH_SCREENSHOTS when set)."""

from __future__ import annotations

import os
import shutil

import pytest

from operations.child_control import CONTROL_DIR, restart_pending
from operations.child_logs import LOG_DIR, ChildLog
from tests.browser.helpers import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_pool_output_and_restart(admin_browser, live_server, tmp_path, settings):
    from selenium.webdriver.common.by import By

    settings.VAR_DIRECTORY = tmp_path
    log = ChildLog(tmp_path / LOG_DIR, "fetchers")
    for n in range(70):
        log.write(f"[2026-11-29 12:00:{n % 60:02d},000: INFO/ForkPoolWorker-1] schedule "
                  f"s-{n} fetched 100 pages\n")
    log.close()
    admin_browser.set_window_size(1280, 900)
    admin_browser.get(live_server.url + "/admin/crawler/machine/")
    output = admin_browser.find_element(By.ID, "pool-log")
    assert wait_for(lambda: "schedule s-69 fetched" in output.text)
    assert "schedule s-9 fetched" not in output.text  # the last 60 lines only
    admin_browser.find_element(By.ID, "restart-fetchers").click()
    assert wait_for(lambda: "Restart of the fetcher pool asked" in admin_browser.page_source)
    assert restart_pending(tmp_path / CONTROL_DIR, "fetchers")
    assert admin_browser.find_element(By.ID, "restart-pending").is_displayed()
    path = tmp_path / "machines-pool.png"
    assert admin_browser.save_screenshot(str(path))
    if os.environ.get("SEARCH_SCREENSHOTS"):
        shutil.copy(path, os.environ["SEARCH_SCREENSHOTS"] + "/machines-pool.png")
