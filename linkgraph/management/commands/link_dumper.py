"""``manage.py link_dumper URL [--crawl TS] [--limit N]``: a url's inlinks and outlinks."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from linkgraph.core import LinkDumper

from .webgraph import add_crawl_argument, look_up_url


class Command(BaseCommand):
    help = "Show a url's inlinks and outlinks, with anchor texts, from a crawl's web graph."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        add_crawl_argument(parser)
        parser.add_argument("--limit", type=int, default=100,
                            help="at most this many inlinks and outlinks (best scored first)")

    def handle(self, *args: Any, **options: Any) -> None:
        _, _, links = look_up_url(
            self, options, lambda graph, url: LinkDumper(graph).links(url, limit=options["limit"]))
        for title, items, total in (("inlinks", links.inlinks, links.node.inlinks),
                                    ("outlinks", links.outlinks, links.node.outlinks)):
            self.stdout.write(f"{title} ({total}):")
            for link in items:
                flags = ("H" if link.same_host else "-") + ("L" if link.in_loop else "-")
                self.stdout.write(f"  {link.score:.3e} {flags} {link.url}  "
                                  f"[{link.anchor}]")
        self.stdout.write(f"{options['url']}: {links.node.inlinks} inlinks, "
                          f"{links.node.outlinks} outlinks (H = same host, L = on a loop).")
