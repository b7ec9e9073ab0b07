"""Seed 004's fair share: no company-level domain takes more than its cap of any schedule."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.core.definition.crawl import CrawlConfig, CrawlTimeOptions, RobotsBehaviour, SeedSpec
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, SchedulerConfig
from indexer.core.urls import company_level_domain, host_of


def schedules(tmp_path, share, sizes, schedule_size=40):
    crawl = CrawlConfig(crawl_id=1, timestamp=1, name="f", max_domain_share=share,
                        page_options=CrawlTimeOptions(robots=RobotsBehaviour.IGNORE),
                        seeds=(SeedSpec("https://seed.example/"),))
    config = SchedulerConfig.from_crawl(crawl, schedule_size=schedule_size, fsync=False)
    assert config.max_cld_share == share
    out = []
    with CrawlQueue.open(tmp_path, config) as queue:
        queue.add_discovered(
            DiscoveredUrl(f"https://www{d}.domain{d}.com/page{i}", 1, i)
            for d, count in enumerate(sizes) for i in range(count))
        while (schedule := queue.next_schedule()) is not None:
            out.append([e.url for e in schedule.entries if not e.is_robots])
            queue.acknowledge(schedule.id)
    return out


def test_no_domain_over_its_cap_in_any_schedule(tmp_path):
    result = schedules(tmp_path, 0.25, [200, 30, 30, 30, 30])
    assert sum(map(len, result)) == 320  # every url is scheduled, later if need be
    for urls in result:
        counts = Counter(company_level_domain(host_of(u)) for u in urls)
        assert max(counts.values()) <= max(1, int(0.25 * 40)), counts


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=6),
       st.sampled_from([0.1, 0.3, 0.5, 1.0]))
def test_cap_holds_for_any_mix(tmp_path_factory, sizes, share):
    result = schedules(tmp_path_factory.mktemp("q"), share, sizes, schedule_size=20)
    assert sum(map(len, result)) == sum(sizes)
    cap = max(1, int(share * 20)) if share < 1 else 20
    for urls in result:
        counts = Counter(company_level_domain(host_of(u)) for u in urls)
        assert max(counts.values()) <= cap
