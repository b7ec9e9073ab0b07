"""The defaults, end to end (issue 16): a crawl of a fixture site through real processes with
the default Page Options, link analysis run by the engine itself, the index then re-ordered by
importance by the queue server, and search with the default options finds the answer only a
late-crawled, well-linked page gives.

The site: a home page linking to 600 leaf pages, each of which links to one guide page (and
nothing else). The
guide is discovered after every leaf is queued, so it is crawled last; every page holds the
site's name. A query for the name matches 602 pages, more than "minimum results to group"
(500), and partitions are small, so the leaves fill the first ones and the guide is in the
last: in crawl order it is not even a candidate; in importance order (600 inlinks) it is.
"""

from __future__ import annotations

import threading
import time

import pytest

from crawler.core.queue_server.index_order import scores_tag
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.reorder import partitions_to_reorder
from indexer.core.runtime.workdir import crawl_paths, phrases_path, scores_path
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from tests.fixtures.sites import FixtureServer
from tests.fixtures.sites.sites import NormalSite, SitePage, not_found, unique_word
from tests.integration.crawl.test_processes import Engine, start_crawl

pytestmark = [pytest.mark.redis, pytest.mark.slow]

NAME = "omicron"
LEAVES = 600


def guide_site() -> NormalSite:
    site = NormalSite(name=NAME, crawl_delay=0.0, disallow="/private/")
    leaves = [f"/leaf/{i}.html" for i in range(LEAVES)]

    def add(path: str, title: str, links: list[str]) -> None:
        site.pages[path] = SitePage(path, title, unique_word(NAME, path), tuple(links), True)

    add("/", f"{NAME} home", leaves)
    for i, path in enumerate(leaves):
        add(path, f"{NAME} leaf {i}", ["/guide.html"])
    add("/guide.html", f"{NAME} guide", ["/"])
    return site


class Recorder:
    """The site's route, recording the order pages are requested in (no sitemaps: the guide
    must be found by links alone)."""

    def __init__(self, site: NormalSite) -> None:
        self.site = site
        self.paths: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, request):
        if request.path.startswith("/sitemap"):
            return not_found(request)
        with self._lock:
            self.paths.append(request.path)
        return self.site.route(request)


def _ordered(bundle, scores) -> bool:
    tag = scores_tag(scores)
    return tag is not None and not partitions_to_reorder(bundle, tag) and \
        phrases_path(bundle).exists()


def test_a_late_well_linked_page_answers_with_the_defaults(tmp_path, redis_url):
    recorder = Recorder(guide_site())
    engine = Engine(tmp_path, redis_url)
    engine.env["DOWNLOAD_SIZE_INTERVAL"] = "100"
    # small partitions: the leaves fill the first ones, the guide lands in the last; within a
    # partition, grouping alone (a page's score adds its link documents') would lift it
    engine.env["INDEX_PARTITION_DOCUMENTS"] = "300"
    work = tmp_path / "var" / "work"
    try:
        with FixtureServer(recorder) as server:
            engine.celery("inbox", "qs.0")
            engine.celery("fetch-a", "fetch")
            engine.analysis_worker()
            engine.queue_server()
            timestamp = start_crawl(engine, [server.url("/")])
            engine.wait_status("stopped", timeout=400)
            bundle = crawl_paths(work / "qs0", timestamp)["index"]
            scores = scores_path(work, timestamp)
            deadline = time.monotonic() + 180
            while not _ordered(bundle, scores):  # nobody types a command: the engine does it
                assert time.monotonic() < deadline, (tmp_path / "qs.log").read_text()[-3000:]
                time.sleep(1)
    finally:
        engine.stop_all()
    pages = [p for p in recorder.paths if p.endswith(".html") or p == "/"]
    assert pages.index("/guide.html") >= LEAVES  # crawled after every leaf
    reader = IndexBundleReader(bundle)
    options = SearchOptions()
    assert options.min_results_to_group < LEAVES  # more matches than candidates
    urls = [r.url for r in Searcher([LocalShard(reader)], options).search(NAME, num=10).results]
    # the guide outranks every leaf (only the host's home page, with its url bonuses, may come
    # before it); in crawl order it would not be a candidate at all
    assert server.url("/guide.html") in urls[:2], urls
    assert not any("/leaf/" in url for url in urls[:urls.index(server.url("/guide.html"))])
