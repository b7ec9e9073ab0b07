"""A crawl-delayed host freed by its fetcher goes out again at once, in a schedule of its own
beside the usual ones: its delay paces it, not the other hosts' long schedules (the local
web's requests.readthedocs.io idled 22 s of its 37 in a default-tier crawl waiting for one)."""

from __future__ import annotations

import pytest

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore

from .test_queue_server_stalls import FAST, SLOW, pages, put


def _core(tmp_path, delayed_schedules: int) -> QueueServerCore:
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t",
                        seeds=(SeedSpec(SLOW + "/"), SeedSpec(FAST + "/")))
    return QueueServerCore(QueueServerConfig(0, 1, tmp_path, crawl, schedule_size=50,
                                             max_outstanding=1,
                                             delayed_schedules=delayed_schedules))


def _link(url: str) -> list[object]:
    return [url, 1, 0, SLOW + "/", 0.0, 0, False, True, 0.0]


def _first_schedule_with_parked_urls(core: QueueServerCore):  # type: ignore[no-untyped-def]
    core.add_seeds([SLOW + "/", FAST + "/"])
    (robots,) = core.take_schedules()
    put(core, schedule=robots.id, done=True,
        robots=[{"origin": SLOW, "status": 200, "body": "User-agent: *\nCrawl-delay: 2\n"},
                {"origin": FAST, "status": 404, "body": None}])
    (first,) = core.take_schedules()
    assert pages(first) == [FAST + "/", SLOW + "/"]
    # slow.example's links come in while ``first`` holds it: they are parked
    put(core, schedule=first.id,
        discovered=[_link(f"{SLOW}/{i}") for i in range(40)]
        + [_link(f"{FAST}/{i}") for i in range(100)])
    return first


@pytest.mark.parametrize("delayed_schedules", [1, 2])
def test_a_freed_delayed_host_goes_out_beside_the_long_schedule(tmp_path,
                                                                 delayed_schedules) -> None:
    core = _core(tmp_path, delayed_schedules)
    try:
        first = _first_schedule_with_parked_urls(core)
        assert core.take_schedules() == []   # the usual limit is reached; nothing is freed
        put(core, schedule=first.id, released=[SLOW])
        (own,) = core.take_schedules()
        # its share (30 s of schedule time at 2 s a request), and only its urls
        assert len(own.entries) == 15
        assert all(e.url.startswith(SLOW + "/") and e.crawl_delay == 2.0 for e in own.entries)
        assert core.take_schedules() == []   # the host is held again, by ``own``
        put(core, schedule=own.id, done=True)
        put(core, schedule=first.id, done=True)
        usual = core.take_schedules()
        assert [len(s.entries) for s in usual] == [50]  # one usual schedule: fast.example's
    finally:
        core.close()


def test_no_schedule_of_its_own_when_turned_off(tmp_path) -> None:
    core = _core(tmp_path, 0)
    try:
        first = _first_schedule_with_parked_urls(core)
        put(core, schedule=first.id, released=[SLOW])
        assert core.take_schedules() == []   # it waits for ``first`` to end
        put(core, schedule=first.id, done=True)
        (usual,) = core.take_schedules()
        slow = [e.url for e in usual.entries if e.url.startswith(SLOW + "/")]
        assert len(slow) == 15    # the parked urls went first into the next usual one
    finally:
        core.close()
