"""``manage.py node_reader URL [--crawl TS]``: one node of a crawl's web graph."""

from __future__ import annotations

import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from linkgraph.core import NodeReader

from .webgraph import add_crawl_argument, look_up_url


class Command(BaseCommand):
    help = "Print one url's node: link counts, LinkRank score, trust, fetch time."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        add_crawl_argument(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        timestamp, graph, node = look_up_url(self, options,
                                             lambda graph, url: NodeReader(graph).read(url))
        fetched = "never (only linked to)" if node.fetched_at is None else \
            datetime.datetime.fromtimestamp(node.fetched_at, datetime.UTC).isoformat()
        for name, value in (("url", node.url), ("url hash", f"{node.url_hash:016x}"),
                            ("host hash", f"{node.host_hash:016x}"), ("inlinks", node.inlinks),
                            ("outlinks", node.outlinks), ("score", f"{node.score:.6e}"),
                            ("relative score", f"{node.score * graph.n:.4f}"),
                            ("trust", f"{node.trust:.6f}"), ("fetched", fetched)):
            self.stdout.write(f"{name:>15}: {value}")
        self.stdout.write(f"Node {node.node} of {graph.n} in crawl {timestamp}.")
