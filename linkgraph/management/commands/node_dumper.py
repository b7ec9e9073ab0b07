"""``manage.py node_dumper --top N --by inlinks|outlinks|score [--group host|domain
[--aggregate sum|max]] [--output FILE] [--crawl TS]``: Nutch's NodeDumper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.core.files.storage import atomic_stream
from linkgraph.core import Aggregate, NodeDumper, NodeGroup, NodeOrder

from .webgraph import add_crawl_argument, crawl_timestamp, open_graph, progress_bar


class Command(BaseCommand):
    help = ("List the top urls of a crawl's web graph by inlinks, outlinks or LinkRank score, "
            "or the top hosts or domains by the sum or maximum of their urls' values.")

    def add_arguments(self, parser: CommandParser) -> None:
        add_crawl_argument(parser)
        parser.add_argument("--top", type=int, default=20)
        parser.add_argument("--by", choices=[o.value for o in NodeOrder],
                            default=NodeOrder.SCORE.value)
        parser.add_argument("--group", choices=[g.value for g in NodeGroup], default=None,
                            help="sum up the urls by host or by registered domain")
        parser.add_argument("--aggregate", choices=[a.value for a in Aggregate],
                            default=Aggregate.SUM.value,
                            help="with --group: the sum or the maximum of the urls' values")
        parser.add_argument("--output", default=None, metavar="FILE",
                            help="also write the rows to FILE, tab-separated (value, then url "
                                 "or group name), replaced atomically")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["top"] < 1:
            raise CommandError("--top must be at least 1")
        timestamp = crawl_timestamp(options)
        graph = open_graph(timestamp)
        bar = progress_bar(self, "nodes")
        dumper = NodeDumper(graph)
        rows: list[tuple[float, str]] = []
        if options["group"]:
            groups = dumper.top_groups(options["top"], options["by"], options["group"],
                                       options["aggregate"])
            bar.update(graph.n, graph.n)
            self.stdout.write(f"{'rank':>4}  {'value':>12}  {'urls':>6}  {options['group']}")
            for rank, item in enumerate(groups, 1):
                self.stdout.write(f"{rank:>4}  {item.value:>12.6g}  {item.nodes:>6}  "
                                  f"{item.name}")
                rows.append((item.value, item.name))
            what = f"{options['group']}s by the {options['aggregate']} of {options['by']}"
        else:
            nodes = dumper.top(options["top"], options["by"])
            bar.update(graph.n, graph.n)
            self.stdout.write(f"{'rank':>4}  {'score':>10}  {'trust':>7}  {'in':>6}  "
                              f"{'out':>5}  url")
            values = dumper.values(options["by"])
            for rank, node in enumerate(nodes, 1):
                self.stdout.write(f"{rank:>4}  {node.score:>10.3e}  {node.trust:>7.3f}  "
                                  f"{node.inlinks:>6}  {node.outlinks:>5}  {node.url}")
                rows.append((float(values[node.node]), node.url))
            what = f"nodes by {options['by']}"
        if options["output"]:
            self._write(Path(options["output"]), rows)
        self.stdout.write(f"Top {len(rows)} {what} of crawl {timestamp} ({graph.n} nodes).")

    def _write(self, path: Path, rows: list[tuple[float, str]]) -> None:
        text = "".join(f"{value:.10g}\t{name}\n" for value, name in rows).encode("utf-8")
        try:
            atomic_stream(path, lambda handle: handle.write(text))
        except OSError as exc:
            raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
        self.stdout.write(f"Wrote {len(rows)} rows to {path}.")
