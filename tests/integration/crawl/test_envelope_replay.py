"""Signed batches through the real broker to a real queue-server inbox worker (Celery, Redis):
a batch shipped the way fetchers ship it is stored once, a replay of the same envelope is
refused, and a copy moved to another queue server's queue is refused, whatever it carries."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import redis

from crawler.core.transport.shipping import CLOCK_SLACK, seal
from crawler.core.transport.spool import Spool
from crawler.machines.seen_envelopes import KEY_PREFIX
from indexer.core.runtime.workdir import crawl_paths, queue_server_dir
from indexer.core.shard_token import message_key
from operations.redis_urls import redis_url_for
from searchsite.celery import app
from tests.conftest import ROOT
from tests.processes import stop

pytestmark = pytest.mark.redis

TOKEN = "replay-test-token"
SERVER, OTHER = 7, 8  # queues no other test uses: nothing left in them by another test
CRAWL = 1_700_000_123


@pytest.fixture
def inbox_worker(redis_url, tmp_path, settings):
    settings.QUEUE_SERVER_TOKEN = TOKEN
    env = {**os.environ, "REDIS_URL": redis_url, "VAR_DIRECTORY": str(tmp_path / "var"),
           "WORK_DIRECTORY": str(tmp_path / "work"), "QUEUE_SERVER_TOKEN": TOKEN,
           "DJANGO_SETTINGS_MODULE": "searchsite.settings.base"}
    env.pop("DATABASE_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "searchsite", "worker", "-Q",
         f"qs.{SERVER},qs.{OTHER}", "-c", "1", "-n", f"replay{os.getpid()}@%h",
         "--without-gossip", "--without-mingle", "--loglevel", "WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    app.conf.broker_url = app.conf.result_backend = redis_url_for(redis_url, celery=True)
    try:
        yield tmp_path / "work"
    finally:
        app.conf.broker_url = None
        app.conf.result_backend = None
        stop(proc)


def inbox(work, server: int) -> list[dict]:
    spool = Spool(crawl_paths(queue_server_dir(work, server), CRAWL)["inbox"])
    return [json.loads(item.payload) for item in spool.take("batch")]


def test_a_replayed_or_moved_batch_is_refused_by_the_real_worker(inbox_worker, redis_url,
                                                                 settings):
    from crawler.tasks import qs_receive_task, ship_batch

    batch = {"crawl": CRAWL, "server": SERVER, "docs": [], "discovered": []}
    first = ship_batch(SERVER, batch).get(timeout=60)
    assert first["server"] == SERVER and first["crawl"] == CRAWL
    ttl = redis.Redis.from_url(redis_url).ttl(KEY_PREFIX + first["stored"])
    assert settings.ENVELOPE_MAX_AGE < ttl <= settings.ENVELOPE_MAX_AGE + CLOCK_SLACK

    envelope = seal("batch", {**batch, "schedule": "b"}, message_key(TOKEN),
                    route={"server": SERVER, "crawl": CRAWL})
    assert "stored" in qs_receive_task.apply_async(
        args=[envelope], queue=f"qs.{SERVER}").get(timeout=60)
    replayed = qs_receive_task.apply_async(args=[envelope], queue=f"qs.{SERVER}")
    assert "was handled already: a replay" in replayed.get(timeout=60)["refused"]

    fresh = seal("batch", {**batch, "schedule": "c"}, message_key(TOKEN),
                 route={"server": SERVER, "crawl": CRAWL})
    moved = qs_receive_task.apply_async(args=[fresh], queue=f"qs.{OTHER}")
    assert f"for queue qs.{SERVER} was delivered on qs.{OTHER}" in moved.get(
        timeout=60)["refused"]

    assert inbox(inbox_worker, SERVER) == [batch, {**batch, "schedule": "b"}]
    assert inbox(inbox_worker, OTHER) == []
