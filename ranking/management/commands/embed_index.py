"""``manage.py embed_index [--crawl TS] [--batch N]``: the page embeddings of a crawl.

Glue for :mod:`ranking.core.semantic.build`: embeds the pages of every bundle of the crawl on
this machine (``WORK_DIRECTORY/qs<n>/IndexData<ts>``, default the newest crawl) with the
semantic signal's model (:func:`ranking.semantic_model.model_embedder`: the ``semantic`` extra
and the files of ``manage.py fetch_semantic_model``) and stores the arrays beside each bundle (``semantic/``), where the bundle's searches
and the "Similar" pages find them at their next request. Pages embedded by an earlier run
keep their vectors, so running it again after more of the crawl embeds only the new pages.
Prints, per bundle, the pages embedded and the time per page (the signal's index-time cost).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.errors import IndexStoreError
from indexer.core.runtime.workdir import crawl_bundles
from linkgraph.management.commands.webgraph import (
    add_crawl_argument,
    crawl_timestamp,
    progress_bar,
    work_directory,
)
from ranking.core.semantic.build import BATCH, build_semantic_index
from ranking.core.semantic.embedder import SemanticUnavailable
from ranking.core.semantic.store import semantic_dir
from ranking.semantic_model import model_embedder


class Command(BaseCommand):
    help = "Embed a crawl's pages for the semantic signal and its Similar pages."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        parser.add_argument("--batch", type=int, default=BATCH, metavar="N",
                            help=f"pages embedded at once (default {BATCH})")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1")
        timestamp = crawl_timestamp(options)
        work = work_directory()
        bundles = crawl_bundles(work, timestamp)
        if not bundles:
            raise CommandError(f"crawl {timestamp} has no bundles under {work}")
        started = time.monotonic()
        try:
            embedder = model_embedder()
        except SemanticUnavailable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Model {embedder.name} loaded in {time.monotonic() - started:.1f}s.")
        for bundle in bundles:
            try:
                reader = IndexBundleReader(bundle)
            except (IndexStoreError, OSError, ValueError) as exc:
                raise CommandError(f"cannot read {bundle}: {exc}") from exc
            try:
                bar = progress_bar(self, "pages")
                report = build_semantic_index(reader, embedder, batch=options["batch"],
                                              progress=bar.update)
            except (IndexStoreError, OSError) as exc:
                raise CommandError(f"cannot read or write {bundle}: {exc}") from exc
            finally:
                reader.close()
            self.stdout.write(
                f"{bundle.parent.name}: {report.pages} pages with an embedding "
                f"({report.embedded} embedded now at {report.ms_per_page:.1f} ms a page, "
                f"{report.reused} kept) in {report.seconds:.1f}s; stored in "
                f"{semantic_dir(bundle)}")
