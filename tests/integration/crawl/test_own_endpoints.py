"""The crawler refuses the engine's own services (issue 34, item 6): with loopback allowed
(``CRAWLER_ALLOWED_NETWORKS=127.0.0.0/8``, the tests' setting), a crawl of a local web fetched
and indexed the engine's own ``/metrics``. Here the engine's web server is a live server on
loopback (``WEB_BIND`` names it) and a fixture site on another loopback port is crawled beside
it: the site's pages are indexed, the engine is never asked for anything."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from crawler.models import Crawl
from tests.fixtures.sites import FixtureServer, normal_site

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_crawl_with_loopback_allowed_does_not_fetch_the_engines_own_metrics(
        live_server, tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    settings.METRICS_TOKEN = ""  # /metrics answers loopback clients: the crawler is one
    host, port = live_server.thread.host, live_server.thread.port
    settings.WEB_BIND = f"{host}:{port}"
    engine_metrics = f"http://{host}:{port}/metrics"
    site = normal_site("local", pages=2, crawl_delay=0.0)
    with FixtureServer(site.route) as local:
        call_command("crawl", local.url("/"), engine_metrics, "--max-seconds", "60",
                     "--no-link-analysis")
        fetched_from_site = [e.path for e in local.log]
    crawl = Crawl.objects.get()
    assert "/robots.txt" in fetched_from_site and "/" in fetched_from_site
    assert crawl.documents_indexed >= 2  # the local site's pages, loopback being allowed
    failures = crawl.robots_failures["kinds"]
    assert any(row["url"].startswith(f"http://{host}:{port}/") for row in failures.values()), \
        failures  # its robots.txt was refused before any connection, like every url of it
    assert "engine's own services" in str(failures)
