"""Page recrawl and freshness (issue 21, item 3), end to end: a crawl of a loopback site with
page recrawl on (Page Options ``page_recrawl_days`` 1), then the site changes and the crawl
goes on two days later. The crawl's queue server and fetchers run in this process
(``LocalCrawl``, the same parts the engine's processes run) on a clock that starts three days
ago; the search and the crawl's status page are the Django views, reading what the crawl wrote.

Between the two visits one page changes (its ETag and Last-Modified with it), one answers 304
to the conditional request, one has no validators and comes back with the same text, one is
gone (404) and one now says noindex. The site's own request log shows the conditional requests
and the 304; the search shows the new text once per url and never the old, and nothing of the
removed pages; the status page shows the copies' ages and what the visits found."""

from __future__ import annotations

import time
from html import escape

import pytest
from django.urls import reverse

from crawler import services
from crawler.core.local_crawl import LocalCrawl
from crawler.core.queue_server.freshness import merge_reports
from crawler.machines.fetching import fetch_config_for, processor_for
from crawler.models import Crawl, PageOptions, SeedSite
from crawler.selectors import crawl_config_get
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DOC_TYPE, DocType, hash8
from ranking.search_service import search_service
from tests.fixtures.sites import FixtureServer
from tests.fixtures.sites.server import Request, Response

pytestmark = pytest.mark.django_db

DAY = 86400.0
MODIFIED_1 = "Mon, 01 Jan 2024 10:00:00 GMT"
MODIFIED_2 = "Tue, 02 Jan 2024 10:00:00 GMT"


def page(title: str, text: str, links: tuple[str, ...] = (), noindex: bool = False) -> bytes:
    robots = '<meta name="robots" content="noindex">' if noindex else ""
    anchors = "".join(f'<li><a href="{h}">{h.strip("/")} link</a></li>' for h in links)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{robots}'
            f"<title>{escape(title)}</title></head><body><h1>{escape(title)}</h1>"
            f"<p>{escape(text)}</p><ul>{anchors}</ul></body></html>").encode()


class ChangingSite:
    """The fixture site; ``edition`` 1 or 2. Pages with an ETag answer a matching
    If-None-Match with 304."""

    LINKS = ("/changes", "/same", "/plain", "/vanishes", "/hidden")

    def __init__(self) -> None:
        self.edition = 1

    def __call__(self, request: Request) -> Response:
        if request.path == "/robots.txt":
            return Response(200, b"User-agent: *\nDisallow:\n", {"Content-Type": "text/plain"})
        found = self.pages().get(request.path)
        if found is None:
            return Response(404, page("Not found", "nothing here"), {})
        body, headers = found
        headers = {"Content-Type": "text/html; charset=utf-8", **headers}
        etag = headers.get("ETag")
        if etag is not None and request.headers.get("if-none-match") == etag:
            return Response(304, b"", {"ETag": etag})
        return Response(200, body, headers)

    def pages(self) -> dict[str, tuple[bytes, dict[str, str]]]:
        one = self.edition == 1
        out = {
            "/": (page("Recrawl home", "welcome to the recrawlhome site "
                       + ("first edition" if one else "second edition"), self.LINKS),
                  {"ETag": '"home1"' if one else '"home2"'}),
            "/changes": (page("Changing page", "recrawlchanging " + (
                "zanzibar marmalade" if one else "quixotic lighthouse")),
                {"ETag": '"c1"' if one else '"c2"',
                 "Last-Modified": MODIFIED_1 if one else MODIFIED_2}),
            "/same": (page("Steady page", "recrawlsteady unchanged words"),
                      {"ETag": '"s1"', "Last-Modified": MODIFIED_1}),
            "/plain": (page("Plain page", "recrawlplain without validators"), {}),
            "/hidden": (page("Hidden page", "recrawlhidden secret", noindex=not one), {}),
        }
        if one:
            out["/vanishes"] = (page("Vanishing page", "recrawlvanishing ephemeral"), {})
        return out


class MovingClock:
    """Real time shifted by ``offset`` seconds (the crawl's clock)."""

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def __call__(self) -> float:
        return time.time() + self.offset


def search(client, crawl: Crawl, query: str) -> list[dict]:
    Crawl.objects.filter(pk=crawl.pk).update(public=True)  # searched by timestamp, by anyone
    data = client.get("/", {"q": query, "f": "json", "its": crawl.timestamp,
                            "nfpr": "1"}).json()
    return data["results"]


def page_documents(paths, url: str) -> int:
    """Page documents of ``url`` stored in the bundles (every copy ever appended)."""
    key = hash8(url)
    count = 0
    for path in paths:
        with IndexBundleReader(path) as reader:
            for part in reader.partitions:
                ids = reader.doc_map(part.number).member_ids
                count += sum(1 for row in ids if bytes(row[:8]) == key
                             and row[DOC_TYPE] == DocType.PAGE)
    return count


def report(crawl: Crawl, runner: LocalCrawl) -> None:
    """The queue servers' freshness reports onto the crawl's row, as their heartbeats do."""
    Crawl.objects.filter(pk=crawl.pk).update(
        freshness=merge_reports(s.stats().get("freshness") for s in runner.servers))


def test_a_recrawl_asks_conditionally_replaces_changed_pages_and_drops_removed_ones(
        tmp_path, settings, admin_client):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_OPTIONS_TTL = 0
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    PageOptions.objects.filter(pk=services.page_options_default_get().pk).update(
        page_recrawl_days=1)
    site = ChangingSite()
    with FixtureServer(site) as server:
        crawl = Crawl.objects.create(name="recrawl",
                                     page_options=services.page_options_default_get())
        SeedSite.objects.create(crawl=crawl, url=server.url("/"))
        services.crawl_start(crawl.pk)
        config = crawl_config_get(crawl.pk)
        assert config.page_options.page_recrawl_days == 1
        clock = MovingClock(-3 * DAY)
        runner = LocalCrawl(config, tmp_path, fetch_config_for(config), processor_for(config),
                            num_servers=1, fetchers=2, schedule_size=50, refresh_seconds=0.0,
                            clock=clock)
        try:
            first = runner.run(max_seconds=60)
            assert first.finished
            # the first visit: everything is found, nothing asked conditionally
            assert [r["url"] for r in search(admin_client, crawl, "zanzibar")] == [
                server.url("/changes")]
            for word in ("recrawlvanishing", "recrawlhidden", "recrawlsteady"):
                assert len(search(admin_client, crawl, word)) == 1, word
            assert not any("if-none-match" in e.headers for e in server.log)
            visits_before = len(server.log)

            site.edition = 2
            clock.offset = -1 * DAY                 # two days later: every page is due
            second = runner.run(max_seconds=60)
            assert second.finished
            report(crawl, runner)
        finally:
            runner.close(finish=False)
        revisits = {e.path: e for e in server.log[visits_before:] if e.path != "/robots.txt"}

    # the conditional requests, in the server's own log
    assert set(revisits) == {"/", *ChangingSite.LINKS}
    assert revisits["/same"].headers["if-none-match"] == '"s1"'
    assert revisits["/same"].headers["if-modified-since"] == MODIFIED_1
    assert revisits["/same"].status == 304
    assert revisits["/changes"].headers["if-none-match"] == '"c1"'
    assert revisits["/changes"].headers["if-modified-since"] == MODIFIED_1
    assert revisits["/changes"].status == 200
    assert "if-none-match" not in revisits["/plain"].headers and revisits["/plain"].status == 200
    assert revisits["/vanishes"].status == 404

    # 304 and an unchanged text cost no re-indexing: one page document each; the changed page
    # has two (the old copy stays on disk, retired)
    paths = first.index_paths
    assert page_documents(paths, server.url("/same")) == 1
    assert page_documents(paths, server.url("/plain")) == 1
    assert page_documents(paths, server.url("/changes")) == 2

    # the changed page: one result, with the new text; its old words find nothing
    (hit,) = search(admin_client, crawl, "recrawlchanging")
    assert hit["url"] == server.url("/changes") and "quixotic" in str(hit).lower()
    assert search(admin_client, crawl, "zanzibar") == []
    assert [r["url"] for r in search(admin_client, crawl, "quixotic")] == [
        server.url("/changes")]
    assert len(search(admin_client, crawl, f"info:{server.url('/changes')}")) == 1
    assert [r["url"] for r in search(admin_client, crawl, "recrawlhome")] == [server.url("/")]
    # unchanged pages are still found
    assert [r["url"] for r in search(admin_client, crawl, "recrawlsteady")] == [
        server.url("/same")]
    assert [r["url"] for r in search(admin_client, crawl, "recrawlplain")] == [
        server.url("/plain")]
    # the 404 page and the noindex page left the results, link text pointing at them too
    assert search(admin_client, crawl, "recrawlvanishing") == []
    assert search(admin_client, crawl, "recrawlhidden") == []
    assert search(admin_client, crawl, "vanishes") == []
    assert search(admin_client, crawl, f"info:{server.url('/vanishes')}") == []

    # the age figures on the crawl's page and in its JSON
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    fresh = data["freshness"]
    # copies: "/" and /changes fetched a day ago; /same and /plain kept from three days ago
    assert fresh["copies"] == 4
    assert abs(fresh["median_age"] - 3 * DAY) < 120     # the lower median: an old copy
    assert abs(fresh["p90_age"] - 3 * DAY) < 120
    assert {k: fresh[k] for k in ("changed", "unchanged", "not_modified", "removed", "gone",
                                  "noindex", "new")} == {
        "changed": 2, "unchanged": 1, "not_modified": 1, "removed": 2, "gone": 1,
        "noindex": 1, "new": 0}
    body = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk])).content
    text = body.decode()
    assert "Freshness of the indexed copies" in text
    assert '<td data-fresh="median_age_text">3.0 days</td>' in text
    assert '<td data-fresh="changed">2</td>' in text
    search_service().pool.close()
