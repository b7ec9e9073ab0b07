"""Seed policies in the crawl queue (crawler.core.definition.policy): favor sooner, distrust later
and dropped past its depth, the rule for a url reached under several policies, and the policy
carried into schedule entries (so the fetcher can pass it on)."""

import pytest

from crawler.core.definition.crawl import (
    CrawlConfig,
    CrawlOrder,
    CrawlTimeOptions,
    RobotsBehaviour,
    SeedSpec,
)
from crawler.core.definition.policy import child_policy, more_trusting, page_switch
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, InvalidUrlError, SchedulerConfig
from indexer.core.policies import CrawlPolicy


def config(**kw):
    crawl = CrawlConfig(
        crawl_id=1, timestamp=1, name="p", order=kw.pop("order", CrawlOrder.BREADTH_FIRST),
        page_options=CrawlTimeOptions(robots=RobotsBehaviour.IGNORE),
        seeds=(SeedSpec("https://good.example/", CrawlPolicy.FAVOR),
               SeedSpec("https://spam.example/", CrawlPolicy.DISTRUST),
               SeedSpec("https://plain.example/")),
        distrust_max_depth=kw.pop("distrust_max_depth", 1))
    return SchedulerConfig.from_crawl(crawl, fsync=False, **kw)


def drain(queue):
    out = []
    while (schedule := queue.next_schedule()) is not None:
        out.extend(e for e in schedule.entries if not e.is_robots)
        queue.acknowledge(schedule.id)
    return out


def test_seed_policies_come_from_the_crawl(tmp_path):
    with CrawlQueue.open(tmp_path, config()) as queue:
        queue.add_seeds(["https://plain.example/", "https://spam.example/",
                         "https://good.example/"])
        entries = drain(queue)
    assert {e.url: e.policy for e in entries} == {
        "https://good.example/": "favor", "https://spam.example/": "distrust",
        "https://plain.example/": "default"}


def test_favor_goes_first_and_distrust_last_in_breadth_first(tmp_path):
    with CrawlQueue.open(tmp_path, config(schedule_size=100)) as queue:
        queue.add_discovered([
            DiscoveredUrl("https://spam.example/a", 2, 0, policy="distrust", policy_depth=1),
            DiscoveredUrl("https://plain.example/a", 2, 0, policy="default", policy_depth=2),
            DiscoveredUrl("https://good.example/a", 2, 0, policy="favor", policy_depth=2),
        ])
        entries = drain(queue)
    assert [e.url for e in entries] == ["https://good.example/a", "https://plain.example/a",
                                        "https://spam.example/a"]
    assert [e.tier for e in entries] == [1, 2, 4]
    assert [(e.policy, e.policy_depth) for e in entries] == [
        ("favor", 2), ("default", 2), ("distrust", 1)]


def test_distrust_is_dropped_past_its_depth_but_a_trusted_link_still_queues_it(tmp_path):
    with CrawlQueue.open(tmp_path, config()) as queue:
        assert queue.add_discovered([
            DiscoveredUrl("https://spam.example/deep", 3, 0, policy="distrust",
                          policy_depth=2)]) == 0
        assert dict(queue.stats().dropped)["distrust"] == 1
        # rule 2: the drop did not mark the url seen
        assert queue.add_discovered([
            DiscoveredUrl("https://spam.example/deep", 1, 0, policy="favor",
                          policy_depth=1)]) == 1
        # rule 3: once queued, another link does not re-file it
        assert queue.add_discovered([
            DiscoveredUrl("https://spam.example/deep", 1, 0, policy="distrust",
                          policy_depth=1)]) == 0
        entries = drain(queue)
    assert [(e.url, e.policy) for e in entries] == [("https://spam.example/deep", "favor")]


def test_links_arriving_together_take_the_most_trusting_policy(tmp_path):
    with CrawlQueue.open(tmp_path, config()) as queue:
        queue.add_discovered([
            DiscoveredUrl("https://x.example/p", 1, 0, policy="distrust", policy_depth=1),
            DiscoveredUrl("https://x.example/p", 1, 0, policy="default", policy_depth=4),
            DiscoveredUrl("https://x.example/p", 1, 0, policy="default", policy_depth=2),
        ])
        entries = drain(queue)
    assert [(e.policy, e.policy_depth) for e in entries] == [("default", 2)]


def test_policy_survives_a_restart(tmp_path):
    queue = CrawlQueue.open(tmp_path, config())
    queue.add_discovered([DiscoveredUrl("https://good.example/x", 1, 0, policy="favor",
                                        policy_depth=1)])
    queue.close()
    with CrawlQueue.open(tmp_path, config()) as queue:
        assert [(e.url, e.policy) for e in drain(queue)] == [("https://good.example/x", "favor")]


def test_unknown_policy_is_refused(tmp_path):
    with CrawlQueue.open(tmp_path, config()) as queue, pytest.raises(InvalidUrlError,
                                                                   match="unknown crawl policy"):
        queue.add_discovered([DiscoveredUrl("https://x.example/", 1, 0, policy="trusty")])


def test_switching_and_inheritance():
    assert page_switch({}, safe=True) is None
    assert page_switch({}, safe=False) is CrawlPolicy.DISTRUST
    assert page_switch({"crawl_policy": "favor"}, safe=False) is CrawlPolicy.FAVOR
    assert page_switch({"crawl_policy": "nonsense"}) is None
    assert child_policy("favor", 2, None) == (CrawlPolicy.FAVOR, 3)
    assert child_policy("favor", 2, CrawlPolicy.DISTRUST) == (CrawlPolicy.DISTRUST, 1)
    assert child_policy("distrust", 2, CrawlPolicy.DISTRUST) == (CrawlPolicy.DISTRUST, 3)
    assert more_trusting((CrawlPolicy.DISTRUST, 1), (CrawlPolicy.DEFAULT, 5)) == (
        CrawlPolicy.DEFAULT, 5)
