"""Link analysis over queue servers on two machines: this process holds queue server 0's shard
in its work directory; queue server 1's shard is in another work directory, served by a real
web server process (gunicorn, the engine's own WSGI app) standing for the remote machine. The
run reads the remote shard over HTTP, and afterwards both work directories hold the same scores
file, equal to the one computed with every shard local."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from crawler import services
from crawler.link_analysis import link_analysis_run
from crawler.models import Crawl, SeedSite
from indexer.core.policies import CrawlPolicy
from indexer.core.runtime.workdir import crawl_bundles, scores_path
from indexer.core.signals.link_scores import LinkScores
from linkgraph.core import TrustSeed
from linkgraph.core.analysis import LocalShardSource, run_link_analysis
from linkgraph.models import LinkAnalysis
from tests.processes import machine_web_server
from tests.unit.linkgraph.helpers import write_bundle

pytestmark = pytest.mark.slow
TOKEN = "two-machines-token"
GOOD, SPAM = "https://good.org/", "https://spam.biz/"
SHARD0 = [(GOOD, '<title>Good</title><p>Advice.</p><a href="/a.html">Tomatoes</a>'
                 '<a href="https://spam.biz/">Cheap</a>'),
          ("https://good.org/a.html", '<title>A</title><p>Tomatoes.</p><a href="/">Home</a>')]
SHARD1 = [(SPAM, '<title>Spam</title><p>Pills.</p><a href="https://good.org/a.html">Tips</a>'
                 '<a href="/b.html">More</a>'),
          ("https://spam.biz/b.html", '<title>B</title><p>More pills.</p>'
                                      '<a href="https://good.org/">Good</a>')]


@pytest.fixture
def remote_machine(tmp_path):
    """A queue server's web endpoint on 'another machine': its own process and work dir."""
    with machine_web_server(tmp_path, "remote", TOKEN) as machine:
        yield machine


@pytest.fixture
def two_machine_crawl(settings, tmp_path, db, remote_machine):
    remote_work, base_url, proc = remote_machine
    local = tmp_path / "local-work"
    settings.WORK_DIRECTORY = local
    settings.NUM_QUEUE_SERVERS = 2
    settings.QUEUE_SERVER_TOKEN = TOKEN
    crawl = Crawl.objects.create(name="two machines",
                                 page_options=services.page_options_default_get())
    SeedSite.objects.create(crawl=crawl, url=GOOD, policy="favor", trust_weight=2.0)
    SeedSite.objects.create(crawl=crawl, url=SPAM, policy="distrust")
    write_bundle(local / "qs0" / f"IndexData{crawl.timestamp}", SHARD0)
    write_bundle(remote_work / "qs1" / f"IndexData{crawl.timestamp}", SHARD1)
    # the queue servers' heartbeats register their urls (signed with the shared token)
    services.queue_server_heartbeat(0, "http://127.0.0.1:1/")
    services.queue_server_heartbeat(1, base_url)
    return crawl, local, remote_work, proc


def test_remote_shard_is_read_over_http_and_given_the_scores(two_machine_crawl, tmp_path):
    crawl, local, remote_work, _ = two_machine_crawl
    ts = crawl.timestamp
    assert link_analysis_run(crawl.pk) == "ok"
    row = LinkAnalysis.objects.get(crawl=crawl)
    assert (row.last_pages, row.last_urls) == (4, 4)
    notes = {s["server"]: s["note"] for s in row.last_shards}
    assert "shares this machine's work directory" in notes[0]
    assert notes[1].startswith("pushed") and "(4 urls)" in notes[1]
    mine, theirs = scores_path(local, ts), scores_path(remote_work, ts)
    assert theirs.read_bytes() == mine.read_bytes()
    # the same analysis with both shards on one machine gives the same scores
    alone = tmp_path / "one-machine"
    write_bundle(alone / "qs0" / f"IndexData{ts}", SHARD0)
    write_bundle(alone / "qs1" / f"IndexData{ts}", SHARD1)
    seeds = [TrustSeed(GOOD, CrawlPolicy.FAVOR, 2.0), TrustSeed(SPAM, CrawlPolicy.DISTRUST, 1.0)]
    report = run_link_analysis(alone, ts, [LocalShardSource(n, b) for n, b in
                                           enumerate(crawl_bundles(alone, ts))], seeds)
    a, b = LinkScores(mine), LinkScores(report.scores_path)
    assert np.array_equal(a.url_hash, b.url_hash)
    for field in ("linkrank", "trust", "inlinks", "outlinks"):
        assert np.array_equal(a.scores_for(a.url_hash, field), b.scores_for(b.url_hash, field))


def test_an_unreachable_remote_shard_fails_the_run_and_says_which(two_machine_crawl):
    crawl, local, _, proc = two_machine_crawl
    os.killpg(proc.pid, signal.SIGKILL)  # the remote machine is gone
    proc.wait(timeout=30)
    assert link_analysis_run(crawl.pk) == "failed"
    row = LinkAnalysis.objects.get(crawl=crawl)
    assert row.state == "idle" and row.last_outcome == "failed"
    assert "queue server 1" in row.last_error and "cannot be reached" in row.last_error
    assert not scores_path(local, crawl.timestamp).exists()
