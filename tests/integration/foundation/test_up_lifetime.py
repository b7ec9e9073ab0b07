"""`manage.py up` owns its processes: killed with -9, it takes every child and grandchild along
(children still starting included), and a second `up` on the same VAR_DIRECTORY refuses to
start, naming the running one."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import ROOT, free_port, sqlite_copy
from tests.processes import Family

pytestmark = pytest.mark.slow


def up_env(tmp_path, migrated_sqlite) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update({
        "VAR_DIRECTORY": str(tmp_path / "var"), "WEB_BIND": f"127.0.0.1:{free_port()}",
        "MCP_BIND": f"127.0.0.1:{free_port()}", "NUM_FETCHERS": "1", "WEB_WORKERS": "1",
        "DATABASE_URL": sqlite_copy(migrated_sqlite, tmp_path),
        "DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "PYTHONUNBUFFERED": "1",
    })
    return env


class Up:
    """`manage.py up` in a subprocess, its output in a file."""

    def __init__(self, tmp_path, env) -> None:
        self.log = tmp_path / "up.log"
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([sys.executable, "manage.py", "up"], cwd=ROOT, env=env,
                                         stdout=out, stderr=subprocess.STDOUT)
        self.family = Family(self.proc.pid, env["VAR_DIRECTORY"])

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, ready, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready(self.text()):
            self.family.refresh()
            assert self.proc.poll() is None, f"up ended before {what}:\n{self.text()}"
            assert time.monotonic() < deadline, f"no {what} after {timeout}s:\n{self.text()}"
            time.sleep(0.1)

    def close(self) -> None:
        self.family.refresh()  # while up still runs: its children are all found below it
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self.family.kill()

    def kill_and_watch(self) -> list:
        """kill -9 of up; what of its family is still running 30 s later."""
        self.family.refresh()
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        return self.family.wait_until_gone(timeout=30)


def test_second_up_is_refused_and_children_still_starting_go_with_a_killed_up(
        tmp_path, migrated_sqlite):
    env = up_env(tmp_path, migrated_sqlite)
    up = Up(tmp_path, env)
    try:
        up.wait_for(lambda text: "[up] started redis" in text, "redis")  # the lock is held
        second = subprocess.run([sys.executable, "manage.py", "up"], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=30)
        assert second.returncode == 1
        assert (f"manage.py up is already running for {env['VAR_DIRECTORY']} "
                f"(pid {up.proc.pid})") in second.stderr
        assert "[up] started" not in second.stdout
        # the refused one started nothing: one redis, one queue server, all of the first up
        up.wait_for(lambda text: "all processes are up" in text, "start")
        up.family.refresh()
        names = up.family.commands()
        assert sum("redis-server" in n for n in names) == 1, names
        assert sum("run_queue_server" in n for n in names) == 1, names
        # the Celery workers and the queue server have only just been started (they take
        # seconds to boot): killed now, up leaves children in the middle of starting, and they
        # must stop by themselves all the same
        left = up.kill_and_watch()
        assert not left, "outlived the killed up:\n" + up.family.describe(left)
    finally:
        up.close()


def test_killed_up_takes_every_child_and_grandchild_along(tmp_path, migrated_sqlite):
    env = up_env(tmp_path, migrated_sqlite)
    up = Up(tmp_path, env)
    try:
        # every Celery worker has its pool, gunicorn its worker, the queue server runs
        up.wait_for(lambda text: len(re.findall(r"@\S+ ready\.", text)) >= 3
                    and "queue server 0 of 1 started" in text, "ready workers")
        tree = psutil.Process(up.proc.pid).children(recursive=True)
        grandchildren = [p for p in tree if p.ppid() != up.proc.pid]
        assert len(grandchildren) >= 4, up.family.describe()  # 3 Celery pools, gunicorn's worker
        left = up.kill_and_watch()
        assert not left, "outlived the killed up:\n" + up.family.describe(left)
    finally:
        up.close()
