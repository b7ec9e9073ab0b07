"""Archive crawl paths are confined to ARCHIVE_ROOTS (issue 34, item 11): the admin refuses a
path outside them with one message whether it exists or not, follows symbolic links before
deciding, does not search a folder in the web request (the queue server lists it when the
crawl starts, and says so when it holds no WARC file), and a crawl saved with a path outside
the roots neither starts nor resumes."""

from __future__ import annotations

import gzip

import pytest
from django.urls import reverse

from crawler import services
from crawler.core.archive import skipped
from crawler.core.archive.queue import ArchiveQueue, ArchiveQueueConfig
from crawler.core.archive.source import ArchiveKind, ArchiveSource
from crawler.models import Crawl
from crawler.selectors import archive_source_get
from tests.integration.archive.helpers import numbered_warc

pytestmark = pytest.mark.django_db


@pytest.fixture
def roots(tmp_path, settings):
    """A root folder (the only one) and a folder beside it, outside the roots."""
    inside, outside = tmp_path / "archives", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    settings.ARCHIVE_ROOTS = (inside,)
    settings.WORK_DIRECTORY = tmp_path / "work"
    return inside, outside


def add_form(admin_client, options, path: str):
    return admin_client.post(reverse("admin:crawler_crawl_add"), {
        "name": "arc", "description": "", "order": "host_budgeting", "max_pages": "0",
        "max_depth": "-1", "recrawl_days": "-1", "max_domain_share": "100",
        "allowed_sites": "", "disallowed_sites": "", "page_options": str(options.pk),
        "bulk_seeds": "", "bulk_policy": "default", "bulk_trust_weight": "1.0",
        "source": "warc", "archive_path": path,
        "seeds-TOTAL_FORMS": "0", "seeds-INITIAL_FORMS": "0", "seeds-MIN_NUM_FORMS": "0",
        "seeds-MAX_NUM_FORMS": "1000"})


def form_error(response) -> str:
    assert response.status_code == 200
    return " ".join(response.context["adminform"].form.errors.get("archive_path", []))


def test_a_path_outside_the_roots_gets_one_answer_whether_it_exists_or_not(
        admin_client, options, roots):
    inside, outside = roots
    numbered_warc(outside / "real.warc.gz", "out", 2)
    answers = {path: form_error(add_form(admin_client, options, path))
               for path in (str(outside / "real.warc.gz"), str(outside / "none.warc.gz"),
                            str(outside), "/etc/passwd", "/no/such/folder",
                            f"{inside}/../elsewhere/real.warc.gz")}
    assert len(set(answers.values())) == 1, answers
    message = next(iter(answers.values()))
    assert "ARCHIVE_ROOTS" in message and str(inside) in message
    assert "exist" not in message
    assert not Crawl.objects.exists()


def test_a_link_inside_the_roots_to_a_file_outside_is_refused(admin_client, options, roots):
    inside, outside = roots
    numbered_warc(outside / "real.warc.gz", "out", 2)
    (inside / "link.warc.gz").symlink_to(outside / "real.warc.gz")
    assert "ARCHIVE_ROOTS" in form_error(add_form(admin_client, options,
                                                  str(inside / "link.warc.gz")))
    # and a folder of the roots holding such a link: the listing leaves the file out
    source = ArchiveSource(ArchiveKind.WARC, str(inside), roots=(str(inside),))
    numbered_warc(inside / "own.warc.gz", "in", 2)
    assert source.warc_files() == ["own.warc.gz"]
    assert ArchiveSource(ArchiveKind.WARC, str(outside), roots=(str(inside),)).warc_files() == []


def test_a_folder_is_not_searched_in_the_request_but_when_the_crawl_starts(
        admin_client, options, roots, tmp_path):
    inside, _ = roots
    (inside / "empty" / "deep").mkdir(parents=True)  # no WARC file: found out at crawl time
    response = add_form(admin_client, options, str(inside / "empty"))
    assert response.status_code == 302, form_error(response)
    crawl = Crawl.objects.get(name="arc")
    assert services.crawl_start(crawl.pk).status == "running"
    queue = ArchiveQueue.open(tmp_path / "q", archive_source_get(crawl),
                              ArchiveQueueConfig(server=0, num_servers=1,
                                                 timestamp=crawl.timestamp))
    try:
        report = queue.skipped.to_json()
    finally:
        queue.close()
    assert report[skipped.NO_WARC_FILES]["count"] == 1
    assert report[skipped.NO_WARC_FILES]["url"] == str(inside / "empty")
    services.crawl_stop(crawl.pk)


def test_a_crawl_saved_outside_the_roots_neither_starts_nor_resumes(make_crawl, roots,
                                                                    settings):
    inside, outside = roots
    (outside / "in.warc.gz").write_bytes(gzip.compress(b"WARC/1.0\r\n"))
    crawl = make_crawl(name="w", seeds=(), source=Crawl.Source.WARC,
                       archive_path=str(outside / "in.warc.gz"))  # saved before the setting
    with pytest.raises(services.CrawlServiceError, match="ARCHIVE_ROOTS"):
        services.crawl_start(crawl.pk)
    settings.ARCHIVE_ROOTS = (inside, outside)
    services.crawl_start(crawl.pk)
    services.crawl_stop(crawl.pk)
    crawl.refresh_from_db()
    settings.ARCHIVE_ROOTS = (inside,)  # narrowed while it was stopped
    with pytest.raises(services.CrawlServiceError, match="ARCHIVE_ROOTS"):
        services.crawl_resume(crawl.pk)
