"""Smaller things a new user met (issue 39, item 10): a page whose whole body came in a 206
(the fetcher's byte-cap Range header) was shown and archived as HTTP 206; a WARC export had no
download link; the admin said "Crawl mixs". A real ``manage.py crawl`` of a loopback site that
honours Range, the WARC export of it, and the admin through the test client."""

from __future__ import annotations

import gzip
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from warcio.archiveiterator import ArchiveIterator

from crawler import services
from crawler.models import Crawl, FetchedUrl
from linkgraph.models import LinkAnalysis
from tests.fixtures.sites import FixtureServer
from tests.fixtures.sites.server import Response
from tests.fixtures.sites.sites import html_page, not_found

PAGES = {"/": ["/a.html", "/b.html"], "/a.html": ["/"], "/b.html": ["/a.html"]}


def ranged(request):
    """Pages that answer a ``Range: bytes=0-N`` request with a 206 of the whole body, as many
    web servers do for a small file."""
    if request.path not in PAGES:
        return not_found(request)
    body = html_page(f"ranged {request.path}", "ranged page about quinces", PAGES[request.path])
    headers = {"Content-Type": "text/html; charset=utf-8"}
    if re.fullmatch(r"bytes=0-\d+", request.headers.get("range", "")):
        headers["Content-Range"] = f"bytes 0-{len(body) - 1}/{len(body)}"
        return Response(206, body, headers)
    return Response(200, body, headers)


@pytest.mark.django_db(transaction=True)
def test_whole_pages_in_206_are_fetched_shown_and_archived_as_200(admin_client, tmp_path,
                                                                  settings):
    settings.WORK_DIRECTORY = tmp_path / "work"
    with FixtureServer(ranged) as server:
        call_command("crawl", server.url("/"), "--restrict", "--max-pages", "20",
                     "--max-seconds", "60", "--no-link-analysis")
        assert server.requests_for("/b.html")
        assert all("range" in r.headers for r in server.log if r.path in PAGES)
        urls = [server.url(p) for p in PAGES]
    crawl = Crawl.objects.get()
    statuses = set(FetchedUrl.objects.filter(crawl=crawl, url__in=urls)
                   .values_list("status", flat=True))
    assert statuses == {200}, statuses  # the fetched urls page
    call_command("export_warc", str(crawl.timestamp))
    status_page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    link = re.search(r'<a class="warc-download" href="([^"]+)"', status_page.content.decode())
    assert link, "no download link for the WARC export"
    download = admin_client.get(link.group(1))
    assert download.status_code == 200
    assert download["Content-Disposition"].startswith("attachment")
    warc = b"".join(download.streaming_content)
    assert gzip.decompress(warc).startswith(b"WARC/1.")
    download.close()
    with open(tmp_path / "got.warc.gz", "wb") as out:
        out.write(warc)
    with open(tmp_path / "got.warc.gz", "rb") as handle:
        codes = [r.http_headers.get_statuscode() for r in ArchiveIterator(handle)
                 if r.rec_type == "response"]
    assert codes and set(codes) == {"200"}, codes
    cdxj = admin_client.get(link.group(1) + ".cdxj")
    assert cdxj.status_code == 200
    cdxj.close()
    export = reverse("admin:crawler_crawl_export", args=[crawl.pk, "x"]).rsplit("/", 1)[0]
    for bad in ("..%2F..%2Fdb.sqlite3", "other-1.warc.gz", f"x-{crawl.timestamp}.warc.gz",
                f".hidden-{crawl.timestamp}.warc.gz", "%00"):
        got = admin_client.get(f"{export}/{bad}", follow=True)  # no file, never a 5xx
        assert got.status_code in (200, 404) and not got.has_header("Content-Disposition"), bad
        assert got.status_code == 404 or "/" in bad.replace("%2F", "/"), bad


@pytest.mark.django_db
def test_the_admin_says_crawl_mixes(admin_client):
    index = admin_client.get(reverse("admin:index")).content.decode()
    assert "Crawl mixes" in index and "Crawl mixs" not in index


@pytest.mark.django_db
def test_page_options_copied_at_start_are_named_as_on_their_page(admin_client, make_crawl):
    """Issue 39, item 10: the crawl page listed "max_description_len" and its like."""
    crawl = make_crawl(name="named", restrict_to_seeds=True)
    services.crawl_start(crawl.pk)
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    table = re.search(r'<table id="crawl-page-options">(.*?)</table>', page.content.decode(),
                      re.S).group(1)
    assert "Maximum page summary length" in table and "max_description_len" not in table
    assert "_" not in "".join(re.findall(r'<th scope="row">([^<]*)</th>', table))


@pytest.mark.django_db
def test_the_crawl_page_writes_times_one_way(admin_client, make_crawl):
    """Issue 39, item 10: three date formats on one page (the crawl's start, the link
    analysis's ISO times, the browser's local refresh time; tests/browser/test_admin_live.py
    checks the last)."""
    crawl = make_crawl(name="timed", restrict_to_seeds=True)
    services.crawl_start(crawl.pk)
    at = timezone.now().replace(microsecond=0)
    LinkAnalysis.objects.create(crawl=crawl, last_outcome="ok", last_started_at=at,
                                last_finished_at=at)
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    text = page.content.decode()
    stamp = at.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert f'data-la="started_at">{stamp}<' in text and f'data-la="finished_at">{stamp}<' in text
    assert re.search(r"Started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text)
    data = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[crawl.pk])).json()
    assert data["link_analysis"]["last"]["started_at"] == stamp
