"""``manage.py loops [--crawl TS] [--max-length K]``: mark the links on short cycles.

Glue for the Loops step of ``linkgraph.core.analysis`` (the code the engine's own
link-analysis runs use).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from linkgraph.core import LoopsConfig
from linkgraph.core.analysis import mark_loops

from .webgraph import (
    add_crawl_argument,
    crawl_timestamp,
    open_graph,
    progress_bar,
    stage_progress,
    work_directory,
)


class Command(BaseCommand):
    help = "Find link cycles up to a length in a crawl's web graph and mark them for LinkRank."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        parser.add_argument("--max-length", type=int, default=3,
                            help="longest cycle looked for (default 3)")
        parser.add_argument("--max-frontier", type=int, default=1000,
                            help="pages kept per search step and page (bounds memory)")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        timestamp = crawl_timestamp(options)
        try:
            config = LoopsConfig(max_length=options["max_length"],
                                 max_frontier=options["max_frontier"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        graph = open_graph(timestamp)  # a clear error when there is no graph yet
        graph, count = mark_loops(work_directory(), timestamp, config,
                                  stage_progress(progress_bar(self, "pages")))
        share = count / graph.edges if graph.edges else 0.0
        self.stdout.write(f"Loops of crawl {timestamp}: {count} of {graph.edges} links "
                          f"({share:.1%}) lie on cycles of length <= {config.max_length}, "
                          f"in {time.monotonic() - started:.1f}s.")
