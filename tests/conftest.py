"""Fixtures shared by every test: an embedded Redis when REDIS_URL is unset, free ports, a migrated
SQLite database for tests that run the engine's processes, and the ``services`` marker for tests
that touch the database or the broker."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from operations.embedded_redis import embedded_redis_spec, redis_ready
from operations.redis_urls import unix_socket_url

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
    """REDIS_URL when set (CI's real Redis), else the embedded Redis as ``manage.py up``
    starts it (``operations.embedded_redis``: a unix socket in a private folder, a password),
    without its append-only file. A redis-py url; Celery's form is
    ``operations.redis_urls.redis_url_for(url, celery=True)``."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    path, password = tmp_path_factory.mktemp("redis") / "redis.sock", secrets.token_urlsafe(32)
    spec = embedded_redis_spec(path, password)
    proc = subprocess.Popen([*spec.argv, "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_redis_socket(path, password, proc)
        yield unix_socket_url(path, password)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def wait_for_redis_socket(path: Path, password: str, proc: subprocess.Popen,
                          timeout: float = 20.0) -> None:
    """Wait until the Redis ``proc`` answers on the unix socket ``path`` with ``password``;
    fail the test if it ends or takes longer than ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):  # not listening yet
            if redis_ready(path, password):
                return
        assert proc.poll() is None, f"Redis ended with {proc.returncode}"
        assert time.monotonic() < deadline, f"Redis did not answer on {path} in {timeout}s"
        time.sleep(0.05)


@functools.cache
def migrated_sqlite_template() -> Path:
    """A SQLite database file with every migration applied, made once per test process (by
    ``manage.py migrate`` in a subprocess, as an operator makes one) in a folder removed when
    the process ends; tests that run the engine's commands as processes copy it
    (:func:`sqlite_copy`) instead of migrating each time."""
    folder = Path(tempfile.mkdtemp(prefix="migrated-"))
    atexit.register(shutil.rmtree, folder, True)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
                "VAR_DIRECTORY": str(folder / "var"),
                "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}"})
    done = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(folder / "var", ignore_errors=True)
    return folder / "db.sqlite3"


@pytest.fixture(scope="session")
def migrated_sqlite() -> Path:
    """:func:`migrated_sqlite_template` as a fixture."""
    return migrated_sqlite_template()


@pytest.fixture
def search_work(tmp_path: Path, settings) -> Iterator[Path]:
    """``tmp_path`` as the engine's work directory, searched by this process alone (no remote
    queue servers, search options read again on every request); the search service's shard
    pool is closed after the test."""
    from ranking.search_service import search_service

    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.SEARCH_OPTIONS_TTL = 0
    yield tmp_path
    search_service().pool.close()


def sqlite_copy(template: Path, folder: Path) -> str:
    """A ``DATABASE_URL`` of a fresh copy of the migrated database ``template`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "db.sqlite3"
    shutil.copyfile(template, path)
    return f"sqlite:///{path}"
