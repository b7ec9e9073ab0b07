"""``manage.py webgraph [--crawl TS] [--rebuild]``: build or update a crawl's web graph.

Glue for ``ranking.core.linkgraph``: finds the crawl's bundles under ``settings.WORK_DIRECTORY``
(``qs<n>/IndexData<ts>``), reads their link records and merges them into the stored graph at
``WORK_DIRECTORY/linkgraph/<ts>/webgraph`` (links of a newer fetch replace a page's older ones).
The helpers below are shared by the other link-analysis commands.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from crawler.models import Crawl
from crawler.selectors import crawl_config_get
from indexer.core.errors import IndexStoreError
from ranking.core.linkgraph import (
    GraphNotFound,
    LinkGraphError,
    Policy,
    TrustSeed,
    WebGraph,
    WebGraphBuilder,
    crawl_bundles,
    graph_dir,
    load_graph,
    newest_crawl,
    read_bundle_links,
    save_graph,
)
from ranking.core.linkgraph.bundles import count_documents
from ranking.core.linkgraph.progress import ProgressBar


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


def crawl_seeds(timestamp: int) -> list[TrustSeed]:
    """The crawl's seed sites as trust seeds (none when the database has no such crawl)."""
    crawl = Crawl.objects.filter(timestamp=timestamp).only("pk").first()
    if crawl is None:
        return []
    return [TrustSeed(s.url, Policy(str(s.policy)), float(s.trust_weight))
            for s in crawl_config_get(crawl.pk).seeds]


class Command(BaseCommand):
    help = "Build or update a crawl's web graph (outlinks, inlinks, nodes) from its bundles."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        parser.add_argument("--rebuild", action="store_true",
                            help="start from an empty graph instead of updating the stored one")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        timestamp = crawl_timestamp(options)
        work = work_directory()
        bundles = crawl_bundles(work, timestamp)
        if not bundles:
            raise CommandError(f"crawl {timestamp} has no bundles under {work}")
        folder = graph_dir(work, timestamp)
        base = None
        if not options["rebuild"]:
            try:
                base = load_graph(folder)
            except GraphNotFound:
                base = None
            except LinkGraphError as exc:
                raise CommandError(f"{exc} (use --rebuild)") from exc
        try:
            total = count_documents(bundles)
            bar = progress_bar(self, "documents")
            links = read_bundle_links(bundles, progress=lambda done: bar.update(done, total))
            bar.update(total, total)
        except (IndexStoreError, OSError) as exc:
            raise CommandError(f"cannot read the bundles: {exc}") from exc
        builder = WebGraphBuilder(base)
        builder.add_all(links.records)
        graph = save_graph(builder.build(), folder)
        self.stdout.write(
            f"Web graph of crawl {timestamp} ({'updated' if base else 'built'}): {graph.n} nodes, "
            f"{graph.edges} links, from {len(links.records)} fetch records "
            f"({builder.ignored} older ones ignored), {len(links.redirects)} redirects, "
            f"{len(bundles)} bundle(s), in {time.monotonic() - started:.1f}s.\nStored in {folder}")
