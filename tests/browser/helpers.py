"""Helpers shared by the browser tests."""

from __future__ import annotations

import time
from collections.abc import Callable


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
