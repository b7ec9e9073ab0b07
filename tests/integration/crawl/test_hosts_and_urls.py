"""The admin's url and host pages with the real processes (issue 19, item 3): a queue server,
its inbox worker and a Celery fetcher on a real Redis crawl two loopback sites. The refused
urls page lists the robots.txt-disallowed /private/ urls with the robots reason, the fetched
urls page the pages fetched; and excluding the crawl-delayed site's host in the middle of the
crawl (written to the database as the admin's host page writes it) stops the requests to it,
by the fixture server's own log, and the crawl then ends. /metrics counts the pages fetched as
the crawl goes on."""

from __future__ import annotations

import json
import time

import pytest

from tests.fixtures.sites import FixtureServer, normal_site
from tests.integration.crawl.test_processes import Engine, start_crawl
from tests.polling import page_requests, wait_until

pytestmark = [pytest.mark.redis, pytest.mark.slow]

# after the exclusion is applied, the schedule holding the host may still be fetched: a
# handful of urls (each page of the site links to two new ones)
IN_FLIGHT = 12

PAGES = """
import html, json, re
from django.test import Client
from django.test.utils import setup_test_environment
from django.urls import reverse
from django.contrib.auth.models import User
from crawler.models import Crawl
setup_test_environment()
crawl = Crawl.objects.get()
client = Client()
client.force_login(User.objects.create_superuser("op", "op@example.com", "pw-op-1234"))
refused = reverse("admin:crawler_crawl_refused", args=[crawl.pk])
pages = {"refused": client.get(refused + "?reason=robots"), "summary": client.get(refused)}
answers = {k: [r.status_code, r.content.decode()] for k, r in pages.items()}
# the fetched urls, newest first 50 to a page: every page, following the Older links
link, statuses, listing = reverse("admin:crawler_crawl_fetched", args=[crawl.pk]), set(), ""
while link:
    response = client.get(link)
    statuses.add(response.status_code)
    listing += response.content.decode()
    older = re.search(r'<a href="([^"]+)" rel="next" id="page-older">', response.content.decode())
    link = older and html.unescape(older.group(1))
answers["fetched"] = [max(statuses), listing]
print(json.dumps(answers))
"""


METRICS = """
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families
text = Client(HTTP_HOST="127.0.0.1").get("/metrics").content.decode()
print(sum(s.value for f in text_string_to_metric_families(text) for s in f.samples
          if s.name == "yioopy_crawl_pages_fetched_total"))
"""


def pages_fetched_metric(engine) -> float:
    """The crawl's pages fetched as /metrics tells Prometheus (issue 19, item 8)."""
    return float(engine.django(METRICS).strip().splitlines()[-1])




def exclude(engine, origin):
    engine.django(f"""
        from crawler.hosts.services import host_override_set
        from crawler.models import Crawl
        host_override_set(Crawl.objects.get().pk, "{origin}", excluded=True)
    """)


def applied(engine):
    return engine.django("from crawler.models import HostOverride; "
                         "print(HostOverride.objects.get().applied_at is not None)"
                         ).strip() == "True"


@pytest.mark.long
def test_refused_urls_and_excluding_a_host_during_a_crawl(tmp_path, redis_url):
    quick = normal_site("refusedquick", pages=5, crawl_delay=0.0)
    # big enough that the exclusion comes far from its end however slow the machine is (a
    # delayed host is freed as soon as its lane is done: 0.4 s a page from the start)
    slow = normal_site("excludedslow", pages=240, crawl_delay=0.4)
    engine = Engine(tmp_path, redis_url)
    engine.env.update({"HOST_OVERRIDE_SECONDS": "0.3"})
    try:
        with FixtureServer(quick.route) as q, FixtureServer(slow.route, host="127.0.0.2") as s:
            engine.celery("inbox", "qs.0")
            engine.celery("fetch-a", "fetch")
            engine.queue_server()
            start_crawl(engine, [q.url("/"), s.url("/")])
            wait_until(lambda: len(page_requests(s)) >= 3, 60, "the slow site was not crawled")
            wait_until(lambda: pages_fetched_metric(engine) > 0, 30,
                     "/metrics did not count the pages fetched")
            during = pages_fetched_metric(engine)
            origin = s.url("/").rstrip("/")
            exclude(engine, origin)
            wait_until(lambda: applied(engine), 30, "the exclusion was not applied")
            at_exclusion = len(page_requests(s))
            engine.wait_status("stopped", timeout=90)
            fetched = len(page_requests(s))
            time.sleep(1.0)
            assert len(page_requests(s)) == fetched  # nothing after the crawl ended
            answers = json.loads(engine.django(PAGES).strip().splitlines()[-1])
            after = pages_fetched_metric(engine)
    finally:
        engine.stop_all()
    assert 0 < during < after  # /metrics moved with the crawl
    # the excluded host: requests stopped (the schedule holding it at most), far from all
    assert fetched <= at_exclusion + IN_FLIGHT, (at_exclusion, fetched)
    assert fetched < len(slow.allowed_paths) // 2
    # the quick site was crawled whole, its /private/ urls refused by robots.txt
    assert q.requests_for("/private/") == []
    status, refused = answers["refused"]
    assert status == 200 and "robots.txt disallows it" in refused
    for path in quick.disallowed_paths:
        assert q.url(path) in refused, path
    status, summary = answers["summary"]
    assert status == 200 and 'data-reason="excluded"' in summary
    assert "host excluded by the operator" in summary
    status, listing = answers["fetched"]
    assert status == 200 and q.url("/page/1.html") in listing
