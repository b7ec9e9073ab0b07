"""run_link_analysis (WebGraph -> Loops -> LinkRank + trust -> ScoreUpdater in one call), the
shard merge its remote path relies on, the linkrecords wire format, the received scores file
and the search-side cache that picks a new file up (seed 002, "Nutch's new scoring and indexing
framework")."""

from __future__ import annotations

import gzip
import io
import logging
import os
from pathlib import Path

import numpy as np
import pytest

from indexer.core.errors import CorruptGraphError
from indexer.core.policies import CrawlPolicy
from indexer.core.runtime.workdir import crawl_bundles, scores_path
from indexer.core.signals.link_scores import (
    CachedLinkScores,
    LinkScores,
    receive_scores,
    representative_urls,
    write_scores,
)
from indexer.core.urls import hashes_of
from linkgraph.core import LoopsConfig, PageLinks, TrustSeed, load_graph, read_bundle_links
from linkgraph.core.analysis import (
    AnalysisConfig,
    LocalShardSource,
    build_web_graph,
    mark_loops,
    rank_graph,
    read_links,
    run_link_analysis,
    write_graph_scores,
)
from linkgraph.core.bundles import ShardLinks, merge_shard_links, read_shard_links
from linkgraph.core.transfer import TransferError, decode_shard_links, encode_shard_links
from tests.unit.linkgraph.helpers import (
    GARDEN_AND_SPAM,
    GOOD,
    SPAM,
    graph_of,
    write_bundle,
)

TS = 300
PAGES = GARDEN_AND_SPAM
SEEDS = [TrustSeed(GOOD, CrawlPolicy.FAVOR, 2.0), TrustSeed(SPAM, CrawlPolicy.DISTRUST, 1.0)]


def _crawl(work: Path) -> list[LocalShardSource]:
    write_bundle(work / "qs0" / f"IndexData{TS}", PAGES[:2])
    write_bundle(work / "qs1" / f"IndexData{TS}", PAGES[2:])
    return [LocalShardSource(n, b) for n, b in enumerate(crawl_bundles(work, TS))]


def _fields(path: Path) -> dict[str, np.ndarray]:
    scores = LinkScores(path)
    return {name: scores.scores_for(scores.url_hash, name)
            for name in ("linkrank", "trust", "inlinks", "outlinks")}


def test_one_call_equals_the_four_steps(tmp_path):
    one, steps = tmp_path / "one", tmp_path / "steps"
    sources = _crawl(one)
    seen: list[tuple[str, int, int]] = []
    report = run_link_analysis(one, TS, sources, SEEDS,
                               progress=lambda *a: seen.append(a))
    # the same steps one by one, as the four commands run them
    step_sources = _crawl(steps)
    links, _ = read_links(step_sources)
    build_web_graph(steps, TS, links)
    mark_loops(steps, TS, LoopsConfig())
    rank_graph(steps, TS, SEEDS)
    write_graph_scores(steps, TS)
    a, b = _fields(scores_path(one, TS)), _fields(scores_path(steps, TS))
    for name in a:
        assert np.array_equal(a[name], b[name]), name
    assert (report.pages, report.urls, report.edges, report.seeds_found) == (4, 4, 6, 2)
    assert report.loop_links == int(load_graph(one / "linkgraph" / str(TS) / "webgraph")
                                    .loops.sum()) > 0
    assert report.converged and report.scores_path == scores_path(one, TS)
    assert [s.server for s in report.shards] == [0, 1]
    assert all(s.published is None for s in report.shards)  # one machine: nothing to send
    stages = [s for s, _, _ in seen]
    assert stages.index("documents") < stages.index("loops") < stages.index("linkrank") \
        < stages.index("scores") < stages.index("publish")
    trust = LinkScores(report.scores_path).scores_for(hashes_of([GOOD, SPAM]), "trust")
    assert trust.tolist() == [2.0, -1.0]


def test_loops_can_be_skipped_and_a_second_run_updates_the_graph(tmp_path):
    sources = _crawl(tmp_path)
    first = run_link_analysis(tmp_path, TS, sources, config=AnalysisConfig(loops=None))
    assert first.loop_links is None
    assert load_graph(tmp_path / "linkgraph" / str(TS) / "webgraph").loops is None
    second = run_link_analysis(tmp_path, TS, sources)
    assert second.urls == first.urls and second.loop_links > 0
    assert LinkScores(scores_path(tmp_path, TS)).meta["generation"] > 3


def test_an_empty_crawl_is_not_an_error(tmp_path):
    report = run_link_analysis(tmp_path, TS, [])
    assert (report.pages, report.urls, report.edges) == (0, 0, 0)
    assert len(LinkScores(scores_path(tmp_path, TS))) == 0


def test_the_scores_file_is_replaced_atomically(tmp_path):
    sources = _crawl(tmp_path)
    run_link_analysis(tmp_path, TS, sources)
    path = scores_path(tmp_path, TS)
    reader = open(path, "rb")  # a search holding the old file keeps reading the old file
    old = reader.read()
    inode = os.stat(path).st_ino
    run_link_analysis(tmp_path, TS, sources, SEEDS)
    assert os.stat(path).st_ino != inode  # a new file renamed over the old one
    reader.seek(0)
    assert reader.read() == old
    reader.close()
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []


def test_merging_shards_read_apart_equals_reading_them_together(tmp_path):
    # a source known only from link documents in one shard, its page record in another: the
    # page record wins; orphans of one source from two shards are gathered
    older = ShardLinks()
    older.orphans["https://x.org/"] = [("https://a.org/", "a")]
    older.orphans["https://hidden.org/"] = [("https://a.org/", "to a")]
    newer = ShardLinks()
    newer.add_page(PageLinks("https://x.org/", 5.0, (("https://b.org/", "b"),)))
    newer.orphans["https://hidden.org/"] = [("https://b.org/", "to b")]
    merged = {r.url: r for r in merge_shard_links([older, newer]).records}
    assert merged["https://x.org/"].links == (("https://b.org/", "b"),)
    assert merged["https://hidden.org/"].links == (("https://a.org/", "to a"),
                                                   ("https://b.org/", "to b"))
    # and on real bundles: shard by shard, then merged, as read_bundle_links reads them
    bundles = [source.bundle for source in _crawl(tmp_path / "w")]
    apart = merge_shard_links([read_shard_links(b) for b in bundles])
    together = read_bundle_links(bundles)
    assert sorted(apart.records, key=lambda r: r.url) == \
        sorted(together.records, key=lambda r: r.url)


def _shard_bytes(shard: ShardLinks, crawl: int = TS) -> bytes:
    return b"".join(encode_shard_links(shard, crawl, 1))


def test_link_records_round_trip_through_the_wire_format(tmp_path):
    (source,) = [s for s in _crawl(tmp_path) if s.server == 1]
    shard = read_shard_links(source.bundle)
    shard.redirects["https://old.org/"] = "https://new.org/"
    shard.orphans["https://hidden.org/"] = [("https://a.org/", "ünïcode ¶")]
    back = decode_shard_links(io.BytesIO(_shard_bytes(shard)), TS)
    assert back.pages == shard.pages and back.orphans == shard.orphans
    assert back.redirects == shard.redirects and back.documents == shard.documents


def test_a_cut_or_foreign_stream_is_refused(tmp_path):
    shard = ShardLinks()
    for i in range(3000):  # several compressed chunks
        shard.add_page(PageLinks(f"https://h{i}.org/", 1.0, (("https://t.org/", "t"),)))
    data = _shard_bytes(shard)
    with pytest.raises(TransferError, match="gzip|cut short"):
        decode_shard_links(io.BytesIO(data[: len(data) // 2]), TS)
    with pytest.raises(TransferError, match="crawl 300, not 7"):
        decode_shard_links(io.BytesIO(data), 7)
    lines = gzip.decompress(data).splitlines(keepends=True)
    without_end = gzip.compress(b"".join(lines[:-1]))
    with pytest.raises(TransferError, match="cut short"):
        decode_shard_links(io.BytesIO(without_end), TS)
    with pytest.raises(TransferError, match="not a link-records stream"):
        decode_shard_links(io.BytesIO(gzip.compress(b'{"format": "other"}\n')), TS)


def test_a_received_scores_file_is_checked_before_it_replaces_the_old_one(tmp_path):
    sent = tmp_path / "sent.npz"
    graph = graph_of([("https://a.org/", "https://b.org/")])
    write_scores(sent, graph.with_scores(score=np.array([0.25, 0.75])), {"crawl": TS})
    data = sent.read_bytes()
    target = scores_path(tmp_path / "qs-machine", TS)
    assert receive_scores(io.BytesIO(data).read, len(data), target, TS) == 2
    assert target.read_bytes() == data
    before = target.read_bytes()
    with pytest.raises(CorruptGraphError, match="ended 10 bytes early"):
        receive_scores(io.BytesIO(data[:-10]).read, len(data), target, TS)
    with pytest.raises(CorruptGraphError, match="unreadable"):
        receive_scores(io.BytesIO(b"x" * 100).read, 100, target, TS)
    with pytest.raises(CorruptGraphError, match="scores of crawl 300"):
        receive_scores(io.BytesIO(data).read, len(data), target, 301)
    assert target.read_bytes() == before  # a bad upload changed nothing
    assert [p.name for p in target.parent.iterdir()] == [target.name]


def test_search_cache_sees_each_new_file_and_logs_nothing_while_it_is_missing(tmp_path, caplog):
    path = scores_path(tmp_path, TS)
    cached = CachedLinkScores(path)
    with caplog.at_level(logging.DEBUG, logger="indexer.core.signals.link_scores"):
        assert cached.get() is None and cached.get() is None
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    graph = graph_of([("https://a.org/", "https://b.org/")])
    b = graph.node_id("https://b.org/")
    for value in (0.6, 0.7):  # same size, and the same mtime forced: a new inode all the same
        score = np.full(2, 1.0 - value)
        score[b] = value
        write_scores(path, graph.with_scores(score=score))
        os.utime(path, ns=(5, 5))
        assert cached.get().score_of("https://b.org/", "linkrank") == value


def test_the_analysis_writes_every_shards_redirects_into_the_table(tmp_path):
    """A redirect read from one shard whose target is in the other: the scores file names the
    target's representative as the rule of representative_urls gives it (#35 item 2)."""
    old, home = "https://old.org/", "https://home.org/"
    fans = [(f"https://fan{i}.org/", f'<p>Fan {i}.</p><a href="{old}">Old home</a>')
            for i in range(12)]
    write_bundle(tmp_path / "qs0" / f"IndexData{TS}",
                 [(home, '<title>Home</title><p>Gardens.</p>')])
    write_bundle(tmp_path / "qs1" / f"IndexData{TS}", [
        (old, f'<meta http-equiv="refresh" content="0; url={home}"><p>moved</p>'), *fans])
    sources = [LocalShardSource(n, b) for n, b in enumerate(crawl_bundles(tmp_path, TS))]
    scores = LinkScores(run_link_analysis(tmp_path, TS, sources).scores_path)
    assert scores.has_redirect_table
    (rule,) = representative_urls([(old, home)], scores.scores_for)
    (table,) = scores.representatives([home])
    assert rule.url == old and table is not None  # the old url has the twelve fans' links
    assert table == rule
    # the four manual steps write no table (the stored graph keeps no redirects): searches
    # then fall back to their local shards' redirect documents
    assert not LinkScores(write_graph_scores(tmp_path, TS)).has_redirect_table
