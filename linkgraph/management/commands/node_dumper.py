"""``manage.py node_dumper --top N --by inlinks|outlinks|score [--crawl TS]``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from linkgraph.core import NodeDumper, NodeOrder

from .webgraph import add_crawl_argument, crawl_timestamp, open_graph, progress_bar


class Command(BaseCommand):
    help = "List the top urls of a crawl's web graph by inlinks, outlinks or LinkRank score."

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        parser.add_argument("--top", type=int, default=20)
        parser.add_argument("--by", choices=[o.value for o in NodeOrder],
                            default=NodeOrder.SCORE.value)

    def handle(self, *args: Any, **options: Any) -> None:
        timestamp = crawl_timestamp(options)
        graph = open_graph(timestamp)
        bar = progress_bar(self, "nodes")
        nodes = NodeDumper(graph).top(options["top"], options["by"])
        bar.update(graph.n, graph.n)
        self.stdout.write(f"{'rank':>4}  {'score':>10}  {'trust':>7}  {'in':>6}  {'out':>5}  url")
        for rank, node in enumerate(nodes, 1):
            self.stdout.write(f"{rank:>4}  {node.score:>10.3e}  {node.trust:>7.3f}  "
                              f"{node.inlinks:>6}  {node.outlinks:>5}  {node.url}")
        self.stdout.write(f"Top {len(nodes)} of {graph.n} nodes of crawl {timestamp} by "
                          f"{options['by']}.")
