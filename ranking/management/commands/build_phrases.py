"""``manage.py build_phrases [--crawl TS] [--min-count K]``: a crawl's common phrases.

Glue for :mod:`indexer.core.signals.phrases`: reads the titles and anchor texts of every bundle of the
crawl on this machine (``WORK_DIRECTORY/qs<n>/IndexData<ts>``, default the newest crawl) and
writes the lexicon of the phrases at least K of them hold into each bundle
(``phrases.npz``), where that bundle's shard picks it up at its next query.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.core.errors import IndexStoreError
from indexer.core.runtime.workdir import crawl_bundles, phrases_path
from indexer.core.signals.phrase_counting import write_crawl_phrases
from indexer.core.signals.phrases import DEFAULT_MIN_COUNT
from linkgraph.core.bundles import count_documents
from linkgraph.management.commands.webgraph import (
    add_crawl_argument,
    crawl_timestamp,
    progress_bar,
    work_directory,
)


class Command(BaseCommand):
    help = "Build a crawl's lexicon of common phrases from its titles and anchor texts."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        parser.add_argument("--min-count", type=int, default=DEFAULT_MIN_COUNT, metavar="K",
                            help="titles and anchor texts a phrase must occur in "
                                 f"(default {DEFAULT_MIN_COUNT})")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        if options["min_count"] < 1:
            raise CommandError("--min-count must be at least 1")
        timestamp = crawl_timestamp(options)
        work = work_directory()
        bundles = crawl_bundles(work, timestamp)
        if not bundles:
            raise CommandError(f"crawl {timestamp} has no bundles under {work}")
        try:
            total = count_documents(bundles)
            bar = progress_bar(self, "documents")
            lexicon = write_crawl_phrases(bundles, options["min_count"],
                                          lambda done: bar.update(done, total))
            bar.update(total, total)
        except (IndexStoreError, OSError) as exc:
            raise CommandError(f"cannot read or write the bundles: {exc}") from exc
        lengths = ", ".join(f"{int((lexicon.lengths == n).sum())} of {n} words"
                            for n in range(2, 5))
        self.stdout.write(
            f"Common phrases of crawl {timestamp}: {len(lexicon)} ({lengths}) held by at least "
            f"{options['min_count']} of {lexicon.meta.get('texts', 0)} titles and anchor "
            f"texts, from {len(bundles)} bundle(s), in {time.monotonic() - started:.1f}s.\n"
            + "\n".join(f"Stored in {phrases_path(b)}" for b in bundles))
