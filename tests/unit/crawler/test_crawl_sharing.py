"""Several crawls on one queue server (issue 37, item 7): their schedules go out in turns within
the queue server's limit, a crawl with nothing to hand out leaves its turns to the others; the heartbeat's per-crawl counters,
and the earlier one-crawl form, read back the same way."""

from __future__ import annotations

import json

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.heartbeat import (
    crawl_counters,
    heartbeat_counters,
    reported_crawls,
    saved_crawls,
    server_totals,
)
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.queue_server.sharing import take_fairly


def crawl_core(tmp_path, crawl_id: int, hosts: list[str]) -> QueueServerCore:
    """A crawl of ``hosts`` (one url each) whose robots.txt are all answered, with one url
    per schedule: it has ``len(hosts)`` schedules to hand out."""
    timestamp = 1700000000 + crawl_id
    crawl = CrawlConfig(crawl_id=crawl_id, timestamp=timestamp, name=f"c{crawl_id}",
                        seeds=tuple(SeedSpec(h + "/") for h in hosts))
    core = QueueServerCore(QueueServerConfig(0, 1, tmp_path / "qs0", crawl, schedule_size=1,
                                             max_outstanding=100))
    core.add_seeds(h + "/" for h in hosts)
    robots = core.take_schedules()  # the robots.txt schedules come first
    for schedule in robots:
        batch = {"crawl": timestamp, "server": 0, "schedule": schedule.id, "done": True,
                 "docs": [], "discovered": [], "host_errors": {}, "fetched": [],
                 "counters": {}, "robots": [{"origin": h, "status": 404, "body": None}
                                            for h in hosts]}
        core.spool.put("batch", json.dumps(batch).encode())
    core.ingest(limit=None)
    assert core.schedules_out() == 0
    return core


def hosts(name: str, count: int) -> list[str]:
    return [f"https://{name}{i}.example" for i in range(count)]


def test_crawls_take_turns_within_the_limit(tmp_path) -> None:
    a = crawl_core(tmp_path, 1, hosts("a", 5))
    b = crawl_core(tmp_path, 2, hosts("b", 5))
    taken = take_fairly([a, b], max_outstanding=4, start=0)
    assert [index for index, _ in taken] == [0, 1, 0, 1]
    assert a.schedules_out() == b.schedules_out() == 2
    assert take_fairly([a, b], max_outstanding=4, start=1) == []  # at the limit: none
    # one of a's schedules ends: the freed place goes to the crawl whose turn it is
    done = a.queue.outstanding()[0]
    batch = {"crawl": a.config.crawl.timestamp, "server": 0, "schedule": done.id,
             "done": True, "docs": [], "discovered": [], "robots": [], "host_errors": {},
             "fetched": [], "counters": {}}
    a.spool.put("batch", json.dumps(batch).encode())
    a.ingest()
    assert [index for index, _ in take_fairly([a, b], max_outstanding=4, start=1)] == [1]
    assert (a.schedules_out(), b.schedules_out()) == (1, 3)


def test_a_crawl_without_work_leaves_its_turns_to_the_others(tmp_path) -> None:
    a = crawl_core(tmp_path, 1, hosts("a", 6))
    b = crawl_core(tmp_path, 2, hosts("b", 1))
    taken = take_fairly([a, b], max_outstanding=5, start=1)
    assert [index for index, _ in taken] == [1, 0, 0, 0, 0]
    assert len({schedule.id for _, schedule in taken}) == 5
    assert (a.schedules_out(), b.schedules_out()) == (4, 1)


def test_heartbeat_counters_per_crawl_and_the_earlier_form() -> None:
    counters = heartbeat_counters(
        {7: {"queued": 5, "idle": False, "tiers": {"0": 2}, "errors_by_kind": {"tls": 1}},
         9: {"queued": 3, "idle": True, "tiers": {"0": 1, "2": 4}}},
        saved=[4], disk={"paused": False})
    assert reported_crawls(counters) == [7, 9] and saved_crawls(counters) == {4}
    assert crawl_counters(counters, 9) == {"queued": 3, "idle": True,
                                           "tiers": {"0": 1, "2": 4}}
    assert crawl_counters(counters, 4) is None
    assert server_totals(counters) == {"disk": {"paused": False}, "queued": 8,
                                       "tiers": {"0": 3, "2": 4},
                                       "errors_by_kind": {"tls": 1}}
    earlier = {"crawl": 7, "queued": 5, "idle": True, "saved": 3, "disk": {"paused": True}}
    assert reported_crawls(earlier) == [7] and saved_crawls(earlier) == {3}
    assert crawl_counters(earlier, 7) == {"queued": 5, "idle": True}
    assert crawl_counters(earlier, 8) is None and server_totals(earlier) == earlier
    assert reported_crawls({"crawl": None}) == [] and saved_crawls(None) == set()
