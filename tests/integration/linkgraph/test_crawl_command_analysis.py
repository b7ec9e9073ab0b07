"""`manage.py crawl` ends with the crawl's link analysis, in its own process (no workers)."""

import pytest
from django.core.management import call_command

from crawler.models import Crawl
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import LinkScores
from linkgraph.models import LinkAnalysis
from tests.fixtures.sites import FixtureServer, normal_site


@pytest.mark.django_db
def test_crawl_command_runs_link_analysis_at_its_end(tmp_path, settings, capsys):
    settings.WORK_DIRECTORY = tmp_path
    settings.INDEX_REFRESH_SECONDS = 0.0
    site = normal_site("omega", pages=6, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "60", "--fetchers", "2")
    crawl = Crawl.objects.get()
    row = LinkAnalysis.objects.get(crawl=crawl)
    assert (row.state, row.last_outcome, row.runs) == ("idle", "ok", 1)
    assert row.last_pages >= 6 and row.last_urls >= 6 and row.last_edges > 0
    scores = LinkScores(scores_path(tmp_path, crawl.timestamp))
    assert len(scores) == row.last_urls
    assert scores.score_of(server.url("/"), "inlinks") > 0
    assert "Link analysis done:" in capsys.readouterr().out


@pytest.mark.django_db
def test_crawl_command_can_skip_it(tmp_path, settings):
    settings.WORK_DIRECTORY = tmp_path
    settings.INDEX_REFRESH_SECONDS = 0.0
    site = normal_site("omega", pages=2, crawl_delay=0.0)
    with FixtureServer(site.route) as server:
        call_command("crawl", server.url("/"), "--max-seconds", "60", "--no-link-analysis")
    crawl = Crawl.objects.get()
    assert not LinkAnalysis.objects.filter(crawl=crawl).exists()
    assert not scores_path(tmp_path, crawl.timestamp).exists()
