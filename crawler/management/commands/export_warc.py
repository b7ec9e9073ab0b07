"""``manage.py export_warc CRAWL [--out FILE]``: a crawl's stored pages as a WARC 1.1 file.

CRAWL is the crawl's id or timestamp. Writes FILE (default
``WORK_DIRECTORY/warc/<name>-<timestamp>.warc.gz``), its CDXJ index ``FILE.cdxj`` and a report
``FILE.json`` (``crawler.warc_export``, ``crawler.core.archive.export``), then prints what it
wrote: pages and redirects, the pages left out because they were stored without a cached copy
(NOARCHIVE, or "cache whole crawled pages" off), sizes and MB/s.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from crawler.core.archive.skipped import LABELS
from crawler.warc_export import ExportError, crawl_export_warc, crawl_find


class Command(BaseCommand):
    help = "Export a crawl's stored pages to a WARC 1.1 file (with a CDXJ index beside it)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("crawl", help="the crawl's id or timestamp")
        parser.add_argument("--out", default="", help="the WARC file to write (.warc.gz)")

    def handle(self, *args, **options) -> None:
        try:
            crawl = crawl_find(options["crawl"])
            report = crawl_export_warc(crawl.pk, options["out"] or None)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        mb = report.payload_bytes / 2 ** 20
        rate = mb / report.seconds if report.seconds else 0.0
        self.stdout.write(
            f"Crawl {crawl.name!r} ({crawl.timestamp}): {report.pages} pages and "
            f"{report.redirects} redirects written to {report.path} "
            f"({report.file_bytes / 2 ** 20:.1f} MB; {mb:.1f} MB of pages in "
            f"{report.seconds:.1f}s, {rate:.1f} MB/s).\nCDXJ index: {report.cdxj}")
        self.stdout.write(f"Left out: {report.left_out_total} stored pages.")
        for reason, count in sorted(report.left_out.items()):
            self.stdout.write(f"  {count}: {LABELS.get(reason, reason)}")
