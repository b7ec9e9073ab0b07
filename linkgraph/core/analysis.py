"""The whole link analysis of a crawl in one call: WebGraph, Loops, LinkRank (with trust) and
ScoreUpdater, in the order seed 002 ("Nutch's new scoring and indexing framework") gives:
"Inject, Generate, Fetch and Parse, WebGraph, Loops (optional), LinkRank, ScoreUpdater".

Layer: ``linkgraph.core`` (pure Python; no Django). The glue gives the shards to read
(:class:`ShardSource`: a bundle on this machine, or a queue server reached over HTTP, see
:mod:`.remote`), the crawl's trust seeds and an :class:`AnalysisConfig`. The four management
commands call the steps one by one (:func:`read_links` + :func:`build_web_graph`,
:func:`mark_loops`, :func:`rank_graph`, :func:`write_graph_scores`); the engine's task calls
:func:`run_link_analysis`, which runs them all and then hands the scores file to every shard
that is not on this machine (:meth:`ShardSource.publish_scores`).

Files, under the work directory of the machine that runs it (see :mod:`indexer.core.runtime.workdir`):
``linkgraph/<ts>/webgraph/`` (the graph, updated in place generation by generation: links of
a newer fetch replace a page's older ones), ``linkgraph/<ts>/near_duplicates.npz`` (the
near-duplicate clusters, :mod:`.near_duplicates`) and ``linkgraph/<ts>/scores.npz``, replaced
atomically (temp file, fsync, rename: :func:`indexer.core.signals.link_scores.write_scores`), so a
search reading it sees the old file or the new one, never half of one.

Progress: ``progress(stage, done, total)`` with ``stage`` one of ``documents`` (documents
read; total 0 when unknown), ``loops`` (pages walked), ``linkrank`` (iterations, of
``max_iter``), ``scores`` and ``publish`` (shards given the file).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from indexer.core.errors import GraphNotFound
from indexer.core.runtime.workdir import graph_dir, scores_path
from indexer.core.signals.link_scores import write_scores

from .builder import WebGraphBuilder
from .bundles import CrawlLinks, ShardLinks, count_documents, merge_shard_links, read_shard_links
from .graph import WebGraph, load_graph, read_manifest, save_graph
from .linkrank import LinkRankConfig, LinkRankResult, linkrank
from .loops import LoopsConfig, find_loops
from .near_duplicates import write_crawl_clusters
from .trust import TrustConfig, TrustResult, TrustSeed, propagate_trust, seed_personalization

logger = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


class ShardSource(Protocol):
    """Where one queue server's share of a crawl's documents is read from.

    ``server``: the queue server's number; ``location``: a path or url, for reports.
    :meth:`read_links` returns the shard's link records (documents read are reported through
    ``progress(done)``, ``done`` counted from ``start``); :meth:`publish_scores` makes the
    crawl's scores file available in the shard's own work directory and returns a note, or
    None when nothing had to be done (the shard shares this machine's work directory).
    """

    server: int
    location: str

    def estimate_documents(self) -> int: ...

    def read_links(self, progress: Callable[[int], None], start: int) -> ShardLinks: ...

    def publish_scores(self, path: Path, crawl: int) -> str | None: ...


@dataclass(frozen=True, slots=True)
class LocalShardSource:
    """A shard whose bundle (``<work>/qs<n>/IndexData<ts>``) is on this machine."""

    server: int
    bundle: Path

    @property
    def location(self) -> str:
        return str(self.bundle)

    def estimate_documents(self) -> int:
        return count_documents([self.bundle])

    def read_links(self, progress: Callable[[int], None], start: int) -> ShardLinks:
        return read_shard_links(self.bundle, progress, start)

    def publish_scores(self, path: Path, crawl: int) -> str | None:
        return None  # the bundle is under this machine's work directory: the path is shared


@dataclass(frozen=True, slots=True)
class AnalysisConfig:
    """The knobs of the four jobs. ``loops`` None skips Loops (seed 002 calls it optional);
    ``rebuild`` starts from an empty graph instead of updating the stored one."""

    loops: LoopsConfig | None = field(default_factory=LoopsConfig)
    linkrank: LinkRankConfig = field(default_factory=LinkRankConfig)
    trust: TrustConfig = field(default_factory=TrustConfig)
    personalize: bool = False
    rebuild: bool = False


@dataclass(frozen=True, slots=True)
class ShardReport:
    server: int
    location: str
    documents: int
    published: str | None  # how the scores reached it (None: shared work directory)


@dataclass(frozen=True, slots=True)
class GraphBuild:
    graph: WebGraph
    updated: bool  # True when a stored graph was updated, False when built from nothing
    ignored: int  # fetch records older than what the graph had
    filtered: int = 0  # fetch records of urls the url filter refused


@dataclass(frozen=True, slots=True)
class Ranking:
    graph: WebGraph
    linkrank: LinkRankResult
    trust: TrustResult


@dataclass(frozen=True, slots=True)
class AnalysisReport:
    """What one :func:`run_link_analysis` did (stored by the glue, shown in the admin)."""

    crawl: int
    pages: int  # fetch records (pages and link-only sources) merged into the graph
    documents: int  # documents read from every shard
    urls: int  # nodes of the graph
    edges: int
    redirects: int
    loop_links: int | None  # links on short cycles (None: Loops skipped)
    iterations: int
    converged: bool
    seeds_found: int
    scores_path: Path
    shards: tuple[ShardReport, ...]
    seconds: float


def read_links(sources: Sequence[ShardSource],
               progress: Progress = _no_progress) -> tuple[CrawlLinks, list[int]]:
    """Every shard's link records, merged (:func:`.bundles.merge_shard_links`), and the
    number of documents each shard gave. ``progress("documents", done, total)``."""
    total = sum(source.estimate_documents() for source in sources)
    shards: list[ShardLinks] = []
    done = 0
    for source in sources:
        shard = source.read_links(lambda n: progress("documents", n, max(total, n)), done)
        shards.append(shard)
        done += shard.documents
    progress("documents", done, max(total, done))
    return merge_shard_links(shards), [s.documents for s in shards]


def build_web_graph(work_dir: str | os.PathLike[str], timestamp: int, links: CrawlLinks,
                    rebuild: bool = False,
                    url_filter: Callable[[str], bool] | None = None) -> GraphBuild:
    """WebGraph: merge ``links`` into the crawl's stored graph (or a new one) and store it;
    with ``url_filter``, only the urls it accepts (:class:`.builder.WebGraphBuilder`).

    Raises :class:`.errors.LinkGraphError` when the stored graph cannot be read (``rebuild``
    starts over).
    """
    folder = graph_dir(work_dir, timestamp)
    base = None
    if not rebuild:
        try:
            base = load_graph(folder)
        except GraphNotFound:
            base = None
    builder = WebGraphBuilder(base, url_filter)
    builder.add_all(links.records)
    graph = save_graph(builder.build(), folder)
    return GraphBuild(graph, base is not None, builder.ignored, builder.filtered)


def mark_loops(work_dir: str | os.PathLike[str], timestamp: int,
               config: LoopsConfig = LoopsConfig(),
               progress: Progress = _no_progress) -> tuple[WebGraph, int]:
    """Loops: mark the stored graph's links on cycles up to ``config.max_length``; returns
    the stored graph and the number of marked links."""
    graph = load_graph(graph_dir(work_dir, timestamp))
    marks = find_loops(graph, config, progress=lambda done, total: progress("loops", done,
                                                                             total))
    progress("loops", graph.n, graph.n)
    stored = save_graph(graph.with_loops(marks, config.max_length),
                        graph_dir(work_dir, timestamp), changed=["loops"])
    return stored, int(marks.sum())


def rank_graph(work_dir: str | os.PathLike[str], timestamp: int, seeds: Sequence[TrustSeed],
               config: LinkRankConfig = LinkRankConfig(),
               trust_config: TrustConfig = TrustConfig(), personalize: bool = False,
               progress: Progress = _no_progress) -> Ranking:
    """LinkRank and trust from ``seeds`` on the stored graph; stores both node scores."""
    graph = load_graph(graph_dir(work_dir, timestamp))
    personalization = seed_personalization(graph, seeds) if personalize else None
    result = linkrank(graph, config, personalization,
                      progress=lambda i, _delta: progress("linkrank", i, config.max_iter))
    progress("linkrank", config.max_iter, config.max_iter)
    trust = propagate_trust(graph, seeds, trust_config)
    stored = save_graph(graph.with_scores(score=result.scores, trust=trust.trust),
                        graph_dir(work_dir, timestamp), changed=["score", "trust"])
    return Ranking(stored, result, trust)


def write_graph_scores(work_dir: str | os.PathLike[str], timestamp: int,
                       graph: WebGraph | None = None,
                       redirects: Mapping[str, str] | None = None) -> Path:
    """ScoreUpdater: the stored graph's scores to ``<work>/linkgraph/<ts>/scores.npz``
    (atomically replaced). ``graph``: the stored graph when the caller has it open;
    ``redirects``: every shard's redirects (url -> location), from which the file's redirect
    table names each redirect target's representative url (seed 002's BasicFields), so that
    every machine holding the file shows the same urls (the stored graph keeps no redirects:
    ``manage.py score_update`` alone writes no table, and searches then fall back to the
    redirect documents of their local shards)."""
    if graph is None:
        graph = load_graph(graph_dir(work_dir, timestamp))
    if graph.n and not np.any(np.asarray(graph.score)):
        logger.warning("crawl %s: the web graph has no LinkRank scores yet", timestamp)
    generation = read_manifest(graph.path)["generation"] if graph.path else None
    return write_scores(scores_path(work_dir, timestamp), graph,
                        {"crawl": timestamp, "generation": generation, "nodes": graph.n,
                         "edges": graph.edges}, redirects)


def run_link_analysis(work_dir: str | os.PathLike[str], timestamp: int,
                      sources: Sequence[ShardSource], seeds: Sequence[TrustSeed] = (),
                      config: AnalysisConfig = AnalysisConfig(),
                      progress: Progress = _no_progress) -> AnalysisReport:
    """WebGraph -> Loops -> LinkRank + trust -> ScoreUpdater over every shard of crawl
    ``timestamp``, then the scores file to every shard not on this machine.

    A crawl without documents is not an error: its graph and scores file are empty. Errors
    (:class:`.errors.LinkGraphError`, ``OSError``, a shard's transport error) propagate; a
    scores file already in place stays as it was unless every step before it succeeded.
    """
    started = time.monotonic()
    links, documents = read_links(sources, progress)
    built = build_web_graph(work_dir, timestamp, links, config.rebuild)
    loop_links = None
    if config.loops is not None:
        _, loop_links = mark_loops(work_dir, timestamp, config.loops, progress)
    ranking = rank_graph(work_dir, timestamp, seeds, config.linkrank, config.trust,
                         config.personalize, progress)
    progress("scores", 0, 1)
    path = write_graph_scores(work_dir, timestamp, ranking.graph, links.redirects)
    # the near-duplicate clusters, by the pages' SimHashes and their new importance
    write_crawl_clusters(work_dir, timestamp, links.signatures)
    progress("scores", 1, 1)
    shards = []
    for number, (source, docs) in enumerate(zip(sources, documents, strict=True)):
        progress("publish", number, len(sources))
        shards.append(ShardReport(source.server, source.location, docs,
                                  source.publish_scores(path, timestamp)))
    progress("publish", len(sources), len(sources))
    graph = ranking.graph
    report = AnalysisReport(
        crawl=timestamp, pages=len(links.records), documents=links.documents, urls=graph.n,
        edges=graph.edges, redirects=len(links.redirects), loop_links=loop_links,
        iterations=ranking.linkrank.iterations, converged=ranking.linkrank.converged,
        seeds_found=ranking.trust.seeds_found, scores_path=path, shards=tuple(shards),
        seconds=time.monotonic() - started)
    logger.info("link analysis of crawl %s: %d pages, %d urls, %d links from %d shard(s) in "
                "%.1fs (%s)", timestamp, report.pages, report.urls, report.edges,
                len(sources), report.seconds, "updated" if built.updated else "built")
    return report
