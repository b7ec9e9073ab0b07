"""``manage.py crawl --warc PATH`` and ``manage.py crawl --archive-of CRAWL``: archive crawls
from the command line, in one process, like the web crawls the command runs: a crawl row the
admin shows, its records skipped by reason, its pages on the search page."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from crawler.core.queue_server.freshness import freshness_figures
from crawler.models import Crawl
from tests.integration.archive.helpers import builder, html, record_bytes, response, search
from tests.integration.archive.test_foreign_warc import write_foreign

pytestmark = pytest.mark.django_db
CAPTURED = datetime(2024, 5, 1, 10, tzinfo=UTC).timestamp()  # the helpers' WARC-Date


def captured_ages(crawl: Crawl) -> dict:
    """The crawl's freshness figures now; the copies' ages are those of their captures."""
    figures = freshness_figures(crawl.freshness, time.time())
    expected = time.time() - CAPTURED
    for name in ("median_age", "p90_age"):
        assert abs(figures[name] - expected) <= figures["bucket_seconds"] + 60, figures
    return figures


def test_warc_and_earlier_crawl_archive_crawls_from_the_command(work, client, capsys) -> None:
    folder = work / "in"
    folder.mkdir()
    write_foreign(folder / "foreign.warc.gz")
    # a second file: one good record, then one whose gzip member is cut short
    good = record_bytes(response(builder(), "http://cli.test/", html(
        "Command line", "The word cliarchiveword is here.")))
    cut = record_bytes(response(builder(), "http://cli.test/cut.html", html("Cut", "x" * 900)))
    (folder / "more.warc").write_bytes(good + cut[: len(cut) // 2])
    call_command("crawl", "--warc", str(folder), "--fetchers", "2", "--no-link-analysis")
    out = capsys.readouterr().out
    crawl = Crawl.objects.get()
    assert crawl.source == Crawl.Source.WARC and crawl.archive_path == str(folder)
    assert crawl.status == "stopped" and crawl.channel is None
    assert crawl.documents_indexed >= 6 and crawl.pages_fetched == 6
    assert sum(row["count"] for row in crawl.archive_skipped.values()) == 1
    assert "Crawl stopped:" in out and "Archive records skipped: 1 " in out
    assert search(client, "cliarchiveword") == ["http://cli.test/"]
    assert search(client, "damson") == ["http://foreign.test/jam.html"]
    # the copies' ages are their records' (most records are dated 2024-05-01)
    figures = captured_ages(crawl)
    assert figures["copies"] == figures["new"] == 6 and figures["revisits"] == 0

    call_command("crawl", "--archive-of", str(crawl.timestamp), "--name", "again",
                 "--fetchers", "2", "--no-link-analysis")
    again = Crawl.objects.get(name="again")
    assert again.source == Crawl.Source.CRAWL and again.archive_of_id == crawl.pk
    assert again.status == "stopped" and again.pages_fetched == 6
    assert again.documents_indexed == crawl.documents_indexed
    assert captured_ages(again)["copies"] == 6  # the stored pages keep their capture times
    assert search(client, "cliarchiveword") == ["http://cli.test/"]  # the newest crawl's index


def test_archive_options_refuse_what_cannot_be_crawled(work) -> None:
    with pytest.raises(CommandError, match="give seed urls, or --warc"):
        call_command("crawl")
    with pytest.raises(CommandError, match="no crawl 'nothing-here'"):
        call_command("crawl", "--archive-of", "nothing-here")
    with pytest.raises(CommandError):
        call_command("crawl", "--warc", str(work / "no-such-folder"))
    with pytest.raises(CommandError):  # not both
        call_command("crawl", "--warc", str(work), "--archive-of", "1")
    assert not Crawl.objects.exists()
