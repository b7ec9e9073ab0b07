"""``manage.py score_update [--crawl TS]``: write the crawl's link scores file.

The file (``WORK_DIRECTORY/linkgraph/<ts>/scores.npz``, read with
``ranking.core.linkgraph.LinkScores``) is what search and the scheduler use.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandParser

from ranking.core.linkgraph import scores_path, write_scores
from ranking.core.linkgraph.graph import read_manifest

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
        bar.update(0, 2)
        if graph.n and not np.any(np.asarray(graph.score)):
            self.stderr.write("warning: the graph has no LinkRank scores yet; run `linkrank`")
        path = scores_path(work_directory(), timestamp)
        generation = read_manifest(graph.path)["generation"] if graph.path else None
        bar.update(1, 2)
        write_scores(path, graph, {"crawl": timestamp,
                                   "generation": generation,
                                   "nodes": graph.n, "edges": graph.edges})
        bar.update(2, 2)
        self.stdout.write(f"Scores of crawl {timestamp}: {graph.n} urls written to {path} in "
                          f"{time.monotonic() - started:.1f}s.")
