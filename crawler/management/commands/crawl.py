"""``manage.py crawl URL... [--max-pages N] [--order ...]``: a whole crawl in this process.

``manage.py crawl --resume CRAWL [--max-pages N]`` goes on with an earlier crawl: one that
was stopped, or one that ended at its page limit ("page limit reached; N urls left"), its
limit raised to N.

``manage.py crawl --warc PATH [URL...]`` and ``manage.py crawl --archive-of CRAWL`` make it an
archive crawl (``crawler.core.archive``): the pages of a WARC file or folder of them, or an
earlier crawl's stored pages (``CRAWL``: its id, timestamp or name), indexed again, nothing
downloaded: a WARC with the default Page Options profile, an earlier crawl with its own
parameters and profile as they are now (as the admin's "New archive crawl" makes it; only
``--name`` and ``--max-pages`` change them). Seed urls are optional then: they only give link
analysis its trust (an archive of a crawl takes that crawl's seeds).

For first-time users and scripts: no broker and no other process is needed. The crawl is created
in the database like one made in the admin (so it shows there, and the search page finds its
index), run to the end with a progress bar, and summarised. Its link analysis (web graph,
Loops, LinkRank, trust, scores: ``linkgraph.services``) then runs in this process, as the
engine's ``analysis`` worker runs it after a crawl; ``--no-link-analysis`` skips it.

SIGINT (Ctrl-C) or SIGTERM stops the crawl the way the admin's Stop does: its queues and index
are saved and it is left resumable. After SIGTERM the command then exits without the link
analysis (a service manager that sends SIGTERM waits only so long).
"""

from __future__ import annotations

import signal
import sys
import threading

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from crawler import services
from crawler.core.archive import skipped as archive_skipped
from crawler.core.definition.crawl import CrawlOrder, CrawlStatus
from crawler.core.definition.schedules import LOCAL_SCHEDULE_SIZE
from crawler.core.local_crawl import LocalCrawl, LocalCrawlProgress, LocalCrawlResult
from crawler.core.memory import limit_malloc_arenas
from crawler.core.queue_server import robots_failures
from crawler.core.queue_server.freshness import merge_reports
from crawler.core.transport import fetch_error_kinds
from crawler.hosts.activity import activity_flush
from crawler.link_analysis import link_analysis_run
from crawler.machines.fetching import fetch_config_for, processor_for
from crawler.models import Crawl
from crawler.selectors import crawl_config_get
from linkgraph.models import LinkAnalysis


class Command(BaseCommand):
    help = "Crawl from the given urls to the end, in this process, and index what is found."

    def add_arguments(self, parser) -> None:
        parser.add_argument("urls", nargs="*", help="seed urls (optional for an archive crawl)")
        archive = parser.add_mutually_exclusive_group()
        archive.add_argument("--warc", default="", metavar="PATH",
                             help="archive crawl of this WARC file or folder of WARC files")
        archive.add_argument("--archive-of", default="", metavar="CRAWL",
                             help="archive crawl of an earlier crawl (id, timestamp or name)")
        archive.add_argument("--resume", default="", metavar="CRAWL",
                             help="go on with an earlier crawl (id, timestamp or name): one "
                                  "stopped (resumable), or one that ended at its page limit, "
                                  "with --max-pages raised")
        parser.add_argument("--name", default="", help="crawl name (default: the first url)")
        parser.add_argument("--max-pages", type=int, default=0, help="0: no limit")
        parser.add_argument("--max-depth", type=int, default=-1, help="-1: no limit")
        parser.add_argument("--order", default=CrawlOrder.HOST_BUDGETING.value,
                            choices=[o.value for o in CrawlOrder])
        parser.add_argument("--fetchers", type=int, default=max(2, settings.NUM_FETCHERS * 4),
                            help="concurrent schedules (threads)")
        parser.add_argument("--queue-servers", type=int, default=settings.NUM_QUEUE_SERVERS)
        parser.add_argument("--processes", type=int, default=None,
                            help="worker processes that process the pages (default: one per "
                                 "core; 1: in the fetcher threads)")
        parser.add_argument("--max-seconds", type=float, default=None)
        parser.add_argument("--restrict", action="store_true",
                            help="stay on the seeds' hosts")
        parser.add_argument("--no-link-analysis", action="store_true",
                            help="do not compute the crawl's link scores at the end")

    def handle(self, *args, **options) -> None:
        if Crawl.objects.filter(channel__isnull=False).exists():
            # the engine's queue servers follow every active crawl: they would take this one's
            # queue and index too, beside this process
            raise CommandError("another crawl is active: manage.py crawl runs alone; stop it "
                               "first, or start this crawl beside it in the admin (manage.py "
                               "up runs several crawls at once)")
        stop = threading.Event()
        # From before the crawl is marked running until its row says how it ended, SIGINT and
        # SIGTERM only ask the crawl to stop; it is then saved like an admin Stop, never left
        # locked as running by a process that is gone.
        with _StopOnSignals(stop) as signals:
            crawl = self._create(options)
            runner, result = self._run(crawl, options, stop)
        crawl.refresh_from_db()
        if signals.received == signal.SIGTERM:  # asked to exit: no long work after the save
            self.stderr.write(f"SIGTERM: the crawl is saved ({crawl.status}); its link "
                              "analysis did not run (the crawl's admin page asks for it).")
        elif not options["no_link_analysis"]:
            self._link_analysis(crawl)
            ordered = runner.order_indexes()  # importance order, phrase lexicons
            self.stdout.write(f"Index ordered by importance: {len(ordered)} partitions.")
        rate = result.pages_fetched / result.elapsed if result.elapsed else 0.0
        self.stdout.write(
            f"\nCrawl {crawl.status}: {result.pages_fetched} pages fetched, "
            f"{result.documents_indexed} documents indexed "
            f"({sum(int(s.get('fetch_errors', 0)) for s in result.stats)} errors) in "
            f"{result.elapsed:.1f}s, {rate:.1f} pages/s.\nIndex: "
            + ", ".join(str(p) for p in result.index_paths))
        skipped = archive_skipped.rows(crawl.archive_skipped)
        if skipped:
            self.stdout.write("Archive records skipped: " + ", ".join(
                f"{row['count']} {row['label']}" for row in skipped))
        if crawl.end_reason:
            self.stdout.write(f"Why: {crawl.end_reason}")

    def _create(self, options: dict) -> Crawl:
        """The crawl's row, started (running)."""
        if options["resume"]:
            return self._resume(_earlier_crawl(options["resume"]), options["max_pages"])
        if not (options["urls"] or options["warc"] or options["archive_of"]):
            raise CommandError("give seed urls, or --warc PATH or --archive-of CRAWL")
        if options["archive_of"]:
            crawl = services.crawl_archive_new(_earlier_crawl(options["archive_of"]).pk)
            crawl.name = options["name"] or crawl.name
            crawl.max_pages = options["max_pages"] or crawl.max_pages
        else:
            warc = options["warc"]
            crawl = Crawl(name=options["name"] or (warc or options["urls"][0])[-200:],
                          source=Crawl.Source.WARC if warc else Crawl.Source.WEB,
                          archive_path=warc, page_options=services.page_options_default_get(),
                          order=options["order"], max_pages=options["max_pages"],
                          max_depth=options["max_depth"], restrict_to_seeds=options["restrict"])
        try:  # the timestamp is left to Crawl.save, which moves it past one made this second
            crawl.full_clean(exclude=["page_options", "timestamp"])
        except ValidationError as exc:
            if crawl.pk is not None:
                crawl.delete()
            raise CommandError("; ".join(exc.messages)) from None
        crawl.save()
        try:
            if options["urls"]:
                services.seed_sites_add_bulk(crawl.pk, "\n".join(options["urls"]))
            services.crawl_start(crawl.pk)
        except services.CrawlServiceError as exc:
            crawl.delete()
            raise CommandError(str(exc)) from None
        return crawl

    @staticmethod
    def _resume(crawl: Crawl, max_pages: int) -> Crawl:
        """``crawl`` running again: a stopped crawl from its saved queues, one that ended at
        its page limit with the limit raised to ``max_pages`` (its end reason says so)."""
        try:
            if crawl.status == CrawlStatus.RESUMABLE:
                return services.crawl_resume(crawl.pk)
            if crawl.status == CrawlStatus.STOPPED:
                return services.crawl_raise_limit(crawl.pk, max_pages)
        except services.CrawlServiceError as exc:
            raise CommandError(str(exc)) from None
        raise CommandError(f"crawl {crawl.name!r} is {crawl.status}: only a stopped crawl, or "
                           "one that ended at its page limit, can be resumed")

    def _run(self, crawl: Crawl, options: dict,
             stop: threading.Event) -> tuple[LocalCrawl, LocalCrawlResult]:
        """Run the started crawl until it ends or ``stop`` is set, save its queues and index,
        and record how it ended: finished (``stopped``) or stopped (``resumable``). A crawl
        that fails is recorded as stopped too (its queue resumes from its journal)."""
        result: LocalCrawlResult | None = None
        try:
            config = crawl_config_get(crawl.pk)
            limit_malloc_arenas()  # before the fetcher threads start (crawler.core.memory)
            runner = LocalCrawl(config, settings.WORK_DIRECTORY, fetch_config_for(config),
                                processor_for(config), num_servers=options["queue_servers"],
                                fetchers=options["fetchers"], schedule_size=LOCAL_SCHEDULE_SIZE,
                                refresh_seconds=settings.INDEX_REFRESH_SECONDS,
                                recrawl_day_seconds=settings.RECRAWL_DAY_SECONDS,
                                processes=options["processes"])
            self.stdout.write(f"Crawl {crawl.name!r} (timestamp {crawl.timestamp}); Ctrl-C or "
                              "SIGTERM stops it, saved so that it can be resumed.")
            self._crawl_runner = (crawl.pk, runner)  # its url and host log, with progress
            try:
                result = runner.run(options["max_seconds"], self._progress, stop)
            finally:
                runner.close()  # the last partitions are finished, so they can be ordered
        finally:
            if result is None:
                services.crawl_stop(crawl.pk, analyse=False)
        Crawl.objects.filter(pk=crawl.pk).update(
            pages_fetched=result.pages_fetched, documents_indexed=result.documents_indexed,
            fetch_errors=sum(int(s.get("fetch_errors", 0)) for s in result.stats),
            urls_seen=sum(int(s.get("seen", 0)) for s in result.stats),
            urls_queued=sum(int(s.get("queued", 0) or 0) for s in result.stats),
            hosts_seen=sum(int(s.get("hosts", 0)) for s in result.stats),
            robots_failures=robots_failures.merge(s.get("robots_failures") for s in result.stats),
            archive_skipped=archive_skipped.merge(s.get("archive_skipped") for s in result.stats),
            fetch_error_kinds=fetch_error_kinds.merge_heartbeats(result.stats),
            freshness=merge_reports(s.get("freshness") for s in result.stats))
        if result.finished:
            services.crawl_finish(crawl.pk, analyse=False)
        else:
            services.crawl_stop(crawl.pk, analyse=False)
        return runner, result

    def _link_analysis(self, crawl: Crawl) -> None:
        self.stdout.write("\nLink analysis (web graph, loops, LinkRank, trust, scores)...")
        outcome = link_analysis_run(crawl.pk)  # follow-ups run here too: no workers
        row = LinkAnalysis.objects.get(crawl=crawl)
        if outcome == "ok":
            self.stdout.write(f"Link analysis done: {row.last_pages} pages, {row.last_urls} "
                              f"urls, {row.last_edges} links in {row.last_seconds:.1f}s.")
        else:  # the crawl itself succeeded: say why, without failing the command
            why = row.last_error or "another run of this crawl is in progress"
            self.stderr.write(f"Link analysis {outcome}: {why}")

    def _progress(self, p: LocalCrawlProgress) -> None:
        crawl_id, runner = self._crawl_runner
        activity_flush(crawl_id, runner.servers)  # the admin's url and host pages
        width = 30
        total = p.pages_fetched + p.queued
        filled = int(width * p.pages_fetched / total) if total else 0
        bar = "#" * filled + "-" * (width - filled)
        rate = p.pages_fetched / p.elapsed if p.elapsed else 0.0
        line = (f"\r[{bar}] {p.pages_fetched} fetched, {p.documents_indexed} indexed, "
                f"{p.queued} queued, {p.fetch_errors} errors, {rate:.1f} pages/s ")
        stream = self.stdout if self.stdout.isatty() else None
        if stream is not None or p.done:
            sys.stdout.write(line)
            sys.stdout.flush()


def _earlier_crawl(key: str) -> Crawl:
    """The crawl named by ``key``: its id, its timestamp or its name (one crawl only)."""
    if key.isdigit():
        found = Crawl.objects.filter(pk=int(key)).first() or Crawl.objects.filter(
            timestamp=int(key)).first()
        if found is not None:
            return found
    named = list(Crawl.objects.filter(name=key)[:2])
    if len(named) == 1:
        return named[0]
    raise CommandError(f"no crawl {key!r}" if not named else
                       f"several crawls are named {key!r}: give its id or timestamp")


class _StopOnSignals:
    """While entered, SIGINT and SIGTERM set ``stop`` instead of ending the process (the first
    one is kept in ``received``); the previous handlers come back on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.received: int | None = None
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, _frame: object) -> None:
        if self.received is None:
            self.received = signum
        self.stop.set()

    def __enter__(self) -> _StopOnSignals:
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *_: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
