"""The news sources' scheduled update as ``manage.py up`` runs it (issue 37, item 1): Celery
beat (``up``'s scheduler child, the same command line) sends the update task every
``NEWS_TICK_SECONDS`` to a fetcher worker (``up``'s, the same command line), which reads the
due feed from a loopback HTTP server and indexes its items; a new item of the feed is found on
the News tab after a later run, with neither process restarted."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from operations.management.commands.up import scheduler_spec, worker_specs
from tests.conftest import ROOT, migrated_sqlite_template, sqlite_copy
from tests.polling import wait_until
from tests.web.news_feeds import feed_server, rss

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.long, pytest.mark.django_db]


def items(database: Path) -> list[str]:
    with sqlite3.connect(database) as db:
        return [row[0] for row in db.execute("SELECT url FROM crawler_newsitem ORDER BY url")]


def news_urls(client, query: str) -> list[str]:
    data = client.get("/", {"q": query, "tab": "news", "f": "json"}).json()
    return [r["url"] for r in data["results"]]


def logs(folder: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-2000:]}" for p in folder.glob("*.log"))


def test_scheduled_updates_pick_up_new_items_without_a_restart(tmp_path, redis_url, client,
                                                                search_work, settings):
    work, var = tmp_path / "work", tmp_path / "var"
    settings.WORK_DIRECTORY = work  # the test process searches the workers' news index
    redis.Redis.from_url(redis_url).flushdb()  # no task of an earlier test left queued
    database_url = sqlite_copy(migrated_sqlite_template(), tmp_path / "db")
    database = Path(database_url.removeprefix("sqlite:///"))
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "REDIS_URL": redis_url,
                "DATABASE_URL": database_url, "VAR_DIRECTORY": str(var),
                "WORK_DIRECTORY": str(work), "NEWS_TICK_SECONDS": "1",
                "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8", "PYTHONUNBUFFERED": "1"})
    var.mkdir()
    specs = [worker_specs(sys.executable, str(ROOT), 1, [])[0],
             scheduler_spec(sys.executable, str(ROOT), var)]
    procs: list[subprocess.Popen] = []
    with feed_server() as feeds:
        now = time.time()
        first = ("Lighthouse keeper retires", feeds.url("/a/1"), "After forty years.",
                 now - 3 * 24 * 3600)
        url = feeds.serve("/coast.rss", rss("Coast", [first]))
        with sqlite3.connect(database) as db:
            db.execute("INSERT INTO crawler_newssource (name, url, language, update_minutes, "
                       "enabled, last_error, last_new_items) VALUES (?, ?, '', 5, 1, '', 0)",
                       ("Coast Radio", url))
        try:
            for spec in specs:
                log = open(tmp_path / f"{spec.name}.log", "w")
                procs.append(subprocess.Popen(list(spec.argv), cwd=spec.cwd, env=env,
                                              stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True))
            if not wait_until(lambda: items(database) == [feeds.url("/a/1")] or
                              any(p.poll() is not None for p in procs), 120,
                              "the first scheduled update") or \
                    any(p.poll() is not None for p in procs):
                pytest.fail(logs(tmp_path))
            assert news_urls(client, "lighthouse") == [feeds.url("/a/1")]
            first_run = time.monotonic()
            hits = feeds.hits["/coast.rss"]
            # the feed gets a new item; the source is due again (as after its interval, or
            # the admin's "Read at the next run")
            feeds.serve("/coast.rss", rss("Coast", [
                ("New lighthouse lamp lit", feeds.url("/a/2"), "A brighter lamp.", now), first]))
            with sqlite3.connect(database) as db:
                db.execute("UPDATE crawler_newssource SET next_update_at = NULL")
            wait_until(lambda: len(items(database)) == 2, 120, "the next scheduled update")
            assert feeds.hits["/coast.rss"] == hits + 1  # not read before it was due
            assert time.monotonic() - first_run < 60  # a tick of 1 s, not the 5 min interval
            # the newer item first (recency and relevance)
            assert news_urls(client, "lighthouse") == [feeds.url("/a/2"), feeds.url("/a/1")]
            assert all(p.poll() is None for p in procs)  # the same processes did both
        finally:
            for proc in procs:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
            for proc in procs:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
