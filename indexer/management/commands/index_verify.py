"""``manage.py index_verify PATH``: check a whole index bundle and name exactly what is wrong."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.core.bundle.verify import verify_bundle


class Command(BaseCommand):
    help = "Verify every file of an index bundle (checksums, structure, postings, positions)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the IndexDocumentBundle folder")

    def handle(self, *args: Any, **options: Any) -> None:
        report = verify_bundle(options["path"])
        for name, count in sorted(report.checked.items()):
            self.stdout.write(f"checked {name}: {count}")
        if not report.ok:
            for problem in report.problems:
                self.stderr.write(problem)
            raise CommandError(f"{len(report.problems)} problem(s) in {options['path']}")
        self.stdout.write(self.style.SUCCESS("index is consistent"))
