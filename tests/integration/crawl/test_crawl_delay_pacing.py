"""A whole crawl with a crawl-delayed site (issue 5): the site is crawled at about its delay's
pace, with several of its urls per schedule, never two requests closer than the delay (by the
server's own log), and the urls a schedule's lane did not get to come back in a later schedule
and are fetched exactly once."""

from __future__ import annotations

from collections import Counter

from tests.fixtures.sites import FixtureServer, normal_site

from .test_core_crawl import find, run_crawl

SLACK = 0.02   # the server stamps a request when it reads its request line


def test_a_delayed_site_is_crawled_at_its_pace_each_url_once(tmp_path):
    delay = 0.5
    paced = normal_site("pacedsite", pages=20, crawl_delay=delay)
    quick = normal_site("quicksite", pages=10, crawl_delay=0.0)
    with FixtureServer(paced.route) as p, FixtureServer(quick.route, host="127.0.0.2") as q:
        _, stats, readers = run_crawl(tmp_path, [p.url("/"), q.url("/")], 1, timeout=120.0)
        log = [e for e in p.log if e.path != "/robots.txt"]
        quick_log = [e for e in q.log if e.path != "/robots.txt"]
    # every allowed page of both sites indexed, nothing disallowed asked for
    for site in (paced, quick):
        for page in site.pages.values():
            assert find(readers, page.word) == (1 if page.allowed else 0), page.path
    assert not [e for e in log if e.path.startswith("/private/")]
    # each url of the delayed site requested once, although some went back to the queue
    # (a schedule's lane fetches a few of them after the rounds, then hands back the rest)
    counts = Counter(e.path for e in log)
    assert counts and max(counts.values()) == 1, counts.most_common(3)
    assert set(paced.allowed_paths) <= set(counts)
    assert Counter(e.path for e in quick_log).most_common(1)[0][1] == 1
    assert stats[0]["deferred_urls"] > 0
    # politeness, by the server's clock
    starts = sorted(e.start for e in log)
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert min(gaps) >= delay - SLACK, min(gaps)
    # and pace: about one request per delay (generous: schedules come and go between lanes)
    span = starts[-1] - starts[0]
    assert span < 2.5 * delay * len(starts) + 5.0, (span, len(starts))
