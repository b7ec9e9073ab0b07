"""``manage.py score_update [--crawl TS]``: write the crawl's link scores file.

The file (``WORK_DIRECTORY/linkgraph/<ts>/scores.npz``, read with
:class:`indexer.core.signals.link_scores.LinkScores`) is what search and the scheduler use. Glue for the
ScoreUpdater step of ``linkgraph.core.analysis`` (the code the engine's own runs use);
the file is replaced atomically, so a search never reads half of it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandParser

from linkgraph.core.analysis import write_graph_scores

from .webgraph import (
    add_crawl_argument,
    crawl_timestamp,
    open_graph,
    progress_bar,
    work_directory,
)


class Command(BaseCommand):
    help = "Write a crawl's LinkRank and trust scores, keyed by url hash, for search and crawl."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        timestamp = crawl_timestamp(options)
        graph = open_graph(timestamp)
        bar = progress_bar(self, "steps")
        bar.update(0, 1)
        if graph.n and not np.any(np.asarray(graph.score)):
            self.stderr.write("warning: the graph has no LinkRank scores yet; run `linkrank`")
        path = write_graph_scores(work_directory(), timestamp, graph)
        bar.update(1, 1)
        self.stdout.write(f"Scores of crawl {timestamp}: {graph.n} urls written to {path} in "
                          f"{time.monotonic() - started:.1f}s.")
