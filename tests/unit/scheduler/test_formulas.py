"""The seed's host-budgeting formulas, against values computed by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.core.scheduler import DiscoveredUrl, budget_tier, incoming_increment, seen_increment

from .conftest import IGNORE


@pytest.mark.parametrize(("i", "expected"), [(0, 1.0), (4, 2.0), (24, 3.0), (124, 4.0)])
def test_seen_increment_grows_for_less_important_links(i: int, expected: float) -> None:
    # max(1, 1 + log(1 + i, 5)): the i-th link of a page adds more the later it comes
    assert seen_increment(i) == pytest.approx(max(1.0, 1.0 + math.log(1 + i, 5)))
    assert seen_increment(i) == pytest.approx(expected)


@pytest.mark.parametrize(("w", "t", "expected"), [
    (0, 0, 1 / 1.1),              # log5(1) = 0
    (4, 0, 1 / 2.1),              # log5(5) = 1
    (4, 1, 1 / 3.1),
    (24, 2, 1 / 5.1),             # log5(25) = 2
    (124, 3, 1 / 7.1),            # log5(125) = 3
])
def test_incoming_increment(w: float, t: int, expected: float) -> None:
    assert incoming_increment(w, t) == pytest.approx(expected)


@pytest.mark.parametrize(("seen", "incoming", "sitemap", "html", "tier"), [
    (1, 0, False, True, 0),
    (9, 0, False, True, 0),
    (10, 0, False, True, 1),
    (99.5, 0, False, True, 1),
    (100, 0, False, True, 2),
    (1000, 0, False, True, 3),
    (10, 0.5, False, True, 0),     # 9.5 -> 0
    (110, 10, False, True, 2),     # 100 -> 2
    (3, 7, False, True, 0),        # max(1, negative) -> 0
    (1, 0, True, True, 4),         # sitemap penalty
    (10, 0, True, True, 5),
    (1, 0, False, False, 1),       # non-HTML
    (100, 0, True, False, 7),
])
def test_budget_tier(seen: float, incoming: float, sitemap: bool, html: bool,
                     tier: int) -> None:
    assert budget_tier(seen, incoming, is_sitemap=sitemap, is_html=html) == tier


@given(st.floats(0, 1e9), st.floats(0, 1e9))
def test_budget_tier_matches_formula(seen: float, incoming: float) -> None:
    assert budget_tier(seen, incoming) == math.floor(math.log10(max(1, seen - incoming)))


def _tiers(queue, urls):  # type: ignore[no-untyped-def]
    return {entry.url: entry.tier for entry in queue.next_schedule().entries if entry.url in urls}


def test_weighted_seen_pushes_a_cld_into_tier_one(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    urls = [f"http://www.site.co.uk/p{i}" for i in range(12)]
    queue.add_discovered(DiscoveredUrl(url, 1, i, source_url="http://www.site.co.uk/")
                         for i, url in enumerate(urls))
    seen, wseen, incoming = queue.cld_counters("site.co.uk")
    # weighted seen after link i: sum of 1 + log5(1 + j) for j <= i
    # = 1, 2.43, 4.11, 5.97, 7.97, 10.08 ...: the sixth url reaches 10, tier 1
    assert seen == 12 and incoming == 0.0
    assert wseen == pytest.approx(sum(1 + math.log(1 + j, 5) for j in range(12)))
    tiers = {}
    while (schedule := queue.next_schedule()) is not None:
        tiers.update({e.url: e.tier for e in schedule.entries})
        queue.acknowledge(schedule.id)
    assert [tiers[u] for u in urls] == [0] * 5 + [1] * 7


def test_links_from_another_cld_keep_a_domain_in_low_tiers(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    # twelve first links (i = 0) from pages of weight 4 in tier 1 of another CLD: each adds
    # 1 to weighted seen and 1/3.1 to weighted incoming
    queue.add_discovered(DiscoveredUrl(f"http://b.com/p{i}", 2, 0, source_url=f"http://a.org/x{i}",
                                       source_weight=4, source_tier=1) for i in range(12))
    seen, wseen, incoming = queue.cld_counters("www.b.com")
    assert seen == 12 and wseen == 12.0
    assert incoming == pytest.approx(12 / 3.1)
    entries = queue.next_schedule().entries
    # after the 10th: 10 - 10/3.1 = 6.77 -> tier 0; after the 12th: 12 - 3.87 = 8.1 -> tier 0
    assert {e.tier for e in entries} == {0}


def test_same_cld_links_add_no_incoming_weight(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    queue.add_discovered([DiscoveredUrl("http://x.b.com/1", 1, 0, source_url="http://www.b.com/",
                                        source_weight=3, source_tier=2)])
    assert queue.cld_counters("b.com") == (1, 1.0, 0.0)


def test_sitemap_and_non_html_penalties(make_queue) -> None:  # type: ignore[no-untyped-def]
    queue = make_queue(robots=IGNORE)
    queue.add_discovered([
        DiscoveredUrl("http://c.com/page", 1, 0),
        DiscoveredUrl("http://c.com/sitemap.xml", 1, 1, is_sitemap=True, is_html=False),
        DiscoveredUrl("http://c.com/map2.xml", 1, 2, is_sitemap=True),
        DiscoveredUrl("http://c.com/doc.pdf", 1, 3, is_html=False),
    ])
    tiers = {}
    while (schedule := queue.next_schedule()) is not None:
        tiers.update({e.url: e.tier for e in schedule.entries})
        queue.acknowledge(schedule.id)
    assert tiers == {"http://c.com/page": 0, "http://c.com/sitemap.xml": 5,
                     "http://c.com/map2.xml": 4, "http://c.com/doc.pdf": 1}
