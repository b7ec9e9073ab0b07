"""Every fetcher process says it is alive, idle or not (issue 19): the Machines page showed one
fetcher while two ran, and an idle fetcher's heartbeat read "120 s ago". A real Celery worker
on the ``fetch`` queue with a pool of two processes, on the test Redis, with no crawl at all:
both pool processes appear, each with heartbeats that keep coming while idle; once the worker
is killed with -9 they are shown as gone."""

from __future__ import annotations

import json

import psutil
import pytest

from tests.integration.crawl.test_processes import Engine
from tests.polling import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.slow]


def machines(engine):
    out = engine.django("import json; from crawler import selectors; "
                        "print(json.dumps([m.as_json() for m in selectors.machines_list()]))")
    return {m["name"]: m for m in json.loads(out.strip().splitlines()[-1])
            if m["kind"] == "fetcher"}


def beats(engine):
    out = engine.django("from crawler.models import Fetcher\n"
                        "for f in Fetcher.objects.all(): print(f.pid, f.state, "
                        "f.last_heartbeat.timestamp())")
    return {int(pid): (state, float(at)) for pid, state, at in
            (line.split() for line in out.strip().splitlines())}



@pytest.mark.long
def test_both_pool_processes_report_while_idle_and_are_gone_when_killed(tmp_path, redis_url):
    engine = Engine(tmp_path, redis_url)
    engine.env["FETCHER_HEARTBEAT_SECONDS"] = "1"
    try:
        engine.celery("fetch-pool", "fetch", concurrency=2)
        worker = psutil.Process(engine.procs["fetch-pool"].pid)
        def two_reported():
            found = beats(engine)
            return found if len(found) == 2 else None

        first = wait_until(two_reported, 60, "two fetcher processes did not report")
        children = {p.pid for p in worker.children(recursive=True)}
        assert set(first) <= children and len(set(first)) == 2  # the pool's two processes
        assert all(state == "idle" for state, _ in first.values())
        # idle, they go on reporting: every process's heartbeat moves on
        def all_moved_on():
            found = beats(engine)
            return found if all(found[pid][1] > first[pid][1] for pid in first) else None

        later = wait_until(all_moved_on, 30, "an idle fetcher stopped reporting")
        assert all(state == "idle" for state, _ in later.values())
        rows = machines(engine)
        assert len(rows) == 2 and all(m["state"] == "idle" and m["seconds_since"] < 3
                                      for m in rows.values())
        engine.kill("fetch-pool")
        # silent for more than three heartbeats: gone
        wait_until(lambda: all(m["state"] == "gone" for m in machines(engine).values()), 30,
                 "killed fetchers were not shown as gone")
    finally:
        engine.stop_all()
