"""Near-duplicate clusters end to end (issue 38): a fixture site with near-duplicate pages
crawled for real (LocalCrawl over loopback HTTP), its link analysis (which forms the
clusters), then the search page and its JSON through the Django test client: one result per
cluster with "n similar pages", the page listing them, and the admin's clusters page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from crawler.core.definition.crawl import CrawlConfig, CrawlOrder, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl
from crawler.core.processing.process import PageProcessor
from indexer.core.runtime.workdir import near_duplicates_path
from indexer.core.signals.near_clusters import NearDuplicateClusters
from linkgraph.core.analysis import LocalShardSource, run_link_analysis
from ranking.search_service import search_service
from tests.fixtures.sites import FixtureServer
from tests.web.near_duplicate_site import (
    GUIDE,
    ONLY_FROM_VERSION,
    OTHERS,
    PRINT,
    VERSION,
    WORD,
    near_duplicate_route,
)

ITS = 1_700_000_000


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The crawl's work directory, the site's base url, the crawl's stats and the paths
    requested."""
    work = tmp_path_factory.mktemp("near-duplicates")
    with FixtureServer(near_duplicate_route()) as server:
        crawl = CrawlConfig(crawl_id=1, timestamp=ITS, name="near", order=CrawlOrder.BREADTH_FIRST,
                            seeds=(SeedSpec(server.url("/")),))
        fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0,
                            read_timeout=2.0, page_deadline=3.0)
        runner = LocalCrawl(crawl, work, fetch, PageProcessor(), num_servers=1, fetchers=1,
                            schedule_size=50, refresh_seconds=0.0)
        try:
            result = runner.run(max_seconds=90.0)
        finally:
            runner.close()
        assert result.finished
        requested = {entry.path for entry in server.log}
        base = server.url("")
    (bundle,) = result.index_paths
    run_link_analysis(work, ITS, [LocalShardSource(0, bundle)])
    return work, base.rstrip("/"), result.stats[0], requested


@pytest.fixture
def work(crawled, settings, db):
    settings.WORK_DIRECTORY = crawled[0]
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    yield crawled
    search_service().pool.close()


def test_the_crawl_skips_the_links_of_near_duplicates(crawled):
    _, _, stats, requested = crawled
    assert {GUIDE, VERSION, PRINT, *OTHERS} <= requested
    assert ONLY_FROM_VERSION not in requested  # linked only from a near-duplicate
    assert stats["near_duplicate_pages"] == 2
    assert stats["near_duplicate_links_skipped"] == 1
    assert stats["near_duplicate_fetches_saved"] == 1


def test_the_link_analysis_forms_the_cluster_around_the_most_linked_page(crawled):
    work, base, _, _ = crawled
    clusters = NearDuplicateClusters(near_duplicates_path(work, ITS))
    assert len(clusters) == 1
    assert clusters.members(0) == [base + GUIDE, *sorted([base + PRINT, base + VERSION])]


def test_search_shows_one_result_per_cluster_with_its_similar_pages(client, work):
    _, base, _, _ = work
    data = client.get("/", {"q": WORD, "f": "json"}).json()
    urls = [r["url"] for r in data["results"]]
    assert base + GUIDE in urls
    assert base + VERSION not in urls and base + PRINT not in urls
    assert {base + other for other in OTHERS} <= set(urls)
    (guide,) = [r for r in data["results"] if r["url"] == base + GUIDE]
    assert guide["similar_count"] == 2
    assert all("similar_count" not in r for r in data["results"] if r is not guide)
    # raw:1 shows every page, unfolded
    raw = [r["url"] for r in client.get("/", {"q": f"raw:1 {WORD}", "f": "json"}).json()
           ["results"]]
    assert base + VERSION in raw and base + PRINT in raw


def test_the_similar_pages_link_lists_the_cluster(client, work):
    _, base, _, _ = work
    page = client.get("/", {"q": WORD}).content.decode()
    assert "2 similar pages" in page
    link = reverse("ranking:near-duplicates")
    assert f'href="{link}?url=' in page
    listed = client.get(link, {"url": base + VERSION})
    assert listed.status_code == 200
    body = listed.content.decode()
    body = body[body.index('class="results"'):]
    assert body.index(base + GUIDE) < body.index(base + PRINT) < body.index(base + VERSION)
    answer = client.get(link, {"url": base + PRINT, "f": "json"}).json()
    assert answer["canonical"] == base + GUIDE
    assert answer["pages"] == [base + GUIDE, base + PRINT, base + VERSION]
    assert client.get(link, {"url": base + OTHERS[0]}).status_code == 404
    assert client.get(link).status_code == 400


def test_admin_lists_the_clusters_with_their_canonical(admin_client, make_crawl, work):
    _, base, _, _ = work
    crawl = make_crawl(name="near", seeds=(base + "/",), timestamp=ITS)
    response = admin_client.get(reverse("admin:crawler_crawl_near_duplicates", args=[crawl.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert f'<td class="canonical">{base + GUIDE}</td>' in body
    assert base + VERSION in body and base + PRINT in body
    status = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    assert 'id="crawl-near-duplicates"' in status.content.decode()
