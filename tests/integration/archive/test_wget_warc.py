"""A WARC written by GNU Wget (``wget --recursive --warc-file``) against a fixture site, then
an archive crawl of it, and its pages found through the search page."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.fixtures.sites import FixtureServer
from tests.integration.archive.helpers import crawl_config, run, search, warc_source
from tests.integration.archive.sites import archive_site

pytestmark = pytest.mark.django_db
WGET = shutil.which("wget")


def test_a_wget_warc_is_crawled_and_searchable(client, work):
    assert WGET, "wget is installed on this machine (apt install wget)"
    site, route = archive_site("wgetsite")
    with FixtureServer(route) as server:
        done = subprocess.run(
            [WGET, "--recursive", "--level=3", "--no-verbose", "--directory-prefix",
             str(work / "files"), "--warc-file", str(work / "site"), "--no-warc-keep-log",
             server.url("/")], capture_output=True, text=True, timeout=60)
        base = server.url("")
    assert done.returncode == 0, done.stderr
    result = run(work, crawl_config(1_700_000_700, warc_source(work / "site.warc.gz")))
    assert result.finished
    stats = result.stats[0]
    assert stats["archive_skipped"] == {}
    other = stats["archive_other"]
    assert other["warcinfo"] == 1 and other["robots_txt"] == 1 and other["request"] >= 7
    assert other["metadata"] >= 1 and other["resource"] >= 1  # wget's own records
    for page in site.pages.values():
        if page.allowed and not page.path.startswith("/orphan"):  # wget reads no sitemap
            assert search(client, page.word) == [base.rstrip("/") + page.path], page.path
        elif not page.allowed:
            assert search(client, page.word) == []  # robots.txt kept wget out
