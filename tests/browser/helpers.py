"""Helpers shared by the browser tests."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

SCREENSHOT_COPY = os.environ.get("SEARCH_SCREENSHOTS")  # a folder to copy screenshots to


def shot(browser, tmp_path: Path, name: str) -> Path:
    """Save the browser's screenshot as ``tmp_path/<name>.png`` (and a copy in the folder
    SEARCH_SCREENSHOTS names, to look at after the run); its path."""
    path = tmp_path / f"{name}.png"
    assert browser.save_screenshot(str(path))
    assert path.stat().st_size > 1000  # a page was drawn, not an empty image
    if SCREENSHOT_COPY:
        shutil.copy(path, f"{SCREENSHOT_COPY}/{name}.png")
    return path


def wait_for(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` until it is true (an element replaced meanwhile counts as not yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # the page changed under us: look again
            pass
        time.sleep(0.1)
    return False
