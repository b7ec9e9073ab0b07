"""The queue server's side of slow hosts: deferred urls go back into the queue, stalled
schedules are counted per host, and a host that stalled three schedules is dropped for the
crawl, survives a restart, and is skipped in later schedules."""

from __future__ import annotations

import json

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore

SLOW = "https://slow.example"
FAST = "https://fast.example"


def core_for(tmp_path) -> QueueServerCore:
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t",
                        seeds=(SeedSpec(SLOW + "/"), SeedSpec(FAST + "/")))
    return QueueServerCore(QueueServerConfig(0, 1, tmp_path, crawl, schedule_size=50))


def pages(schedule) -> list[str]:
    return sorted(e.url for e in schedule.entries if not e.is_robots)


def put(core: QueueServerCore, **fields) -> None:
    batch = {"crawl": 1700000000, "server": 0, "schedule": None, "done": False, "docs": [],
             "discovered": [], "robots": [], "host_errors": {}, "fetched": [], "counters": {}}
    batch.update(fields)
    core.spool.put("batch", json.dumps(batch).encode())
    assert core.ingest() == 1


def test_stalls_defer_then_drop_a_host(tmp_path) -> None:
    core = core_for(tmp_path)
    core.add_seeds([SLOW + "/", FAST + "/"])
    put(core, robots=[{"origin": SLOW, "status": 404, "body": None},
                      {"origin": FAST, "status": 404, "body": None}])
    (first,) = core.take_schedules()
    assert pages(first) == [FAST + "/", SLOW + "/"]
    # the slow host stalled: its url comes back (the Bloom filter would refuse it as new)
    put(core, schedule=first.id, done=True, stalls={SLOW: 2},
        deferred=[[SLOW + "/", 0, 0.0, 0, "default", 0]])
    assert core.counters["deferred_urls"] == 1 and core.error_hosts[SLOW] == 2
    (second,) = core.take_schedules()
    assert pages(second) == [SLOW + "/"] and core.skip_hosts(second) == []
    put(core, stalls={SLOW: 1}, discovered=[[SLOW + "/a", 1, 0, SLOW + "/", 0.0, 0, False,
                                             True, 0.0]])
    assert SLOW not in core.dropped_hosts
    put(core, stalls={SLOW: 5}, hopeless=[])  # some of its downloads came in time: no count
    assert core.host_stalls[SLOW] == 2 and core.error_hosts[SLOW] == 8
    put(core, schedule=second.id, done=True, stalls={SLOW: 1},
        deferred=[[SLOW + "/", 0, 0.0, 0, "default", 0]],
        discovered=[[SLOW + "/b", 1, 1, SLOW + "/", 0.0, 0, False, True, 0.0]])
    # the third stalled schedule drops the host: its deferred and newly found urls are left out
    assert core.dropped_hosts[SLOW] == "stalled 3 schedules"
    assert core.counters["dropped_host_urls"] == 2
    stats = core.stats()
    assert stats["dropped_hosts"] == {SLOW: "stalled 3 schedules"}
    assert stats["error_hosts"][SLOW] == 9 and stats["stalled_hosts"] == 1
    (third,) = core.take_schedules()  # /a, queued before the drop
    assert pages(third) == [SLOW + "/a"] and core.skip_hosts(third) == [SLOW]
    core.close()
    again = core_for(tmp_path)  # a restarted queue server remembers
    assert again.dropped_hosts == {SLOW: "stalled 3 schedules"}
    assert again.host_stalls == {SLOW: 3}
    again.close()



def test_a_url_abandoned_three_times_is_not_requeued_again_even_after_a_restart(tmp_path):
    """Issue 18: a page that never finishes by its deadline is tried at most three times."""
    core = core_for(tmp_path)
    row = [FAST + "/never", 1, 0.0, 0, "default", 0]
    put(core, deferred=[row], abandoned=[FAST + "/never"])
    put(core, deferred=[row, [FAST + "/other", 1, 0.0, 0, "default", 0]])  # not tried: no count
    assert core.page_tries == {FAST + "/never": 1} and core.counters["deferred_urls"] == 3
    core.close()
    core = core_for(tmp_path)  # the tries are kept in the state file
    put(core, deferred=[row], abandoned=[FAST + "/never"])
    assert core.page_tries[FAST + "/never"] == 2 and core.counters["abandoned_urls"] == 0
    put(core, deferred=[row], abandoned=[FAST + "/never"])
    assert core.counters["abandoned_urls"] == 1 and core.counters["deferred_urls"] == 4
    core.close()
