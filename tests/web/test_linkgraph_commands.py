"""The link-analysis commands end to end: bundles on disk -> webgraph -> loops -> linkrank
(seeds and policies from the database) -> score_update -> dumpers, through call_command."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from crawler.models import SeedSite
from indexer.core.runtime.workdir import scores_path
from indexer.core.signals.link_scores import LinkScores
from indexer.core.urls import hashes_of
from linkgraph.core import load_graph
from tests.unit.linkgraph.helpers import GARDEN_AND_SPAM, GOOD, GOOD_A, SPAM, SPAM_A, write_bundle

PAGES = GARDEN_AND_SPAM


def _run(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def crawl_on_disk(settings, tmp_path, make_crawl):
    settings.WORK_DIRECTORY = tmp_path
    crawl = make_crawl(seeds=())
    SeedSite.objects.create(crawl=crawl, url=GOOD, policy="favor", trust_weight=2.0)
    SeedSite.objects.create(crawl=crawl, url=SPAM, policy="distrust", trust_weight=1.0)
    write_bundle(tmp_path / "qs0" / f"IndexData{crawl.timestamp}", PAGES[:2])
    write_bundle(tmp_path / "qs1" / f"IndexData{crawl.timestamp}", PAGES[2:])
    write_bundle(tmp_path / "qs0" / "IndexData1", PAGES[:1])  # an older crawl
    return crawl


def test_the_commands_in_order(crawl_on_disk, tmp_path):
    ts = crawl_on_disk.timestamp
    out = _run("webgraph")  # the newest crawl by default
    assert f"crawl {ts}" in out and "4 nodes" in out and "built" in out and "[#" in out
    assert "updated" in _run("webgraph", "--crawl", str(ts))
    out = _run("loops", "--max-length", "2")
    assert "lie on cycles" in out
    graph = load_graph(tmp_path / "linkgraph" / str(ts) / "webgraph")
    assert graph.loops is not None and int(graph.loops.sum()) == 4
    out = _run("linkrank", "--crawl", str(ts))
    assert "converged" in out and "2 of 2 seeds" in out and "2 distrusted" in out
    out = _run("score_update", "--crawl", str(ts))
    path = scores_path(tmp_path, ts)
    assert str(path) in out and path.exists()
    assert LinkScores(path).meta["generation"] == 4 and LinkScores(path).meta["crawl"] == ts
    scores = LinkScores(path)
    trust = scores.scores_for(hashes_of([GOOD, GOOD_A, SPAM, SPAM_A]), "trust")
    assert trust[0] == 2.0 and trust[1] > 0 and trust[2] == -1.0 and trust[3] < 0
    rank = scores.scores_for(hashes_of([GOOD, "https://unknown.org/"]))
    assert rank[0] > 0 and rank[1] == 0.0
    assert np.isclose(scores.scores_for(hashes_of([GOOD, GOOD_A, SPAM, SPAM_A]),
                                        "linkrank").sum(), 1.0)

    out = _run("node_dumper", "--top", "2", "--by", "inlinks")
    lines = [line for line in out.splitlines() if line.strip().startswith(("1 ", "2 "))]
    assert len(lines) == 2 and "Top 2 nodes by inlinks" in out and "(4 nodes)" in out
    # Nutch's NodeDumper -group and -output: two hosts, each holding half the score
    table = tmp_path / "hosts.tsv"
    out = _run("node_dumper", "--group", "host", "--by", "score", "--output", str(table))
    assert "Top 2 hosts by the sum of score" in out and "good.org" in out
    rows = [line.split("\t") for line in table.read_text().splitlines()]
    assert sorted(name for _, name in rows) == ["good.org", "spam.biz"]
    assert sum(float(value) for value, _ in rows) == pytest.approx(1.0)
    out = _run("node_dumper", "--group", "domain", "--aggregate", "max", "--by", "inlinks",
               "--top", "1")
    assert "Top 1 domains by the max of inlinks" in out
    # Nutch's LoopReader: GOOD and GOOD_A link each other
    out = _run("loop_reader", GOOD)
    assert GOOD_A in out.splitlines() and "with 1 urls" in out
    out = _run("link_dumper", GOOD_A)
    assert "inlinks (2):" in out and "tomato tips" in out and "growing tomatoes" in out
    out = _run("node_reader", SPAM)
    assert "trust: -1.000000" in out and "inlinks: 2" in out


def test_errors_become_command_errors(settings, tmp_path, db):
    settings.WORK_DIRECTORY = tmp_path
    with pytest.raises(CommandError, match="no crawl bundles"):
        _run("webgraph")
    with pytest.raises(CommandError, match="no bundles"):
        _run("webgraph", "--crawl", "42")
    with pytest.raises(CommandError, match="run `manage.py webgraph"):
        _run("linkrank", "--crawl", "42")
    write_bundle(tmp_path / "qs0" / "IndexData7", PAGES[:1])
    _run("webgraph")
    with pytest.raises(CommandError, match="not in the web graph"):
        _run("node_reader", "https://unknown.org/")
    with pytest.raises(CommandError, match="not in the web graph"):
        _run("link_dumper", "https://unknown.org/")
    with pytest.raises(CommandError, match="no loop marks"):
        _run("loop_reader", GOOD)
    with pytest.raises(CommandError, match="not in the web graph"):
        _run("loop_reader", "https://unknown.org/")
    with pytest.raises(CommandError, match="cannot write"):
        _run("node_dumper", "--output", str(tmp_path / "missing" / "folder" / "x.tsv"))
    with pytest.raises(CommandError, match="at least 1"):
        _run("node_dumper", "--top", "0")
    with pytest.raises(CommandError, match="damping"):
        _run("linkrank", "--damping", "1.5")
    # a crawl the database does not know: no seeds, trust stays 0
    assert "0 of 0 seeds" in _run("linkrank")


def test_webgraph_filter_keeps_what_the_crawls_site_rules_allow(crawl_on_disk, tmp_path):
    """Nutch WebGraph's -filter: the crawl's disallowed sites leave the graph, as pages and as
    link targets."""
    ts = crawl_on_disk.timestamp
    crawl_on_disk.disallowed_sites = "spam.biz"
    crawl_on_disk.save()
    assert "4 nodes" in _run("webgraph", "--crawl", str(ts))
    out = _run("webgraph", "--crawl", str(ts), "--rebuild", "--filter")
    assert "2 nodes" in out and "2 refused by the site rules" in out
    graph = load_graph(tmp_path / "linkgraph" / str(ts) / "webgraph")
    assert sorted(graph.urls(range(graph.n))) == [GOOD, GOOD_A]
    with pytest.raises(CommandError, match="not in the database"):
        _run("webgraph", "--crawl", "1", "--filter")


def test_linkrank_keeps_trust_in_its_domain_when_the_crawl_says_so(crawl_on_disk):
    ts = crawl_on_disk.timestamp
    _run("webgraph", "--crawl", str(ts))
    assert "within domains" not in _run("linkrank", "--crawl", str(ts))
    crawl_on_disk.policy_within_domain = True
    crawl_on_disk.save()
    assert "Trust (dampening, within domains)" in _run("linkrank", "--crawl", str(ts))
