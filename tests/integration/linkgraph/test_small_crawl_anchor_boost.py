"""A crawl smaller than LINK_ANALYSIS_EVERY_PAGES gets the anchor boost (issue 35, item 3).

Its only link analysis is the one at its end, after every document was indexed: the boost
comes from the partition builds that follow it (the re-order of the finished partitions).
The site: a home page every page links to, forty section pages of fifty pages each, and two
pages with the same words but one, each linked once with the same anchor, one from the home
page (a high LinkRank), one from the last deep page (a low one)."""

from __future__ import annotations

from html import escape

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from crawler.models import Crawl
from indexer.core.bundle.reader import IndexBundleReader
from linkgraph.models import LinkAnalysis
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.local import LocalShard
from tests.fixtures.sites import FixtureServer
from tests.fixtures.sites.server import Request, Response

SECTIONS, PER_SECTION = 40, 50
ANCHOR = "striped equine"
TARGET_TEXT = "Notes about a zebra and {} stripes."  # as many words, not duplicates


def _page(title: str, text: str, links: list[tuple[str, str]]) -> Response:
    anchors = "".join(f'<li><a href="{escape(href)}">{escape(label)}</a></li>'
                      for href, label in links)
    body = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title></head><body><h1>{escape(title)}</h1>"
            f"<p>{escape(text)}</p><ul>{anchors}</ul></body></html>")
    return Response(200, body.encode(), {"Content-Type": "text/html; charset=utf-8"})


def _route(request: Request) -> Response:
    path = request.path
    home = ("/", "Home")
    if path == "/":
        return _page("Home", "The home page of the zoo.",
                     [(f"/s/{k}", f"Section {k}") for k in range(SECTIONS)]
                     + [("/t/hub", ANCHOR)])
    parts = path.strip("/").split("/")
    if parts[0] == "s" and len(parts) == 2 and parts[1].isdigit():
        k = int(parts[1])
        return _page(f"Section {k}", f"Section number {k}.",
                     [(f"/p/{k}/{j}", f"Page {j}") for j in range(PER_SECTION)] + [home])
    if parts[0] == "p" and len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        k, j = int(parts[1]), int(parts[2])
        links = [home, (f"/s/{k}", f"Section {k}")]
        if (k, j) == (SECTIONS - 1, PER_SECTION - 1):
            links.append(("/t/lonely", ANCHOR))
        return _page(f"Page {k} {j}", f"Animal notes {k} {j}.", links)
    if path in ("/t/hub", "/t/lonely"):
        return _page("Zebra", TARGET_TEXT.format("its" if path == "/t/hub" else "her"),
                     [home])
    return Response(404, b"not found", {"Content-Type": "text/plain"})


class _NoScores:
    def get(self):
        return None  # the relevance alone: the query-time link score is not what is tested


@pytest.mark.django_db
def test_a_crawl_under_the_analysis_interval_gets_the_anchor_boost(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    settings.INDEX_REFRESH_SECONDS = 0.0
    with FixtureServer(_route) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "600", "--fetchers", "4")
        hub, lonely = server.url("/t/hub"), server.url("/t/lonely")
    crawl = Crawl.objects.get()
    pages = SECTIONS * PER_SECTION + SECTIONS + 3
    assert pages <= crawl.pages_fetched < django_settings.LINK_ANALYSIS_EVERY_PAGES
    row = LinkAnalysis.objects.get(crawl=crawl)
    assert (row.last_outcome, row.runs) == ("ok", 1)  # only the end's analysis ran
    reader = IndexBundleReader(tmp_path / "qs0" / f"IndexData{crawl.timestamp}")
    results = Searcher([LocalShard(reader)], link_scores=_NoScores()).search(ANCHOR).results
    relevance = {r.url: r.explanation["relevance"]["value"] for r in results}
    # same text, one anchor each with the same words: only the anchor's source differs
    assert relevance[hub] > relevance[lonely] + 0.5
