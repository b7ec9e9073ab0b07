"""Waiting in tests for something that happens in another process or thread."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float, what: str,
               interval: float = 0.2) -> T:
    """Poll ``condition`` until it returns something true, and return that; fail the test with
    ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"{what}: not within {timeout}s")


def page_requests(server) -> list:
    """A fixture server's logged requests, robots.txt left out."""
    return [e for e in server.log if e.path != "/robots.txt"]
