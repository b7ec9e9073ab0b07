"""``manage.py link_dumper URL [--crawl TS] [--limit N]``: a url's inlinks and outlinks."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from linkgraph.core import LinkDumper

from .webgraph import add_crawl_argument, crawl_timestamp, open_graph, progress_bar


class Command(BaseCommand):
    help = "Show a url's inlinks and outlinks, with anchor texts, from a crawl's web graph."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        add_crawl_argument(parser)
        parser.add_argument("--limit", type=int, default=100,
                            help="at most this many inlinks and outlinks (best scored first)")

    def handle(self, *args: Any, **options: Any) -> None:
        timestamp = crawl_timestamp(options)
        graph = open_graph(timestamp)
        bar = progress_bar(self, "lookup")
        links = LinkDumper(graph).links(options["url"], limit=options["limit"])
        bar.update(1, 1)
        if links is None:
            raise CommandError(f"{options['url']} is not in the web graph of crawl {timestamp}")
        for title, items, total in (("inlinks", links.inlinks, links.node.inlinks),
                                    ("outlinks", links.outlinks, links.node.outlinks)):
            self.stdout.write(f"{title} ({total}):")
            for link in items:
                flags = ("H" if link.same_host else "-") + ("L" if link.in_loop else "-")
                self.stdout.write(f"  {link.score:.3e} {flags} {link.url}  "
                                  f"[{link.anchor}]")
        self.stdout.write(f"{options['url']}: {links.node.inlinks} inlinks, "
                          f"{links.node.outlinks} outlinks (H = same host, L = on a loop).")
