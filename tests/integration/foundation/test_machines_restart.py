"""The Machines page's fetcher pool actions (issue 37, item 9) on a real fetcher pool: the
``fetchers`` child of ``manage.py up`` (the same Celery worker command line) under up's
supervisor with its logs and control folders; the admin shows the pool's recent output and its
Restart button makes the supervisor stop the worker and start a new one (new processes, new
output), through the Django test client."""

from __future__ import annotations

import io
import os
import sys
import threading

import psutil
import pytest
import redis
from django.urls import reverse

from operations.child_control import CONTROL_DIR, RESTARTABLE
from operations.child_logs import LOG_DIR
from operations.management.commands.up import worker_specs
from operations.supervisor import Supervisor
from tests.conftest import ROOT, migrated_sqlite_template, sqlite_copy
from tests.polling import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.long, pytest.mark.django_db]


def pool_pids(pid: int) -> set[int]:
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except psutil.Error:
        return set()


def test_restart_the_fetcher_pool_and_see_its_output(tmp_path, redis_url, admin_client,
                                                     client, settings):
    var = tmp_path / "var"
    settings.VAR_DIRECTORY = var
    redis.Redis.from_url(redis_url).flushdb()
    env = {"DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "REDIS_URL": redis_url,
           "DATABASE_URL": sqlite_copy(migrated_sqlite_template(), tmp_path / "db"),
           "VAR_DIRECTORY": str(var), "PYTHONUNBUFFERED": "1"}
    os_env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    spec = worker_specs(sys.executable, str(ROOT), 2, [])[0]
    spec = type(spec)(spec.name, spec.argv, env={**os_env, **env}, cwd=spec.cwd)
    out = io.StringIO()
    supervisor = Supervisor([spec], out=out, poll_interval=0.1, grace=30,
                            log_dir=var / LOG_DIR, control_dir=var / CONTROL_DIR,
                            restartable=RESTARTABLE)
    thread = threading.Thread(target=supervisor.run, kwargs={"install_signals": False})
    thread.start()
    machines = reverse("admin:crawler_machine_changelist")
    try:
        child = supervisor.children[0]
        wait_until(lambda: child.process is not None, 30, "the fetcher pool starts")
        first = child.process.pid
        wait_until(lambda: len(pool_pids(first)) == 2 and "ready" in out.getvalue(), 120,
                   "the pool's two processes and its ready line")
        first_pool = pool_pids(first)
        page = admin_client.get(machines).content.decode()
        assert 'id="restart-fetchers"' in page and "fetch@" in page  # the worker's banner
        # who may only look sees the output, not the button, and may not post
        restart = reverse("admin:crawler_machines_restart", args=["fetchers"])
        assert admin_client.get(restart).status_code == 405
        assert admin_client.post(reverse("admin:crawler_machines_restart",
                                         args=["web"])).status_code == 404
        assert client.post(restart).status_code == 302  # anonymous: to the login page
        assert supervisor.children[0].process.pid == first
        response = admin_client.post(restart)
        assert response.status_code == 302 and response["Location"] == machines
        wait_until(lambda: child.process is not None and child.process.pid != first, 60,
                   "the restart")
        second = child.process.pid
        assert not psutil.pid_exists(first) or psutil.Process(first).status() == "zombie"
        wait_until(lambda: len(pool_pids(second)) == 2, 120, "the new pool's processes")
        assert not pool_pids(second) & first_pool
        assert child.restarts == 1
        wait_until(lambda: out.getvalue().count(" ready.") >= 2, 120, "the new worker ready")
        data = admin_client.get(reverse("admin:crawler_machines_json")).json()
        assert data["restart_pending"] is False
        assert sum(" ready." in line for line in data["pool_log"]) >= 2
        assert "restarting fetchers (asked from the admin)" in out.getvalue()
    finally:
        supervisor.request_stop()
        thread.join(timeout=90)
    assert not thread.is_alive()
