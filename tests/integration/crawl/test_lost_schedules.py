"""Schedules that no fetcher holds come back at once, not after SCHEDULE_TIMEOUT (issue 18),
with the real processes of ``test_processes`` (a queue server, its inbox worker, Celery
fetchers on a real Redis) and SCHEDULE_TIMEOUT far beyond each test's patience:

* a crawl of a crawl-delayed site, stopped in the middle of a schedule and resumed: the
  stopped schedule (which held its host) was given back by its fetcher, so the resumed crawl
  fetches again at once (it stalled for SCHEDULE_TIMEOUT, at 0 pages/s with one schedule out);
* a schedule message dropped from the broker before any fetcher took it: handed out again
  once it has gone SCHEDULE_UNCLAIMED_TIMEOUT unclaimed, and the crawl finishes.
"""

from __future__ import annotations

import pytest
import redis

from tests.fixtures.sites import FixtureServer, normal_site
from tests.integration.crawl.test_processes import Engine, start_crawl
from tests.polling import page_requests, wait_until

pytestmark = [pytest.mark.redis, pytest.mark.slow]

# far longer than any wait below: only a schedule handed out again early lets a crawl go on
LONG = "600"




def kill_all(engine):
    """kill -9 every process of the engine: what they leave behind is not looked at again."""
    for name in list(engine.procs):
        engine.kill(name)


def crawl_service(engine, name):
    engine.django(f"from crawler import services; from crawler.models import Crawl; "
                  f"services.{name}(Crawl.objects.get().pk)")


@pytest.mark.long
def test_resumed_crawl_of_a_crawl_delayed_site_goes_on_at_once(tmp_path, redis_url):
    delay = 0.5
    # 40 pages at one per delay: the crawl is still going when the stop arrives (a Django
    # process of its own, seconds to start on a loaded machine); with 12 it could end first
    site = normal_site("resumedelay", pages=40, crawl_delay=delay)
    engine = Engine(tmp_path, redis_url)
    # an unclaimed schedule would wait as long as a timed-out one: only the fetcher giving
    # back the schedule it stopped lets the resumed crawl go on
    engine.env.update({"SCHEDULE_TIMEOUT": LONG, "SCHEDULE_UNCLAIMED_TIMEOUT": LONG,
                       "SCHEDULE_CLAIM_SECONDS": "2"})
    try:
        with FixtureServer(site.route) as server:
            engine.celery("inbox", "qs.0")
            engine.celery("fetch-a", "fetch")
            engine.queue_server()
            start_crawl(engine, [server.url("/")])
            # robots.txt, then "/" and the sitemaps, then a schedule of six pages, one per delay
            wait_until(lambda: len(page_requests(server)) >= 4, 60, "the crawl did not start")
            crawl_service(engine, "crawl_stop")
            engine.wait_status("resumable", timeout=60)
            stopped = len(page_requests(server))
            crawl_service(engine, "crawl_resume")
            wait_until(lambda: len(page_requests(server)) >= stopped + 2, 20,
                     "the resumed crawl fetched nothing")
    finally:
        kill_all(engine)
    # the crawl-delay still holds across the stop, by the server's clock
    starts = [e.start for e in page_requests(server)]
    assert min(b - a for a, b in zip(starts, starts[1:], strict=False)) >= delay - 0.02


@pytest.mark.long
def test_a_schedule_the_broker_lost_is_handed_out_again(tmp_path, redis_url):
    site = normal_site("lostmessage", pages=4, crawl_delay=0.0)
    engine = Engine(tmp_path, redis_url)
    engine.env.update({"SCHEDULE_TIMEOUT": LONG, "SCHEDULE_UNCLAIMED_TIMEOUT": "2",
                       "SCHEDULE_CLAIM_SECONDS": "2"})
    broker = redis.Redis.from_url(redis_url)
    try:
        with FixtureServer(site.route) as server:
            engine.celery("inbox", "qs.0")
            engine.queue_server()
            start_crawl(engine, [server.url("/")])
            # no fetcher yet: the first schedule (robots.txt) waits in the broker's queue...
            wait_until(lambda: broker.llen("fetch") >= 1, 60, "no schedule was sent")
            assert broker.delete("fetch") == 1   # ...and is lost there
            engine.celery("fetch-a", "fetch")
            wanted = {"/", "/page/1.html", "/page/4.html"}
            wait_until(lambda: {e.path for e in page_requests(server)} >= wanted, 45,
                     "the crawl did not go on")
            assert len(server.requests_for("/robots.txt")) == 1
    finally:
        kill_all(engine)
