"""``manage.py index_info PATH``: partitions, counts, sizes and the most frequent terms."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.core.bundle.verify import bundle_info
from indexer.core.errors import IndexStoreError


class Command(BaseCommand):
    help = "Describe an index bundle: partitions, counts, sizes, most frequent terms."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the IndexDocumentBundle folder")
        parser.add_argument("--top", type=int, default=20, help="how many frequent terms")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            info = bundle_info(options["path"], top=options["top"])
        except (IndexStoreError, FileNotFoundError) as exc:
            raise CommandError(str(exc)) from exc
        out = self.stdout
        out.write(f"bundle: {info.path}")
        out.write(f"format version: {info.archive.get('format_version')}")
        out.write(f"documents: {info.active_count} pages, {info.visited_urls_count} links")
        out.write(f"dictionary: {info.dictionary_terms} terms, height {info.dictionary_height}, "
                  f"{info.dictionary_bytes} bytes; next partition {info.next_partition}")
        out.write("partition  state     documents  groups    terms  postings  positions"
                  "  stored_bytes  index_bytes")
        for p in info.partitions:
            out.write(f"{p.number:>9}  {p.state:<8} {p.documents:>10} {p.groups:>7} "
                      f"{p.terms:>8} {p.postings:>9} {p.positions:>10} {p.stored_bytes:>13} "
                      f"{p.index_bytes:>12}")
        out.write("most frequent terms (term_id prefix, occurrences, documents):")
        for prefix, occurrences, docs in info.top_terms:
            out.write(f"  {prefix:<8} {occurrences:>10} {docs:>8}")
