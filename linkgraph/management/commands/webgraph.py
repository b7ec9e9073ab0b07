"""``manage.py webgraph [--crawl TS] [--rebuild] [--filter]``: build or update a crawl's web
graph.

Glue for ``linkgraph.core.analysis`` (its WebGraph step, the same code the engine's own
link-analysis runs use): reads the link records of every queue server's shard (bundles under
``settings.WORK_DIRECTORY``, ``qs<n>/IndexData<ts>``, directly; a live queue server's shard on
another machine over HTTP, see :func:`linkgraph.services.shard_sources`) and merges them into
the stored graph at ``WORK_DIRECTORY/linkgraph/<ts>/webgraph`` (links of a newer fetch replace
a page's older ones). The helpers below are shared by the other link-analysis commands; what
they read of a crawl (its seeds, its live queue servers) comes from the app that owns crawls
(``LinkgraphConfig.crawl_facts``, set by the crawler).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.core.errors import GraphNotFound, IndexStoreError, LinkGraphError
from indexer.core.runtime.workdir import graph_dir, newest_crawl
from linkgraph.core import WebGraph, load_graph
from linkgraph.core.analysis import build_web_graph, read_links
from linkgraph.core.progress import ProgressBar
from linkgraph.core.trust import TrustSeed
from linkgraph.services import CrawlFacts, shard_sources

Found = TypeVar("Found")

__all__ = ["Command", "add_crawl_argument", "crawl_facts", "crawl_seeds", "crawl_timestamp",
           "look_up_url", "open_graph", "progress_bar", "stage_progress", "work_directory"]


class _Stream:
    """A Django OutputWrapper seen as a plain text stream (no added line endings)."""

    def __init__(self, wrapper: Any) -> None:
        self._wrapper = wrapper

    def write(self, text: str) -> None:
        self._wrapper.write(text, ending="")

    def flush(self) -> None:
        self._wrapper.flush()

    def isatty(self) -> bool:
        return self._wrapper.isatty()


def progress_bar(command: BaseCommand, label: str) -> ProgressBar:
    return ProgressBar(_Stream(command.stdout), label)


def add_crawl_argument(parser: CommandParser) -> None:
    parser.add_argument("--crawl", type=int, default=None, metavar="TIMESTAMP",
                        help="the crawl's timestamp (default: the newest crawl on disk)")


def crawl_facts() -> CrawlFacts:
    """What the app that owns crawls says of them (see :class:`linkgraph.apps.LinkgraphConfig`)."""
    facts = apps.get_app_config("linkgraph").crawl_facts
    if facts is None:
        raise CommandError("no installed app gives the crawls' seeds and queue servers")
    return facts


def crawl_seeds(timestamp: int) -> list[TrustSeed]:
    """The seed sites of crawl ``timestamp`` as trust seeds (none for an unknown crawl)."""
    return crawl_facts().seeds(timestamp)


def work_directory() -> Path:
    return Path(settings.WORK_DIRECTORY)


def crawl_timestamp(options: dict[str, Any]) -> int:
    if options.get("crawl") is not None:
        return int(options["crawl"])
    try:
        return newest_crawl(work_directory())
    except GraphNotFound as exc:
        raise CommandError(str(exc)) from exc


def open_graph(timestamp: int) -> WebGraph:
    try:
        return load_graph(graph_dir(work_directory(), timestamp))
    except GraphNotFound as exc:
        raise CommandError(f"{exc}; run `manage.py webgraph --crawl {timestamp}` first") \
            from exc
    except LinkGraphError as exc:
        raise CommandError(str(exc)) from exc


def look_up_url(command: BaseCommand, options: dict[str, Any],
                read: Callable[[WebGraph, str], Found | None]) -> tuple[int, WebGraph, Found]:
    """The crawl's timestamp, its graph and ``read(graph, options["url"])`` (drawn as a
    one-step progress bar); a CommandError when the url is not in the graph."""
    timestamp = crawl_timestamp(options)
    graph = open_graph(timestamp)
    bar = progress_bar(command, "lookup")
    found = read(graph, options["url"])
    bar.update(1, 1)
    if found is None:
        raise CommandError(f"{options['url']} is not in the web graph of crawl {timestamp}")
    return timestamp, graph, found


def stage_progress(bar: ProgressBar):
    """A ``progress(stage, done, total)`` callback of :mod:`linkgraph.core.analysis`
    drawn on ``bar``."""
    return lambda _stage, done, total: bar.update(done, total)


class Command(BaseCommand):
    help = "Build or update a crawl's web graph (outlinks, inlinks, nodes) from its bundles."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        parser.add_argument("--rebuild", action="store_true",
                            help="start from an empty graph instead of updating the stored one")
        parser.add_argument("--filter", action="store_true",
                            help="keep only the urls the crawl's site rules let it fetch "
                                 "(Nutch's -filter; with --rebuild for the whole graph)")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        timestamp = crawl_timestamp(options)
        work = work_directory()
        sources, _ = shard_sources(timestamp, crawl_facts().live_shards())
        if not sources:
            raise CommandError(f"crawl {timestamp} has no bundles under {work}")
        try:
            links, _ = read_links(sources, stage_progress(progress_bar(self, "documents")))
        except (IndexStoreError, OSError, LinkGraphError) as exc:
            raise CommandError(f"cannot read the bundles: {exc}") from exc
        url_filter = None
        if options["filter"]:
            url_filter = crawl_facts().url_filter(timestamp)
            if url_filter is None:
                raise CommandError(f"--filter: crawl {timestamp} is not in the database, so "
                                   "its site rules are unknown")
        try:
            built = build_web_graph(work, timestamp, links, rebuild=options["rebuild"],
                                    url_filter=url_filter)
        except LinkGraphError as exc:
            raise CommandError(f"{exc} (use --rebuild)") from exc
        graph = built.graph
        self.stdout.write(
            f"Web graph of crawl {timestamp} ({'updated' if built.updated else 'built'}): "
            f"{graph.n} nodes, {graph.edges} links, from {len(links.records)} fetch records "
            f"({built.ignored} older ones ignored"
            f"{f', {built.filtered} refused by the site rules' if url_filter else ''}), "
            f"{len(links.redirects)} redirects, "
            f"{len(sources)} bundle(s), in {time.monotonic() - started:.1f}s.\n"
            f"Stored in {graph_dir(work, timestamp)}")
