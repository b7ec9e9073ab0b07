"""Build the Word Suggest lexicon of a crawl ahead of time (the search page builds it lazily).

``manage.py build_suggest_lexicon [--its TIMESTAMP]``: reads the stored titles and descriptions
of every bundle of the crawl (default the newest) and writes
``WORK_DIRECTORY/suggest/lexicon<its>.tsv`` (see :mod:`ranking.suggest`). Run it after a crawl
or from a periodic job while one grows.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ranking.core.errors import NoIndexError
from ranking.indexes import locate_index
from ranking.suggest import build_lexicon_file


class Command(BaseCommand):
    help = "Build the query-suggestion lexicon of a crawl from its stored summaries."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--its", type=int, default=None,
                            help="crawl timestamp (default: the newest crawl)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            its, bundles = locate_index(settings.WORK_DIRECTORY, options["its"])
        except NoIndexError as exc:
            raise CommandError(str(exc)) from exc
        started = time.perf_counter()
        path, words = build_lexicon_file(settings.WORK_DIRECTORY, its, bundles)
        self.stdout.write(f"{words} words from {len(bundles)} bundle(s) of crawl {its} in "
                          f"{time.perf_counter() - started:.1f}s: {path}")
