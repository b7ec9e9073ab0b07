"""Changing a running crawl (issue 37, item 8) in the crawl queue: site rules edited while it
runs are in force from then on and survive a restart (the queue checkpoints them, so the
journal replays under the rules it was written with), and Yioop's per-site quotas
(``site#N`` in the disallowed sites) schedule at most N urls of the site per hour, the rest
kept for a later hour, across a kill -9."""

from __future__ import annotations

import dataclasses

import pytest

from crawler.core.definition.crawl import CrawlOrder
from crawler.core.definition.siterules import SiteRules, parse_quotas, parse_site_rules
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, SchedulerConfig
from crawler.core.scheduler.errors import SchedulerConfigError

from .conftest import IGNORE, T0, drain


def rules(disallowed: str = "", allowed: str = "", restrict: bool = False) -> SiteRules:
    return SiteRules(parse_site_rules(allowed), parse_site_rules(disallowed, quotas=True),
                     restrict, frozenset(), parse_quotas(disallowed))


def urls(host: str, count: int, start: int = 0) -> list[DiscoveredUrl]:
    return [DiscoveredUrl(f"http://{host}/{i}", 1, 0) for i in range(start, start + count)]


def test_rules_edited_while_running_refuse_new_urls_and_outlive_a_restart(
        make_queue, tmp_path) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    queue.add_discovered(urls("a.com", 2))
    edited = dataclasses.replace(queue.config, site_rules=rules("domain:a.com"))
    assert queue.reconfigure(edited)
    assert not queue.reconfigure(edited)  # in force already: nothing written
    queue.add_discovered(urls("a.com", 2, start=2) + urls("b.com", 1))
    assert sorted(queue.take_refused()) == [("site_rules", "http://a.com/2"),
                                            ("site_rules", "http://a.com/3")]
    queue.abandon()  # a kill -9: the checkpoint holds the edited rules
    again = CrawlQueue.open(tmp_path / "q", SchedulerConfig(
        robots=IGNORE, bloom_expected_urls=100_000, fsync=False,
        site_rules=rules("domain:a.com")))
    try:
        again.add_discovered(urls("a.com", 1, start=9))
        assert again.take_refused() == [("site_rules", "http://a.com/9")]
        # the urls queued before the edit are still queued: the fetchers leave them out
        assert sorted(drain(again)) == ["http://a.com/0", "http://a.com/1", "http://b.com/0"]
    finally:
        again.close()


def test_the_order_of_a_running_crawl_cannot_change(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    with pytest.raises(SchedulerConfigError, match="order cannot change"):
        queue.reconfigure(dataclasses.replace(queue.config, order=CrawlOrder.BREADTH_FIRST))


@pytest.mark.parametrize("order", list(CrawlOrder))
def test_a_quota_schedules_at_most_n_urls_of_the_site_an_hour(make_queue, clock, order) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE, schedule_size=50, order=order,
                       site_rules=rules("domain:a.com#3\nc.com"))
    queue.add_discovered(urls("a.com", 7) + urls("b.com", 4) + urls("c.com", 1))
    assert queue.take_refused() == [("site_rules", "http://c.com/0")]  # a ban stays a ban
    first = drain(queue)
    assert sum(u.startswith("http://a.com/") for u in first) == 3
    assert sum(u.startswith("http://b.com/") for u in first) == 4  # no quota: all of them
    assert drain(queue) == []  # the rest of a.com waits for the next hour, still queued
    assert sum(count for _, count in queue.stats().tiers) == 4
    clock.now = T0 + 3600.0
    second = drain(queue)
    assert len(second) == 3 and all(u.startswith("http://a.com/") for u in second)
    clock.now = T0 + 7200.0
    (last,) = drain(queue)
    assert sorted([*first, *second, last]) == sorted(
        [f"http://a.com/{i}" for i in range(7)] + [f"http://b.com/{i}" for i in range(4)])


def test_quota_use_survives_a_kill(make_queue, tmp_path, clock) -> None:  # type: ignore[no-untyped-def]
    config = {"robots": IGNORE, "schedule_size": 2, "site_rules": rules("a.com#3")}
    queue = make_queue(**config)
    queue.add_discovered(urls("a.com", 6))
    assert len(drain(queue)) == 3  # two schedules: 2 + 1
    queue.checkpoint()
    queue.add_discovered(urls("a.com", 1, start=6))
    queue.abandon()  # a kill -9 after the checkpoint: the journal replays the rest
    again = CrawlQueue.open(tmp_path / "q", SchedulerConfig(
        bloom_expected_urls=100_000, fsync=False, **config), clock=clock)
    try:
        assert drain(again) == []  # this hour's quota is still used up
        clock.now = T0 + 3600.0
        assert len(drain(again)) == 3
    finally:
        again.close()
