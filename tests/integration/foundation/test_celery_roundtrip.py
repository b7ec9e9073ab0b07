"""A task goes through the real broker to a real worker process and its result comes back."""

import os
import subprocess
import sys
import time

import pytest

from operations.redis_urls import redis_url_for
from searchsite.celery import app, queue_names
from tests.conftest import ROOT
from tests.processes import stop

pytestmark = pytest.mark.redis


@pytest.fixture
def worker(redis_url, tmp_path):
    env = {**os.environ, "REDIS_URL": redis_url, "VAR_DIRECTORY": str(tmp_path),
           "DJANGO_SETTINGS_MODULE": "searchsite.settings.base"}
    env.pop("DATABASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "searchsite", "worker", "-Q", "fetch,qs.0",
         "-c", "1", "-n", f"test{os.getpid()}@%h", "--without-gossip", "--without-mingle",
         "--loglevel", "WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    yield proc
    stop(proc)


def test_round_trip_through_real_worker(redis_url, worker):
    app.conf.broker_url = app.conf.result_backend = redis_url_for(redis_url, celery=True)
    try:
        from crawler.tasks import machine_ping

        started = time.monotonic()
        for queue in ("fetch", "qs.0"):
            result = machine_ping.apply_async(args=[{"queue": queue, "n": 1}], queue=queue)
            reply = result.get(timeout=60)
            assert reply["echo"] == {"queue": queue, "n": 1}
            assert reply["pid"] == worker.pid or reply["pid"] != os.getpid()
        assert time.monotonic() - started < 60
    finally:
        app.conf.broker_url = None
        app.conf.result_backend = None


def test_app_configuration_is_safe():
    conf = app.conf
    assert conf.task_serializer == "json" and conf.accept_content == ["json"]
    assert "pickle" not in conf.accept_content
    assert conf.task_acks_late is True and conf.worker_prefetch_multiplier == 1
    assert conf.task_reject_on_worker_lost is True
    assert queue_names(3) == ["fetch", "qs.0", "qs.1", "qs.2"]
