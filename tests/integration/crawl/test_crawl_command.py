"""`manage.py crawl` runs a whole crawl in one process and leaves a finished crawl behind."""

import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from crawler import services
from crawler.models import Crawl
from tests.fixtures.sites import FixtureServer, normal_site


@pytest.mark.django_db
def test_crawl_command(tmp_path, settings, capsys):
    settings.WORK_DIRECTORY = tmp_path
    settings.INDEX_REFRESH_SECONDS = 0.0
    site = normal_site("omega", pages=6, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "60", "--fetchers", "2")
        assert server.requests_for("/private/") == []
    crawl = Crawl.objects.get()
    assert crawl.status == "stopped" and crawl.channel is None
    assert crawl.pages_fetched >= 6 and crawl.documents_indexed >= 6
    out = capsys.readouterr().out
    assert "Crawl stopped:" in out and "pages/s" in out
    assert (tmp_path / "qs0" / f"IndexData{crawl.timestamp}").is_dir()


@pytest.mark.django_db
def test_crawl_command_refuses_bad_seed(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    with pytest.raises(CommandError, match="line 1"):
        call_command("crawl", "not-a-url")
    assert not Crawl.objects.exists()


@pytest.mark.django_db
def test_crawl_that_fails_is_not_left_locked_as_running(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path / "not-a-folder"
    settings.WORK_DIRECTORY.write_text("a file where the work directory should be")
    with pytest.raises(OSError):
        call_command("crawl", "http://127.0.0.1:9/", "--no-link-analysis")
    crawl = Crawl.objects.get()
    assert crawl.status == "resumable" and crawl.channel is None  # a new crawl may start


@pytest.mark.django_db
def test_crawl_started_in_a_second_another_crawl_took(tmp_path, settings):
    """A crawl's timestamp id is moved past crawls made in the same second (quick crawls one
    after another, or a crawl started from the admin meanwhile), not refused."""
    settings.WORK_DIRECTORY = tmp_path
    settings.INDEX_REFRESH_SECONDS = 0.0
    now = int(time.time())
    profile = services.page_options_default_get()
    taken = {Crawl.objects.create(name=f"taken {s}", timestamp=now + s,
                                  page_options=profile).timestamp for s in range(5)}
    site = normal_site("same-second", pages=3, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "60", "--no-link-analysis")
    crawl = Crawl.objects.exclude(timestamp__in=taken).get()
    assert crawl.timestamp > now and crawl.pages_fetched >= 3
