"""Schedule claims on a real Redis (issue 18): a fetcher claims the schedule it runs, keeps
the claim fresh while it works (it lapses when the fetcher dies), and marks it done or given
back; a copy of a schedule held or done elsewhere is dropped without a request, and a
schedule received while its crawl is not running is given back. Without Redis, a schedule is
run rather than lost and the queue server releases nothing."""

from __future__ import annotations

import time

import pytest
import redis

from crawler import services
from crawler.core.queue_server.claims import DONE, HELD, RETURNED
from crawler.core.scheduler import Schedule, ScheduleEntry
from crawler.core.transport.wire import schedule_to_wire
from crawler.machines import fetching
from crawler.machines.claim_store import ClaimStore
from crawler.models import Crawl
from tests.conftest import free_port
from tests.fixtures.sites import FixtureServer, normal_site


@pytest.fixture
def make_store(redis_url):
    redis.Redis.from_url(redis_url).flushdb()
    return lambda claim_seconds: ClaimStore.from_url(redis_url, claim_seconds)


def test_claims_refuse_copies_lapse_and_end(make_store):
    store = make_store(0.3)
    later = time.time() + 60
    assert store.claim("s1", "fetcher-a") is None
    assert store.claim("s1", "fetcher-b") == HELD
    assert store.states(["s1", "s2"]) == {"s1": HELD}
    time.sleep(0.5)                      # fetcher-a died: its claim lapsed
    assert store.states(["s1"]) == {}
    assert store.claim("s1", "fetcher-b") is None
    store.end("s1", True, later)
    assert store.claim("s1", "fetcher-c") == DONE
    store.give_back("s1", later)         # a skipped copy does not undo a finished schedule
    assert store.states(["s1"]) == {"s1": DONE}
    store.give_back("s2", later)
    assert store.states(["s2"]) == {"s2": RETURNED}
    assert store.claim("s2", "fetcher-c") is None   # a returned schedule can be taken again
    assert store.states(["s1", "s2", "s3"]) == {"s1": DONE, "s2": HELD}


def test_holding_keeps_the_claim_fresh_then_ends_it(make_store):
    store = make_store(0.6)
    later = time.time() + 60
    assert store.claim("s1", "fetcher-a") is None
    with store.holding("s1", "fetcher-a", later) as holding:
        time.sleep(1.5)                  # over twice the claim's life
        assert store.states(["s1"]) == {"s1": HELD}
        holding.done = True
    assert store.states(["s1"]) == {"s1": DONE}
    assert store.claim("s2", "fetcher-a") is None
    with pytest.raises(RuntimeError), store.holding("s2", "fetcher-a", later):
        raise RuntimeError("the run failed")
    assert store.states(["s2"]) == {"s2": RETURNED}


def test_without_redis_a_schedule_runs_and_nothing_is_released():
    store = ClaimStore.from_url(f"redis://127.0.0.1:{free_port()}/0", claim_seconds=1.0)
    assert store.claim("s1", "fetcher-a") is None
    assert store.states(["s1"]) is None
    store.end("s1", True, time.time() + 60)   # logged, not raised


@pytest.mark.django_db
def test_fetch_task_drops_held_copies_and_gives_back_when_stopped(settings, tmp_path,
                                                                  redis_url, monkeypatch):
    settings.WORK_DIRECTORY = tmp_path
    settings.REDIS_URL = redis_url
    redis.Redis.from_url(redis_url).flushdb()
    monkeypatch.setattr(fetching, "_claims", fetching._ClaimStoreCache())
    site = normal_site("claimed", pages=1, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        crawl = Crawl.objects.create(name="claims",
                                     page_options=services.page_options_default_get())
        services.seed_sites_add_bulk(crawl.pk, server.url("/"))
        services.crawl_start(crawl.pk)
        crawl.refresh_from_db()

        def message(sid: str) -> dict:
            entry = ScheduleEntry(server.url("/"), 0, 0.0, 0, 0.0, None, 0)
            schedule = Schedule(sid, (entry,), time.time(), time.time() + 60, 10)
            return schedule_to_wire(schedule, crawl.timestamp, crawl.pk, 0)

        shipped: list[tuple[int, dict]] = []
        ship = lambda server, batch: shipped.append((server, batch))  # noqa: E731
        claims = fetching._claims.get()
        assert claims.claim("held-1", "another-fetcher") is None
        assert fetching.run_schedule(message("held-1"), ship) == {"duplicate": "held-1",
                                                                  "claim": HELD}
        assert server.log == [] and shipped == []
        report = fetching.run_schedule(message("mine-1"), ship)
        assert report["schedule"] == "mine-1" and report["fetched"] == 1
        assert [e.path for e in server.log] == ["/"]
        assert shipped[-1][1]["schedule"] == "mine-1" and shipped[-1][1]["done"]
        assert claims.states(["mine-1"]) == {"mine-1": DONE}
        assert fetching.run_schedule(message("mine-1"), ship)["duplicate"] == "mine-1"
        services.crawl_stop(crawl.pk)
        assert fetching.run_schedule(message("late-1"), ship) == {"skipped": "late-1"}
        assert claims.states(["late-1"]) == {"late-1": RETURNED}
        assert [e.path for e in server.log] == ["/"]
