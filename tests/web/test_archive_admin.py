"""Archive crawls and WARC export in crawl management (issue 21): the services refuse to start
an archive crawl without its source and start one with it (no seeds needed), a new archive
crawl of an earlier crawl copies its seeds, ``manage.py export_warc`` and the admin's action
export a crawl (a NOARCHIVE page left out and counted), and the crawl page and its JSON show
an archive crawl's source and records skipped by reason."""

from __future__ import annotations

import gzip
import io

import pytest
from django.core.management import call_command
from django.urls import reverse
from warcio.archiveiterator import ArchiveIterator

from crawler import sending, services, tasks
from crawler.core.definition.crawl import CrawlStatus
from crawler.core.processing.indexing import to_index_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from crawler.models import Crawl
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.runtime.workdir import crawl_paths, queue_server_dir

pytestmark = pytest.mark.django_db
PAGES = {
    "https://docs.example/": "<title>Home</title><p>The archive home page.</p>",
    "https://docs.example/a.html": "<title>A</title><p>Page a of the docs.</p>",
    "https://docs.example/secret.html": '<meta name="robots" content="noarchive">'
                                        "<title>Secret</title><p>Not to be archived.</p>",
}


@pytest.fixture
def work(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    settings.ARCHIVE_ROOTS = (tmp_path,)
    return tmp_path


def ended_crawl(make_crawl, work, name="docs") -> Crawl:
    """A crawl that ran and stored PAGES (processed by the crawler's own processor)."""
    crawl = make_crawl(name=name)
    processor = PageProcessor()
    docs = []
    for url, body in PAGES.items():
        page = processor.process(FetchedPage(url, body.encode(), 200, {
            "Content-Type": "text/html; charset=utf-8", "Server": "fixture/1"},
            fetched_at=1_700_000_000.5))
        docs += to_index_documents(page)
    path = crawl_paths(queue_server_dir(work, 0), crawl.timestamp)["index"]
    with IndexBundleWriter(path, BundleConfig()) as writer:
        writer.append(docs)
    Crawl.objects.filter(pk=crawl.pk).update(status=CrawlStatus.STOPPED,
                                             documents_indexed=len(docs))
    crawl.refresh_from_db()
    return crawl


def test_an_archive_crawl_starts_only_with_its_source(make_crawl, work):
    warc = make_crawl(name="w", seeds=(), source=Crawl.Source.WARC,
                      archive_path=str(work / "none.warc.gz"))
    with pytest.raises(services.CrawlServiceError, match="does not exist"):
        services.crawl_start(warc.pk)
    (work / "in.warc.gz").write_bytes(gzip.compress(b"WARC/1.0\r\n"))
    Crawl.objects.filter(pk=warc.pk).update(archive_path=str(work / "in.warc.gz"))
    assert services.crawl_start(warc.pk).status == CrawlStatus.RUNNING  # no seed needed
    services.crawl_stop(warc.pk)


def test_an_archive_crawl_of_a_crawl_needs_it_ended_and_stored(make_crawl, work):
    earlier = make_crawl(name="earlier")
    archive = make_crawl(name="again", seeds=(), source=Crawl.Source.CRAWL,
                         archive_of=earlier)
    services.crawl_start(earlier.pk)
    with pytest.raises(services.CrawlServiceError, match="has ended"):
        services.crawl_start(archive.pk)
    services.crawl_stop(earlier.pk)
    with pytest.raises(services.CrawlServiceError, match="no stored pages"):
        services.crawl_start(archive.pk)
    stored = ended_crawl(make_crawl, work, "stored")
    Crawl.objects.filter(pk=archive.pk).update(archive_of=stored)
    assert services.crawl_start(archive.pk).status == CrawlStatus.RUNNING


def test_new_archive_crawl_copies_seeds_and_options(make_crawl, work):
    stored = ended_crawl(make_crawl, work)
    archive = services.crawl_archive_new(stored.pk)
    assert archive.source == Crawl.Source.CRAWL and archive.archive_of == stored
    assert archive.name == "docs (archive)" and archive.page_options == stored.page_options
    assert list(archive.seeds.values_list("url", flat=True)) == ["https://example.com/"]
    assert archive.status == CrawlStatus.NEW


def test_export_warc_command(make_crawl, work):
    crawl = ended_crawl(make_crawl, work)
    out = io.StringIO()
    call_command("export_warc", str(crawl.timestamp), "--out", str(work / "x.warc.gz"),
                 stdout=out)
    text = out.getvalue()
    assert "2 pages and 0 redirects" in text and "Left out: 1 stored pages." in text
    assert "1: Stored without a cached copy (NOARCHIVE, cache off)" in text
    with open(work / "x.warc.gz", "rb") as handle:
        responses = [r for r in ArchiveIterator(handle) if r.rec_type == "response"]
    assert sorted(r.rec_headers.get_header("WARC-Target-URI") for r in responses) == [
        "https://docs.example/", "https://docs.example/a.html"]
    assert responses[0].http_headers.get_header("Server") == "fixture/1"
    assert (work / "x.warc.gz.cdxj").read_text().count("\n") == 2


def test_admin_export_action_and_the_crawl_page(admin_client, make_crawl, work, monkeypatch):
    crawl = ended_crawl(make_crawl, work)
    monkeypatch.setattr(sending, "send_export_warc", tasks.export_warc_task)  # the worker
    response = admin_client.post(reverse("admin:crawler_crawl_changelist"), {
        "action": "export_warc", "_selected_action": [crawl.pk]}, follow=True)
    assert "WARC export queued" in response.content.decode()
    path = work / "warc" / f"docs-{crawl.timestamp}.warc.gz"
    assert path.exists() and path.with_name(path.name + ".cdxj").exists()
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[crawl.pk]))
    assert str(path) in page.content.decode() and "2 pages, 0 redirects" in page.content.decode()


def test_archive_crawl_page_shows_source_and_skipped_records(admin_client, make_crawl, work):
    stored = ended_crawl(make_crawl, work)
    archive = services.crawl_archive_new(stored.pk)
    Crawl.objects.filter(pk=archive.pk).update(archive_skipped={
        "bad_length": {"count": 3, "url": "http://x.test/a", "message": "Content-Length 9"}})
    data = admin_client.get(reverse("admin:crawler_crawl_status_json",
                                    args=[archive.pk])).json()
    assert data["archive"]["kind"] == "crawl"
    assert data["archive"]["source"] == f"crawl 'docs' ({stored.timestamp})"
    assert data["archive"]["skipped_total"] == 3
    assert data["archive"]["skipped_by_reason"][0]["label"] == \
        "Content-Length does not match the record"
    page = admin_client.get(reverse("admin:crawler_crawl_status", args=[archive.pk]))
    body = page.content.decode()
    assert 'id="crawl-archive-skipped"' in body and "Content-Length 9" in body
    assert "a copy's time is when its record was captured" in body
    web = admin_client.get(reverse("admin:crawler_crawl_status_json", args=[stored.pk]))
    assert web.json()["archive"] is None
    web_page = admin_client.get(reverse("admin:crawler_crawl_status", args=[stored.pk]))
    assert "was captured" not in web_page.content.decode()


def test_admin_form_checks_the_warc_path(admin_client, options, work):
    response = admin_client.post(reverse("admin:crawler_crawl_add"), {
        "name": "arc", "description": "", "order": "host_budgeting", "max_pages": "0",
        "max_depth": "-1", "recrawl_days": "-1", "max_domain_share": "100",
        "allowed_sites": "", "disallowed_sites": "", "page_options": str(options.pk),
        "bulk_seeds": "", "bulk_policy": "default", "bulk_trust_weight": "1.0",
        "source": "warc", "archive_path": "relative/path.warc",
        "seeds-TOTAL_FORMS": "0", "seeds-INITIAL_FORMS": "0", "seeds-MIN_NUM_FORMS": "0",
        "seeds-MAX_NUM_FORMS": "1000"})
    assert response.status_code == 200 and "absolute path" in response.content.decode()
    assert not Crawl.objects.filter(name="arc").exists()
