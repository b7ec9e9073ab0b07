"""``manage.py loop_reader URL [--crawl TS]``: Nutch's LoopReader, the urls a url shares a
short link cycle with (from the marks of ``manage.py loops``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from linkgraph.core import LoopReader

from .webgraph import add_crawl_argument, look_up_url


class Command(BaseCommand):
    help = "Print the urls a url shares a short link cycle with (run `manage.py loops` first)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        add_crawl_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        timestamp, _, loops = look_up_url(self, options,
                                          lambda graph, url: LoopReader(graph).read(url))
        if not loops.marked:
            raise CommandError(f"the web graph of crawl {timestamp} has no loop marks yet: run "
                               "`manage.py loops` first")
        for url in loops.urls:
            self.stdout.write(url)
        self.stdout.write(f"{options['url']}: on short link cycles with {len(loops.urls)} "
                          f"urls in crawl {timestamp}.")
