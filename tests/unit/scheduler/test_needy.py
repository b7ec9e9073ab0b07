"""Needy queries (seed 001): url/anchor descriptions, w-shingle matching, P(p) = sum f(q) I(p,q),
and the crawl queue's needy lane."""

import numpy as np
import pytest

from crawler.core.definition.crawl import CrawlConfig, CrawlOrder, CrawlTimeOptions, RobotsBehaviour
from crawler.core.definition.needy import NeedyIndex, NeedyQuery, NeedyQueryError, describe, tokens
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, SchedulerConfig


def test_tokens_follow_the_seed():
    assert tokens("http://thedailyshow.cc.com/news-team/samantha-bee") == [
        "thedailyshow", "cc", "news", "team", "samantha", "bee"]
    assert tokens("fcntl.fcntl") == ["fcntl"]
    assert describe("https://docs.python.org/3/library/threading.html", ["Thread objects"]) == [
        ["docs", "python", "library", "threading"], ["thread", "objects"]]


def test_need_score_sums_frequencies_of_matched_queries():
    index = NeedyIndex([NeedyQuery("samantha bee", 3), NeedyQuery("news team", 2),
                        NeedyQuery("threading", 5), NeedyQuery("gis measure distance", 1)])
    pages = [describe("http://thedailyshow.cc.com/news-team/samantha-bee"),
             describe("https://docs.python.org/3/library/threading.html"),
             describe("https://example.org/other", ["bee keeping"]),
             describe("https://docs.djangoproject.com/en/3.2/ref/contrib/gis/measure.html")]
    # "gis measure distance": shingles (gis measure), (measure distance); 1 of 2 >= rho 0.5
    assert index.scores(pages).tolist() == [5.0, 5.0, 0.0, 1.0]
    assert index.matches(pages[0]) == ["samantha bee", "news team"]
    strict = NeedyIndex(index.queries, rho=1.0)
    assert strict.scores(pages).tolist() == [5.0, 5.0, 0.0, 0.0]


def test_matching_agrees_with_a_plain_loop():
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(12)]
    queries = [NeedyQuery(" ".join(rng.choice(words, rng.integers(1, 4))), float(i + 1))
               for i in range(30)]
    pages = [[list(rng.choice(words, rng.integers(1, 8)))] for _ in range(200)]
    index = NeedyIndex(queries, w=2, rho=0.5)
    from crawler.core.definition.needy import page_shingles, query_shingles
    expected = []
    for page in pages:
        have = page_shingles([tokens(" ".join(page[0]))], 2)
        total = 0.0
        for q in index.queries:
            need = query_shingles(tokens(q.text), 2)
            if len(need & have) >= max(1, -(-len(need) // 2)):
                total += q.frequency
        expected.append(total)
    assert index.scores([[tokens(" ".join(p[0]))] for p in pages]).tolist() == expected


def test_bad_parameters_are_refused():
    with pytest.raises(NeedyQueryError):
        NeedyIndex([NeedyQuery("x", -1)])
    with pytest.raises(NeedyQueryError):
        NeedyIndex([], rho=0)


def queue_config(**kw):
    crawl = CrawlConfig(crawl_id=1, timestamp=1, name="n", order=CrawlOrder.HOST_BUDGETING,
                        page_options=CrawlTimeOptions(robots=RobotsBehaviour.IGNORE))
    return SchedulerConfig.from_crawl(crawl, fsync=False, **kw)


def batch():
    return [DiscoveredUrl(f"https://site{i}.example/page{i}", 1, i, anchor_text="misc")
            for i in range(20)] + [
        DiscoveredUrl("https://docs.example/library/threading.html", 1, 30),
        DiscoveredUrl("https://docs.example/ref/x.html", 1, 31, anchor_text="gis measure"),
    ]


def test_needy_lane_schedules_matching_urls_first_and_reports_them(tmp_path):
    with CrawlQueue.open(tmp_path, queue_config(schedule_size=3)) as queue:
        assert queue.set_needy_queries([NeedyQuery("threading", 1),
                                        NeedyQuery("gis measure", 4)])
        assert not queue.set_needy_queries([NeedyQuery("gis measure", 4),
                                            NeedyQuery("threading", 1)])
        queue.add_discovered(batch())
        stats = queue.stats()
        assert stats.needy_queued == 2 and stats.needy_queries == 2
        assert [row[0] for row in stats.needy_top] == [
            "https://docs.example/ref/x.html", "https://docs.example/library/threading.html"]
        assert stats.needy_top[0][3] == ("gis measure",)
        first = queue.next_schedule()
    assert [e.url for e in first.entries][:2] == [
        "https://docs.example/ref/x.html", "https://docs.example/library/threading.html"]


def test_without_needy_queries_the_order_is_host_budgeting(tmp_path):
    with CrawlQueue.open(tmp_path, queue_config(schedule_size=3)) as queue:
        queue.add_discovered(batch())
        assert queue.stats().needy_queued == 0
        first = queue.next_schedule()
    assert "https://docs.example/ref/x.html" not in first.urls


def test_new_needy_queries_rescore_the_lane_and_survive_restarts(tmp_path):
    queue = CrawlQueue.open(tmp_path, queue_config(schedule_size=100))
    queue.set_needy_queries([NeedyQuery("threading", 1), NeedyQuery("gis measure", 1)])
    queue.add_discovered(batch())
    assert queue.stats().needy_queued == 2
    queue.set_needy_queries([NeedyQuery("gis measure", 1)])  # threading is answered now
    assert queue.stats().needy_queued == 1
    assert [row[0] for row in queue.stats().needy_top] == ["https://docs.example/ref/x.html"]
    queue.close()
    with CrawlQueue.open(tmp_path, queue_config(schedule_size=100)) as queue:
        assert queue.stats().needy_queued == 1
        schedule = queue.next_schedule()
        assert schedule.entries[0].url == "https://docs.example/ref/x.html"
        assert len(schedule.entries) == 22  # nothing lost: the others are in their tiers


def test_urls_queued_before_a_query_was_needy_are_rescored(tmp_path):
    """Issue 35, item 4: a url filed in its tier before any needy query matched it moves to
    the needy lane when a matching query turns needy; the others keep their tier order, and
    the move survives a restart (the journal replays it)."""
    queue = CrawlQueue.open(tmp_path, queue_config(schedule_size=100))
    queue.add_discovered(batch())  # no needy queries yet: everything in its tier
    assert queue.stats().needy_queued == 0
    assert queue.set_needy_queries([NeedyQuery("gis measure", 2)])
    assert queue.stats().needy_queued == 1
    assert [row[0] for row in queue.stats().needy_top] == ["https://docs.example/ref/x.html"]
    # a new frequency of the same query rescores nothing more
    assert queue.set_needy_queries([NeedyQuery("gis measure", 3)])
    assert queue.stats().needy_queued == 1
    queue.close()
    with CrawlQueue.open(tmp_path, queue_config(schedule_size=100)) as queue:
        assert queue.stats().needy_queued == 1
        urls = [e.url for e in queue.next_schedule().entries]
    assert urls[0] == "https://docs.example/ref/x.html"
    assert len(urls) == 22  # nothing lost
    others = [u for u in urls[1:] if u.startswith("https://site")]
    assert others == sorted(others, key=lambda u: int(u.rsplit("page", 1)[1]))
