"""The operator's host overrides in the crawl queue (issue 19, item 3): a minimum delay paces
a host like a crawl-delay, exclusion refuses its waiting, parked, queued and new urls; both
survive a checkpoint and a kill -9 (journal replay). And the urls the queue refuses are kept,
with their reason, for the admin's refused-urls list."""

from __future__ import annotations

import pytest

from crawler.core.scheduler import DiscoveredUrl

from .conftest import IGNORE, drain

ROBOTS = "User-agent: *\nDisallow: /private\n"


def test_refused_urls_are_kept_with_their_reason(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(max_depth=2)
    queue.add_seeds(["http://a.com/", "http://a.com/private/1"])
    queue.add_discovered([DiscoveredUrl("http://a.com/deep", 3, 0),
                          DiscoveredUrl("ftp://a.com/x", 1, 0)])
    robots = queue.next_schedule()
    queue.add_robots("http://a.com", ROBOTS, 200)
    queue.acknowledge(robots.id)
    queue.add_discovered([DiscoveredUrl("http://a.com/private/2", 1, 0)])
    assert sorted(queue.take_refused()) == [
        ("depth", "http://a.com/deep"), ("invalid", "ftp://a.com/x"),
        ("robots", "http://a.com/private/1"), ("robots", "http://a.com/private/2")]
    assert queue.take_refused() == []  # taken once
    dropped = dict(queue.stats().dropped)
    assert dropped["robots"] == 2 and dropped["depth"] == 1 and dropped["invalid"] == 1


def test_a_minimum_delay_paces_the_host(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, schedule_size=20, delayed_schedule_seconds=10.0)
    queue.add_discovered(DiscoveredUrl(f"http://a.com/{i}", 1, 0) for i in range(10))
    assert queue.set_host_override("http://a.com", 5.0, False)
    assert not queue.set_host_override("http://a.com/", 5.0, False)  # unchanged: no record
    schedule = queue.next_schedule()
    assert [e.crawl_delay for e in schedule.entries] == [5.0, 5.0]  # 10 s / 5 s each
    assert queue.host_politeness("http://a.com") == (5.0, True, False)
    with pytest.raises(ValueError):
        queue.set_host_override("http://a.com", -1.0, False)


def test_exclusion_refuses_waiting_queued_and_new_urls(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(schedule_size=2)
    queue.add_seeds(["http://a.com/", "http://b.com/"])
    robots = queue.next_schedule()
    queue.add_robots("http://a.com", None, 404)
    queue.acknowledge(robots.id)
    queue.add_discovered([DiscoveredUrl(f"http://a.com/{i}", 1, 0) for i in range(3)])
    queue.take_refused()
    # b.com still waits for its robots.txt, a.com's urls are queued
    assert queue.set_host_override("http://b.com", 0.0, True)
    assert queue.set_host_override("http://a.com", 0.0, True)
    assert queue.stats().waiting_robots == 0
    assert drain(queue) == []
    queue.add_discovered([DiscoveredUrl("http://a.com/new", 2, 0)])
    refused = queue.take_refused()
    assert {r for r, _ in refused} == {"excluded"}
    assert sorted(u for _, u in refused) == [
        "http://a.com/", "http://a.com/0", "http://a.com/1", "http://a.com/2",
        "http://a.com/new", "http://b.com/"]
    assert queue.host_politeness("http://a.com") == (0.0, True, True)
    # lifted: new urls come in again
    assert queue.set_host_override("http://a.com", 0.0, False)
    queue.add_discovered([DiscoveredUrl("http://a.com/later", 2, 0)])
    assert drain(queue) == ["http://a.com/later"]


def test_overrides_survive_a_checkpoint_and_a_replay(make_queue, tmp_path) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    queue.add_discovered([DiscoveredUrl("http://a.com/1", 1, 0)])
    queue.set_host_override("http://a.com", 3.0, False)
    queue.checkpoint()
    queue.set_host_override("http://b.com", 0.0, True)   # only in the journal
    queue.abandon()                                      # as a kill -9
    again = make_queue()
    assert again.host_politeness("http://a.com") == (3.0, True, False)
    assert again.host_politeness("http://b.com") == (0.0, True, True)
    assert again.take_refused() == []  # a replay refuses nothing twice
    again.add_discovered([DiscoveredUrl("http://b.com/x", 1, 0)])
    assert again.take_refused() == [("excluded", "http://b.com/x")]
