"""A queue server with real processes: one per queue-server directory (a second one, started by
hand, refuses to run), and its dictionary updater never outlives it: killed with -9, the queue
server takes its updater along, and the restarted queue server runs exactly one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
import redis

from operations.redis_urls import redis_url_for
from tests.conftest import ROOT, sqlite_copy
from tests.processes import Family

pytestmark = [pytest.mark.redis, pytest.mark.slow]

UPDATER = "indexer.core.dictionary.updater"


def private_database(redis_url: str, number: int = 13) -> str:
    """The same Redis, another database: the schedules this test's queue server sends have no
    fetcher to take them, and must not wait for the next test's fetchers in the shared one."""
    return redis_url_for(redis_url, db=number)


def engine_env(tmp_path, redis_url: str, migrated_sqlite) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update({
        "DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "REDIS_URL": redis_url,
        "VAR_DIRECTORY": str(tmp_path / "var"),
        "DATABASE_URL": sqlite_copy(migrated_sqlite, tmp_path), "NUM_QUEUE_SERVERS": "1",
        "QUEUE_SERVER_TOKEN": "test-token", "PYTHONUNBUFFERED": "1",
    })
    return env


def start_a_crawl(env: dict[str, str]) -> None:
    """A running crawl, for the queue server to open."""
    code = textwrap.dedent("""
        from crawler import services
        from crawler.models import Crawl
        crawl = Crawl.objects.create(name="qs", page_options=services.page_options_default_get())
        services.seed_sites_add_bulk(crawl.pk, "http://127.0.0.1:9/")
        services.crawl_start(crawl.pk)
    """)
    done = subprocess.run([sys.executable, "manage.py", "shell", "-v", "0", "-c", code], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def queue_server(tmp_path, env: dict[str, str]) -> subprocess.Popen:
    with open(tmp_path / "qs.log", "a") as log:
        return subprocess.Popen([sys.executable, "manage.py", "run_queue_server", "--server",
                                 "0"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)


def updaters(family: Family) -> list[psutil.Process]:
    family.refresh()
    out = []
    for proc in family.alive():
        try:
            if UPDATER in proc.cmdline():
                out.append(proc)
        except psutil.Error:
            continue
    return out


def wait_for_updater(family: Family, timeout: float = 60) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = updaters(family)
        if found:
            return found[0]
        time.sleep(0.1)
    pytest.fail(f"no dictionary updater after {timeout}s:\n{family.describe()}")


def gone(proc: psutil.Process, timeout: float) -> bool:
    """Whether ``proc`` ended (or is a zombie, waiting to be reaped) within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_queue_server_runs_once_and_its_updater_goes_with_it(tmp_path, redis_url,
                                                             migrated_sqlite):
    url = private_database(redis_url)
    redis.Redis.from_url(url).flushdb()
    env = engine_env(tmp_path, url, migrated_sqlite)
    start_a_crawl(env)
    first = queue_server(tmp_path, env)
    families = [Family(first.pid, env["VAR_DIRECTORY"])]
    started = [first]
    try:
        old_updater = wait_for_updater(families[0])  # the crawl is open

        directory = tmp_path / "var" / "work" / "qs0"
        second = subprocess.run(
            [sys.executable, "manage.py", "run_queue_server", "--server", "0"], cwd=ROOT,
            env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 1, second.stdout + second.stderr
        assert (f"queue server 0 is already running for {directory} (pid {first.pid})"
                in second.stderr)

        os.kill(first.pid, signal.SIGKILL)  # the queue server alone, not its process group
        first.wait(timeout=10)
        assert gone(old_updater, timeout=10), "the dictionary updater outlived its queue server"

        restarted = queue_server(tmp_path, env)  # as up's supervisor restarts it
        started.append(restarted)
        families.append(Family(restarted.pid, env["VAR_DIRECTORY"]))
        new_updater = wait_for_updater(families[1])
        # every updater of this test's processes (found by their environment): the new one only
        assert [p.pid for p in updaters(families[1])] == [new_updater.pid]
    finally:
        for family in families:
            family.kill()
        for proc in started:
            proc.wait(timeout=10)
        redis.Redis.from_url(url).flushdb()
