"""CrawlQueue behaviour: tiers, robots, crawl-delay, crawl orders, limits, recrawl, schedules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crawler.core.definition.crawl import CrawlOrder, RobotsBehaviour
from crawler.core.definition.siterules import SiteRules, parse_site_rules
from crawler.core.scheduler import (
    CorruptQueueError,
    DiscoveredUrl,
    QueueLockedError,
    SchedulerConfig,
    SchedulerConfigError,
)
from indexer.core.urls import url_hash

from .conftest import IGNORE, T0, drain

ROBOTS = "User-agent: *\nDisallow: /private\n"


def test_round_robin_across_tiers_fifo_within_a_tier(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, schedule_size=4)
    # one CLD: its urls 1-9 land in tier 0, 10-99 in tier 1
    urls = [f"http://a.com/{i}" for i in range(1, 21)]
    queue.add_discovered(DiscoveredUrl(u, 1, 0) for u in urls)
    assert dict(queue.stats().tiers) == {0: 9, 1: 11}
    first = queue.next_schedule()
    second = queue.next_schedule()
    third = queue.next_schedule()
    assert first.urls == urls[0:4]          # tier 0, arrival order
    assert second.urls == urls[9:13]        # then tier 1
    assert third.urls == urls[4:8]          # back to tier 0
    fourth = queue.next_schedule()
    assert fourth.urls == urls[13:17]
    # a schedule continues into the next tier when its own runs dry
    fifth = queue.next_schedule()
    assert fifth.urls == [urls[8], *urls[17:20]]


def test_robots_first_wait_release_and_refusal(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue()
    queue.add_seeds(["http://a.com/", "http://a.com/private/1", "http://b.com:8080/x"])
    queue.add_discovered([DiscoveredUrl("http://a.com/ok", 1, 0),
                          DiscoveredUrl("http://a.com/private/2", 1, 1)])
    stats = queue.stats()
    assert stats.waiting_robots == 5 and stats.waiting_hosts == 2
    assert stats.robots_txt_queued == 2 and stats.queued == 2
    schedule = queue.next_schedule()
    assert schedule.urls == ["http://a.com/robots.txt", "http://b.com:8080/robots.txt"]
    assert all(entry.is_robots for entry in schedule.entries)
    assert queue.next_schedule() is None       # everything else waits for robots.txt
    queue.add_robots("http://a.com/robots.txt", ROBOTS, 200)
    queue.add_robots("http://b.com:8080", None, 500)   # an error disallows the host
    assert queue.acknowledge(schedule.id)
    urls = drain(queue)
    assert urls == ["http://a.com/", "http://a.com/ok"]
    stats = queue.stats()
    assert stats.waiting_robots == 0 and dict(stats.dropped)["robots"] == 3
    # later urls of a known host are checked at once; robots.txt is never queued twice
    queue.add_discovered([DiscoveredUrl("http://a.com/private/3", 2, 0),
                          DiscoveredUrl("http://a.com/later", 2, 1),
                          DiscoveredUrl("http://a.com/robots.txt", 2, 2)])
    assert drain(queue) == ["http://a.com/later"]


def test_robots_404_allows_everything(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue()
    queue.add_seeds(["http://a.com/private/x"])
    robots = queue.next_schedule()
    queue.add_robots("http://a.com", "User-agent: *\nDisallow: /", 404)
    queue.acknowledge(robots.id)
    assert drain(queue) == ["http://a.com/private/x"]


def test_allow_landing_page_and_ignore(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=RobotsBehaviour.ALLOW_LANDING_PAGE)
    queue.add_seeds(["http://a.com/", "http://a.com/x"])
    robots = queue.next_schedule()
    queue.add_robots("http://a.com", "User-agent: *\nDisallow: /\n", 200)
    queue.acknowledge(robots.id)
    assert drain(queue) == ["http://a.com/"]
    ignoring = make_queue(tmp_path / "ignore", robots=IGNORE)
    ignoring.add_seeds(["http://a.com/", "http://a.com/x"])
    assert drain(ignoring) == ["http://a.com/", "http://a.com/x"]


def test_robots_retried_then_host_disallowed(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots_retries=2)
    queue.add_seeds(["http://a.com/x"])
    for _ in range(2):
        schedule = queue.next_schedule()
        assert schedule.urls == ["http://a.com/robots.txt"]
        queue.acknowledge(schedule.id)          # came back without robots data
    assert queue.next_schedule() is None
    assert queue.stats().waiting_robots == 0
    assert dict(queue.stats().dropped)["robots"] == 1


def test_sitemaps_from_robots_are_queued(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue()
    queue.add_seeds(["http://a.com/"])
    robots = queue.next_schedule()
    queue.add_robots("http://a.com", "Sitemap: http://a.com/sitemap.xml\n"
                     "Sitemap: http://other.com/s.xml\n", 200)
    queue.acknowledge(robots.id)
    tiers = {}
    while (schedule := queue.next_schedule()) is not None:
        tiers.update({e.url: e.tier for e in schedule.entries})
        queue.acknowledge(schedule.id)
    assert tiers == {"http://a.com/": 0, "http://a.com/sitemap.xml": 5}


def _delayed_setup(queue) -> None:  # type: ignore[no-untyped-def]
    queue.add_seeds(["http://slow.com/", "http://fast.com/"])
    robots = queue.next_schedule()
    queue.add_robots("http://slow.com", "User-agent: *\nCrawl-delay: 5\n", 200)
    queue.add_robots("http://fast.com", "", 200)
    queue.acknowledge(robots.id)
    queue.add_discovered([DiscoveredUrl(f"http://slow.com/{i}", 1, 0) for i in range(30)]
                         + [DiscoveredUrl(f"http://fast.com/{i}", 1, 0) for i in range(1000)])


def test_crawl_delay_share_and_parking(make_queue) -> None:  # type: ignore[no-untyped-def]
    # time-based share (was: one url per 100-slot round): a host with a 5 s delay gets
    # ceil(delayed_schedule_seconds / 5) urls of a schedule, in any slots
    queue = make_queue(robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500, round_size=100)
    assert queue.config.delayed_schedule_seconds == 30.0
    _delayed_setup(queue)
    first = queue.next_schedule()
    slow = [e for e in first.entries if e.url.startswith("http://slow.com")]
    assert len(slow) == 6 and all(e.crawl_delay == 5.0 for e in slow)
    assert len(first) == 500 and len({e.slot for e in first.entries}) == 500
    stats = queue.stats()
    assert stats.crawl_delayed > 0 and stats.delayed_hosts == 1
    # the host has an outstanding schedule: nothing of it in the next one
    second = queue.next_schedule()
    assert not [u for u in second.urls if u.startswith("http://slow.com")]
    queue.acknowledge(second.id)
    assert queue.stats().crawl_delayed > 0
    queue.acknowledge(first.id)                 # parked urls return to UrlQueue
    assert queue.stats().crawl_delayed == 0
    rest = drain(queue)
    slow_urls = [u for u in first.urls + second.urls + rest if u.startswith("http://slow.com")]
    assert sorted(slow_urls) == sorted(["http://slow.com/"]
                                       + [f"http://slow.com/{i}" for i in range(30)])


def test_a_delayed_hosts_parked_urls_go_first_once_it_is_free(make_queue) -> None:  # type: ignore[no-untyped-def]
    # slow.com's urls parked beyond its share come back before the 500 fast.com urls still
    # queued in the same tier: the next schedule takes its next share, not the end of the crawl
    queue = make_queue(robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500, round_size=100)
    _delayed_setup(queue)
    first = queue.next_schedule()
    queue.acknowledge(first.id)
    second = queue.next_schedule()
    slow = [e for e in second.entries if e.url.startswith("http://slow.com")]
    assert len(slow) == 6 and all(e.crawl_delay == 5.0 for e in slow)
    assert queue.stats().crawl_delayed == 30 + 1 - 12   # the rest parked again
    queue.acknowledge(second.id)
    rest = drain(queue)
    assert sorted(u for u in first.urls + second.urls + rest if u.startswith("http://slow.com")) \
        == sorted(["http://slow.com/"] + [f"http://slow.com/{i}" for i in range(30)])


def test_a_delayed_host_freed_before_its_schedule_ends(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the fetcher is done with slow.com before the rest of its schedule: the host goes to the
    # next schedule at once, and leaves the first one (a re-issue does not request it again)
    queue = make_queue(robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500, round_size=100)
    _delayed_setup(queue)
    first = queue.next_schedule()
    assert queue.free_hosts(first.id, ["http://fast.com", "http://other.com"]) == 0
    second = queue.next_schedule()
    assert not [u for u in second.urls if u.startswith("http://slow.com")]
    assert queue.free_hosts(first.id, ["http://slow.com"]) == 1
    assert queue.free_hosts(first.id, ["http://slow.com"]) == 0   # once
    third = queue.next_schedule()
    assert len([u for u in third.urls if u.startswith("http://slow.com")]) == 6
    (held,) = [s for s in queue.outstanding() if s.id == first.id]
    assert not [u for u in held.urls if u.startswith("http://slow.com")]
    assert len(held) == len(first) - 6
    # the first schedule's end does not free the host the third one holds now
    queue.acknowledge(first.id)
    assert queue.stats().crawl_delayed == 31 - 12   # still parked
    fourth = queue.next_schedule()
    assert fourth is None or not [u for u in fourth.urls if u.startswith("http://slow.com")]
    crashed = tmp_path / "crashed"
    shutil.copytree(tmp_path / "q", crashed)
    (crashed / "LOCK").unlink()
    assert make_queue(crashed, robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500,
                      round_size=100).stats() == queue.stats()


def test_a_freed_delayed_host_gets_a_schedule_of_its_own(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # while the long schedules are out, a schedule of only the urls slow.com had parked: its
    # next share, nothing of fast.com (whose 1,000 urls wait for the usual schedules)
    queue = make_queue(robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500, round_size=100)
    _delayed_setup(queue)
    first = queue.next_schedule()
    assert queue.next_schedule(unparked_only=True) is None   # slow.com is still held
    assert queue.free_hosts(first.id, ["http://slow.com"]) == 1
    own = queue.next_schedule(unparked_only=True)
    assert own is not None and len(own) == 6
    assert all(e.url.startswith("http://slow.com/") and e.crawl_delay == 5.0
               for e in own.entries)
    assert queue.next_schedule(unparked_only=True) is None   # held by ``own`` now
    assert queue.stats().crawl_delayed == 31 - 12
    # the journal replays it: a restart sees the same outstanding schedules
    crashed = tmp_path / "crashed"
    shutil.copytree(tmp_path / "q", crashed)
    (crashed / "LOCK").unlink()
    again = make_queue(crashed, robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500,
                       round_size=100)
    assert [s.urls for s in again.outstanding()] == [s.urls for s in queue.outstanding()]
    assert again.stats() == queue.stats()
    queue.acknowledge(own.id)
    queue.acknowledge(first.id)
    rest = drain(queue)
    assert sorted(u for u in first.urls + own.urls + rest if u.startswith("http://slow.com")) \
        == sorted(["http://slow.com/"] + [f"http://slow.com/{i}" for i in range(30)])


def test_a_free_delayed_hosts_new_urls_wait_for_a_schedule_of_their_own(make_queue) -> None:  # type: ignore[no-untyped-def]
    # slow.com's urls came while no schedule held it: a schedule of delayed hosts' urls only
    # takes its share at once, none of fast.com's 1,000 (the usual schedules' work)
    queue = make_queue(robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500, round_size=100)
    _delayed_setup(queue)
    own = queue.next_schedule(unparked_only=True)
    assert own is not None and len(own) == 6
    assert all(e.url.startswith("http://slow.com/") for e in own.entries)
    usual = queue.next_schedule()
    assert len(usual) == 500 and not [u for u in usual.urls if u.startswith("http://slow.com")]


def test_a_freed_hosts_own_schedule_loses_no_url_over_the_domain_cap(make_queue) -> None:  # type: ignore[no-untyped-def]
    # a domain cap of 5 slots: of slow.com's share of 6 one url is deferred back to its tier
    queue = make_queue(robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500, round_size=100,
                       max_cld_share=0.01)
    _delayed_setup(queue)
    first = queue.next_schedule()
    # found while ``first`` holds the host: parked at once
    queue.add_discovered([DiscoveredUrl(f"http://slow.com/new{i}", 1, 0) for i in range(10)])
    queue.free_hosts(first.id, ["http://slow.com"])
    own = queue.next_schedule(unparked_only=True)
    assert own is not None and len(own) == 5
    assert all(e.url.startswith("http://slow.com/new") for e in own.entries)
    queue.acknowledge(own.id)
    queue.acknowledge(first.id)
    rest = drain(queue)
    assert sorted(u for u in first.urls + own.urls + rest if u.startswith("http://slow.com")) \
        == sorted(["http://slow.com/"] + [f"http://slow.com/{i}" for i in range(30)]
                  + [f"http://slow.com/new{i}" for i in range(10)])


def test_crawl_delay_share_follows_the_expected_schedule_time(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=RobotsBehaviour.ALWAYS_FOLLOW, schedule_size=500,
                       delayed_schedule_seconds=12.0)
    _delayed_setup(queue)
    counts = []
    while (schedule := queue.next_schedule()) is not None:
        counts.append(sum(u.startswith("http://slow.com") for u in schedule.urls))
        queue.acknowledge(schedule.id)
    # ceil(12 / 5) = 3 per schedule, until the host's 31 urls are all out
    assert max(counts) == 3 and sum(counts) == 31
    with pytest.raises(SchedulerConfigError):
        SchedulerConfig(delayed_schedule_seconds=0)


def test_error_threshold_delays_a_host(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, schedule_size=300)
    queue.add_seeds([f"http://bad.com/{i}" for i in range(10)])
    queue.report_host_errors("http://bad.com", 49)
    assert len(queue.next_schedule()) == 10
    queue.add_seeds([f"http://bad.com/more/{i}" for i in range(10)])
    queue.report_host_errors("http://bad.com/any/url", 50)
    schedule = queue.next_schedule()
    # delayed 20 s: ceil(30 s / 20 s) = 2 urls of the host per schedule
    assert [e.crawl_delay for e in schedule.entries] == [20.0] * 2
    with pytest.raises(ValueError):
        queue.report_host_errors("bad.com", 50)       # a bare host is ambiguous


def test_breadth_first_is_fifo_by_depth(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, order=CrawlOrder.BREADTH_FIRST, schedule_size=3)
    queue.add_discovered([DiscoveredUrl("http://a.com/d2a", 2), DiscoveredUrl("http://a.com/d1a", 1),
                          DiscoveredUrl("http://b.com/d0", 0), DiscoveredUrl("http://a.com/d1b", 1)])
    first = queue.next_schedule()
    queue.add_discovered([DiscoveredUrl("http://c.com/d1c", 1), DiscoveredUrl("http://c.com/d3", 3)])
    assert first.urls == ["http://b.com/d0", "http://a.com/d1a", "http://a.com/d1b"]
    assert [e.tier for e in first.entries] == [0, 1, 1]
    assert drain(queue) == ["http://c.com/d1c", "http://a.com/d2a", "http://c.com/d3"]


def test_opic_picks_by_cash(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, order=CrawlOrder.OPIC, schedule_size=2)
    queue.add_seeds(["http://a.com/", "http://b.com/", "http://c.com/", "http://d.com/"])
    assert queue.opic_scores("http://a.com/") == (0.25, 0.25)
    first = queue.next_schedule()
    assert [e.weight for e in first.entries] == [0.25, 0.25]
    assert first.urls == ["http://a.com/", "http://b.com/"]        # ties: arrival order
    assert queue.opic_scores("http://a.com/") == (0.0, 0.25)       # cash reset, history kept
    # a.com/ had 0.25 and 2 outlinks: 0.125 each; b.com/ gives its 0.25 to one link
    queue.add_discovered([
        DiscoveredUrl("http://x.com/", 1, 0, source_url="http://a.com/", opic_cash=0.125),
        DiscoveredUrl("http://c.com/", 1, 1, source_url="http://a.com/", opic_cash=0.125),
        DiscoveredUrl("http://y.com/", 1, 0, source_url="http://b.com/", opic_cash=0.25),
    ])
    assert queue.opic_scores("http://c.com/") == (0.375, 0.375)
    second = queue.next_schedule()
    assert second.urls == ["http://c.com/", "http://d.com/"]
    assert [e.weight for e in second.entries] == [0.375, 0.25]
    third = queue.next_schedule()
    assert third.urls == ["http://y.com/", "http://x.com/"]
    assert queue.next_schedule() is None


def test_depth_and_page_limits(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, max_depth=2, max_pages=5, schedule_size=4)
    queue.add_discovered([DiscoveredUrl(f"http://a.com/{d}/{i}", d) for d in range(5)
                          for i in range(3)])
    assert dict(queue.stats().dropped)["depth"] == 6
    urls = drain(queue)
    assert len(urls) == 5 and queue.stats().scheduled == 5
    assert queue.next_schedule() is None


def test_site_rules(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rules = SiteRules(allowed=parse_site_rules("domain:ok.com"),
                      disallowed=parse_site_rules("bad.ok.com"), restrict=True,
                      seed_hosts=frozenset({"seed.org"}))
    queue = make_queue(robots=IGNORE, site_rules=rules)
    queue.add_seeds(["http://seed.org/", "http://other.net/"])
    queue.add_discovered([DiscoveredUrl("http://www.ok.com/", 1), DiscoveredUrl("http://bad.ok.com/", 1),
                          DiscoveredUrl("http://elsewhere.com/", 1)])
    assert sorted(drain(queue)) == ["http://seed.org/", "http://www.ok.com/"]
    # a disallowed site, and two urls outside the seed and allowed sites (issue 39: the two
    # reasons are told apart on the refused urls page)
    dropped = dict(queue.stats().dropped)
    assert (dropped["site_rules"], dropped["outside_seeds"]) == (1, 2)


def test_recrawl_keeps_the_bloom_filter_and_revisits_only_what_was_visited(make_queue) -> None:  # type: ignore[no-untyped-def]
    """Page recrawl no longer empties the seen-url filter: a url is fetched again because it
    was visited recrawl_days ago (its ETag goes with it), not because a link names it again;
    a url only fetched (a visit of unknown outcome) keeps its validators but is not due."""
    queue = make_queue(robots=IGNORE, recrawl_days=1)
    urls = ["http://a.com/fresh", "http://a.com/etag"]
    queue.add_seeds(urls)
    assert drain(queue, T0) == urls
    queue.record_fetched_many([("http://a.com/fresh", None, T0 + 3 * 86400),
                               ("http://a.com/etag", '"v1"', None)])
    queue.add_seeds(urls)                         # still in the Bloom filter: not re-queued
    assert queue.next_schedule(T0 + 2 * 86400) is None
    assert queue.visit_of(url_hash("http://a.com/etag")).etag == '"v1"'


def test_schedule_timeout_reissue_and_acknowledge(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, schedule_timeout=60, schedule_size=2)
    queue.add_seeds(["http://a.com/1", "http://a.com/2", "http://a.com/3"])
    first = queue.next_schedule(T0)
    assert first.deadline == T0 + 60
    second = queue.next_schedule(T0 + 1)
    assert queue.next_schedule(T0 + 30) is None
    again = queue.next_schedule(T0 + 61)           # the fetcher of `first` died
    assert (again.id, again.urls, again.reissue) == (first.id, first.urls, 1)
    assert queue.stats().outstanding_schedules == 2
    assert queue.acknowledge(first.id) and queue.acknowledge(second.id)
    assert not queue.acknowledge(first.id)         # late duplicate acknowledgement
    assert not queue.acknowledge("nope")
    assert queue.next_schedule(T0 + 10_000) is None
    assert queue.stats().scheduled == 3


def test_requester_gets_its_unacknowledged_schedule_again(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, schedule_size=1)
    queue.add_seeds(["http://a.com/1", "http://a.com/2"])
    first = queue.next_schedule(requester="fetcher-1")
    assert queue.next_schedule(requester="fetcher-1") == first
    other = queue.next_schedule(requester="fetcher-2")
    assert other.id != first.id
    queue.acknowledge(first.id)
    assert queue.next_schedule(requester="fetcher-1") is None


def test_cld_share_caps_one_domain_per_schedule(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, schedule_size=10, max_cld_share=0.3)
    queue.add_discovered([DiscoveredUrl(f"http://big.com/{i}", 1) for i in range(9)]
                         + [DiscoveredUrl(f"http://s{i}.org/", 1) for i in range(4)])
    first = queue.next_schedule()
    assert sum(u.startswith("http://big.com") for u in first.urls) == 3
    assert len(first) == 7
    assert len(drain(queue)) == 6


def test_reopen_after_close(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(schedule_size=3)
    queue.add_seeds(["http://a.com/", "http://b.com/"])
    robots = queue.next_schedule()
    queue.add_robots("http://a.com", ROBOTS, 200)
    queue.add_discovered([DiscoveredUrl(f"http://a.com/{i}", 1, i) for i in range(5)])
    before = queue.stats()
    queue.close()
    queue = make_queue()
    assert queue.stats() == before
    assert queue.outstanding()[0].id == robots.id
    queue.add_robots("http://b.com", "", 200)
    assert queue.acknowledge(robots.id)
    urls = drain(queue)
    assert sorted(urls) == sorted(["http://a.com/", "http://b.com/"]
                                  + [f"http://a.com/{i}" for i in range(5)])


def test_recovery_from_journal_reproduces_the_same_schedules(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    settings = {"schedule_size": 50, "url_buffer": 7, "max_file_bytes": 2048}
    queue = make_queue(**settings)
    queue.add_seeds([f"http://h{i}.com/" for i in range(20)])
    robots = queue.next_schedule()
    for i in range(0, 20, 2):
        queue.add_robots(f"http://h{i}.com", "User-agent: *\nDisallow: /no\nCrawl-delay: 1\n"
                         if i % 4 else "", 200)
    queue.add_discovered([DiscoveredUrl(f"http://h{i % 20}.com/{p}/{i}", 1, i % 50,
                                        source_url="http://h3.com/")
                          for i in range(400) for p in ("yes", "no")[: 1 + i % 2]])
    first = queue.next_schedule()
    # a copy taken without closing is a crashed queue: it must recover to the same state
    crashed = tmp_path / "crashed"
    shutil.copytree(tmp_path / "q", crashed)
    (crashed / "LOCK").unlink()
    copy = make_queue(crashed, **settings)
    assert copy.stats() == queue.stats()
    assert [s.id for s in copy.outstanding()] == [robots.id, first.id]
    for q in (queue, copy):
        q.acknowledge(first.id)
    while True:
        a, b = queue.next_schedule(), copy.next_schedule()
        assert a == b
        if a is None:
            break
        queue.acknowledge(a.id)
        copy.acknowledge(b.id)


def test_lock_order_change_and_corruption(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue()
    with pytest.raises(QueueLockedError):
        make_queue()
    queue.close()
    with pytest.raises(SchedulerConfigError):
        make_queue(order=CrawlOrder.BREADTH_FIRST)
    gen = (tmp_path / "q" / "CURRENT").read_text().strip()
    state = tmp_path / "q" / "QueueState" / f"state.{gen}.bin"
    data = bytearray(state.read_bytes())
    data[40] ^= 0x55
    state.write_bytes(bytes(data))
    with pytest.raises(CorruptQueueError):
        make_queue()


def test_invalid_urls_are_dropped_not_fatal(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    accepted = queue.add_discovered([DiscoveredUrl("ftp://a.com/x"), DiscoveredUrl("http://a.com/\tx"),
                                     DiscoveredUrl("http:///nohost"), DiscoveredUrl("http://a.com/ok")])
    assert accepted == 1
    assert dict(queue.stats().dropped)["invalid"] == 3
    assert queue.add_seeds(["http://a.com/ok", "http://a.com/ok"]) == 0


def test_opic_state_and_parked_urls_survive_a_crash(make_queue, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a 3 s delay and 9 s of schedule: three urls of slow.com per schedule (was: one a round)
    settings = {"order": CrawlOrder.OPIC, "schedule_size": 250, "round_size": 100,
                "delayed_schedule_seconds": 9.0}
    queue = make_queue(**settings)
    queue.add_seeds(["http://slow.com/", "http://fast.com/"])
    robots = queue.next_schedule()
    queue.add_robots("http://slow.com", "User-agent: *\nCrawl-delay: 3\n", 200)
    queue.add_robots("http://fast.com", "", 200)
    queue.acknowledge(robots.id)
    queue.add_discovered([DiscoveredUrl(f"http://slow.com/{i}", 1, i, opic_cash=1.0 / (i + 1))
                          for i in range(10)]
                         + [DiscoveredUrl(f"http://fast.com/{i}", 1, i, opic_cash=0.001)
                            for i in range(400)])
    first = queue.next_schedule()
    slow = [e for e in first.entries if e.url.startswith("http://slow.com")]
    # cash 1.0, then 0.5 and 0.5 (ties in arrival order)
    assert [e.url for e in slow] == ["http://slow.com/0", "http://slow.com/", "http://slow.com/1"]
    assert [e.slot for e in slow] == [0, 1, 3]   # fast.com/ (cash 0.5) took slot 2
    assert queue.stats().crawl_delayed == 8
    crashed = tmp_path / "crashed"
    shutil.copytree(tmp_path / "q", crashed)
    (crashed / "LOCK").unlink()
    copy = make_queue(crashed, **settings)
    assert copy.stats() == queue.stats()
    assert copy.opic_scores("http://slow.com/5") == queue.opic_scores("http://slow.com/5")
    for q in (queue, copy):
        assert q.acknowledge(first.id)
    assert drain(queue) == drain(copy)
