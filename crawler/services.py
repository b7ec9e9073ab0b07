"""Writes of crawl management: the only code that changes a crawl's state.

Layer: Django glue. Each service runs in one transaction, locks the rows it changes, and enforces
the state machine of ``crawler.core.definition.crawl``; the admin's actions and buttons, the commands and the
crawl processes all call these. What others do as a crawl starts, ends or is replaced (its link
analysis, the search-index choice) is theirs: the services send the signals of
:mod:`crawler.signals` and import none of the receivers. Reads come from ``crawler.selectors``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from classifiers.services import classifier_uses_copy
from crawler.core.archive import skipped as archive_skipped
from crawler.core.definition.crawl import ENDED_STATES, CrawlStatus, InvalidTransition, next_status
from crawler.core.definition.seeds import SeedUrlError, parse_seed_lines
from crawler.core.processing.builtin_scrapers import builtin_scraper
from crawler.core.queue_server import robots_failures
from crawler.core.transport import fetch_error_kinds
from indexer.core.policies import CrawlPolicy
from indexer.core.runtime.workdir import crawl_bundles
from indexer.core.shard_token import registration_signature

from . import signals
from .models import Crawl, CrawlSample, Fetcher, PageOptions, QueueServer, Scraper, SeedSite
from .selectors import live_queue_servers, page_options_snapshot
from .validators import archive_path_errors

logger = logging.getLogger(__name__)

class CrawlServiceError(Exception):
    """A crawl operation that cannot be done; the message says why, for the admin."""


@dataclass(frozen=True, slots=True)
class SeedBulkResult:
    added: tuple[str, ...]
    already_present: tuple[str, ...]
    repeated_in_input: tuple[str, ...]


def page_options_default_get() -> PageOptions:
    """The default Page Options profile, created with the seed's defaults if missing."""
    options = PageOptions.objects.filter(is_default=True).first()
    if options is None:
        options, _ = PageOptions.objects.get_or_create(
            name="Default", defaults={"is_default": True}
        )
        if not options.is_default:
            PageOptions.objects.filter(pk=options.pk).update(is_default=True)
            options.is_default = True
    return options


def _locked(crawl_id: int) -> Crawl:
    try:
        return Crawl.objects.select_for_update().get(pk=crawl_id)
    except Crawl.DoesNotExist:
        raise CrawlServiceError(f"crawl {crawl_id} does not exist") from None


def _transition(crawl: Crawl, action: str) -> CrawlStatus:
    try:
        return next_status(crawl.status, action)
    except InvalidTransition as exc:
        raise CrawlServiceError(str(exc)) from None


def active_crawls_limit() -> int:
    """How many crawls may be active at once (``MAX_ACTIVE_CRAWLS``, at least 1)."""
    return max(1, int(settings.MAX_ACTIVE_CRAWLS))


def _activate(crawl: Crawl) -> None:
    """Give ``crawl`` the lowest free channel (``Crawl.channel``); refused, naming the active
    crawls, when all ``MAX_ACTIVE_CRAWLS`` channels are taken. Two starts at the same moment
    that pick the same channel are told apart by the column's unique constraint
    (:func:`_save_active`)."""
    others = list(Crawl.objects.filter(channel__isnull=False).exclude(pk=crawl.pk)
                  .order_by("channel").only("name", "status", "channel"))
    limit = active_crawls_limit()
    taken = {other.channel for other in others}
    free = [channel for channel in range(limit) if channel not in taken]
    if not free:
        names = ", ".join(f"{other.name!r} ({other.status})" for other in others)
        raise CrawlServiceError(
            f"{len(others)} crawls are active ({names}), the most that may run at once "
            f"(MAX_ACTIVE_CRAWLS = {limit}): stop one first")
    crawl.channel = free[0]


def _save_active(crawl: Crawl, fields: list[str]) -> None:
    try:
        with transaction.atomic():
            crawl.save(update_fields=fields)
    except IntegrityError:
        raise CrawlServiceError("another crawl was started on the same channel at the same "
                                "moment: try again") from None


def _check_source(crawl: Crawl) -> None:
    """Refuse to start a crawl that has nothing to read: a web crawl without seed sites, an
    archive crawl whose WARC path holds no WARC file, or whose earlier crawl has not ended
    or left no stored pages on this machine."""
    if crawl.source == Crawl.Source.WEB:
        if not crawl.seeds.exists():
            raise CrawlServiceError(f"crawl {crawl.name!r} has no seed sites: add at least one")
    elif crawl.source == Crawl.Source.WARC:
        error = archive_path_errors(crawl.archive_path)
        if error:
            raise CrawlServiceError(f"crawl {crawl.name!r}: {error}")
    else:
        source = crawl.archive_of
        if source is None or source.pk == crawl.pk:
            raise CrawlServiceError(f"crawl {crawl.name!r}: choose the earlier crawl to index")
        if source.status not in ENDED_STATES:
            raise CrawlServiceError(f"crawl {source.name!r} is {source.status}: an archive "
                                    "crawl reads a crawl that has ended")
        if not crawl_bundles(settings.WORK_DIRECTORY, source.timestamp):
            raise CrawlServiceError(f"crawl {source.name!r} has no stored pages under "
                                    f"{settings.WORK_DIRECTORY}")


@transaction.atomic
def crawl_start(crawl_id: int) -> Crawl:
    """Start a new crawl: copy its Page Options and mark it running.

    Refused when the crawl is not new, has nothing to read (a web crawl without seed sites,
    an archive crawl without its source: :func:`_check_source`), or ``MAX_ACTIVE_CRAWLS``
    crawls are active already (each other active crawl goes on: :func:`_activate`).
    """
    crawl = _locked(crawl_id)
    status = _transition(crawl, "start")
    _check_source(crawl)
    _activate(crawl)
    signals.crawl_starting.send(sender=Crawl, crawl=crawl)
    crawl.status = status
    crawl.page_options_snapshot = page_options_snapshot(crawl.page_options)
    crawl.started_at = timezone.now()
    crawl.stopped_at = None
    crawl.end_reason = ""
    _save_active(crawl, ["status", "channel", "page_options_snapshot", "started_at",
                         "stopped_at", "end_reason"])
    logger.info("crawl started crawl=%s timestamp=%s", crawl.pk, crawl.timestamp)
    return crawl


def _analyse_after_commit(crawl_id: int, reason: str) -> None:
    """The crawl has ended (its documents are all on disk once this transaction commits):
    its link analysis is asked for then (the receiver, ``crawler.link_analysis``, registers
    the request after the commit; it never raises)."""
    signals.crawl_documents_complete.send(sender=Crawl, crawl_id=crawl_id, reason=reason)


@transaction.atomic
def crawl_stop(crawl_id: int, analyse: bool = True) -> Crawl:
    """Ask a running crawl to stop. Its queue servers save their queues, then it is resumable.

    With no live queue server there is nothing to save, so the crawl is resumable at once
    (and its link analysis is asked for, unless ``analyse`` is False: the caller runs it).
    """
    crawl = _locked(crawl_id)
    crawl.status = _transition(crawl, "stop")
    crawl.stopped_at = timezone.now()
    if not live_queue_servers():
        crawl.status = next_status(crawl.status, "saved")
        crawl.channel = None
        if analyse:
            _analyse_after_commit(crawl.pk, "crawl stopped")
    crawl.save(update_fields=["status", "stopped_at", "channel"])
    if crawl.channel is None:
        signals.crawl_ended.send(sender=Crawl, crawl=crawl)
    logger.info("crawl stopping crawl=%s status=%s", crawl.pk, crawl.status)
    return crawl


@transaction.atomic
def crawl_mark_saved(crawl_id: int) -> Crawl:
    """Queue servers have written the stopping crawl's queues to disk: it is now resumable,
    and its link analysis is asked for."""
    crawl = _locked(crawl_id)
    crawl.status = _transition(crawl, "saved")
    crawl.channel = None
    crawl.save(update_fields=["status", "channel"])
    signals.crawl_ended.send(sender=Crawl, crawl=crawl)
    _analyse_after_commit(crawl.pk, "crawl stopped")
    return crawl


@transaction.atomic
def crawl_finish(crawl_id: int, analyse: bool = True) -> Crawl:
    """A running crawl ended by itself (page limit reached, nothing left to fetch); its link
    analysis is asked for, unless ``analyse`` is False (the caller runs it). A crawl that
    ends with nothing indexed because its robots.txt fetches (or its pages) failed says so in
    ``end_reason`` (from the counters the queue servers reported last), and so does one that
    reached its page limit with urls still queued (:func:`page_limit_reason`)."""
    crawl = _locked(crawl_id)
    crawl.status = _transition(crawl, "finish")
    crawl.channel = None
    crawl.stopped_at = timezone.now()
    crawl.end_reason = (robots_failures.end_reason(crawl.documents_indexed, crawl.robots_failures)
                        or fetch_error_kinds.end_reason(crawl.documents_indexed,
                                                        crawl.pages_fetched,
                                                        crawl.fetch_error_kinds)
                        or archive_skipped.end_reason(crawl.documents_indexed,
                                                      crawl.archive_skipped)
                        or page_limit_reason(crawl))
    crawl.save(update_fields=["status", "channel", "stopped_at", "end_reason"])
    if crawl.end_reason:
        logger.warning("crawl finished crawl=%s: %s", crawl.pk, crawl.end_reason)
    if crawl.repeat_of_id is not None:
        _repeat_replaces(crawl)
    signals.crawl_ended.send(sender=Crawl, crawl=crawl)
    if analyse:
        _analyse_after_commit(crawl.pk, "crawl finished")
    return crawl


def crawl_repeats_due(day_seconds: float, now=None) -> list[int]:
    """Crawls due to start over (``recrawl_days``, a day being ``day_seconds`` long): ended
    by themselves (stopped), started at least ``recrawl_days`` days ago, not repeated yet
    and not replaced; the oldest first."""
    now = now or timezone.now()
    rows = (Crawl.objects.filter(status=CrawlStatus.STOPPED, recrawl_days__gt=0,
                                 started_at__isnull=False, replaced_at__isnull=True,
                                 repeats__isnull=True)
            .order_by("started_at").only("pk", "started_at", "recrawl_days"))
    return [c.pk for c in rows
            if c.started_at + timedelta(seconds=c.recrawl_days * day_seconds) <= now]


@transaction.atomic
def crawl_repeat(crawl_id: int) -> Crawl:
    """Start crawl ``crawl_id`` over (its ``recrawl_days``; Yioop's repeating crawl and its
    double index): a new crawl with its name, parameters, Page Options profile and seeds,
    marked as its repeat, starts and builds a new index, while search keeps answering from
    the crawl's complete one. When the repeat ends by itself with documents,
    :func:`crawl_finish` puts it in the crawl's place in one transaction
    (:func:`_repeat_replaces`); a repeat stopped half-way replaces nothing. Refused when the
    crawl has not ended by itself, was repeated already, or every channel is taken
    (``MAX_ACTIVE_CRAWLS``)."""
    source = _locked(crawl_id)
    if source.status != CrawlStatus.STOPPED:
        raise CrawlServiceError(f"crawl {source.name!r} is {source.status}: only a crawl that "
                                "ended by itself starts over")
    if source.repeats.exists() or source.replaced_at is not None:
        raise CrawlServiceError(f"crawl {source.name!r} was repeated already")
    signals.crawl_repeating.send(sender=Crawl, crawl=source)
    values = _editable_values(source, {"name", "description"})
    repeat = Crawl.objects.create(name=source.name, repeat_of=source, description=(
        f"Repeat of crawl {source.timestamp} (every {source.recrawl_days} days)."), **values)
    SeedSite.objects.bulk_create([
        SeedSite(crawl=repeat, url=s.url, policy=s.policy, trust_weight=s.trust_weight)
        for s in source.seeds.all()])
    crawl_start(repeat.pk)
    repeat.refresh_from_db()
    logger.info("crawl %s starts over as crawl %s (timestamp %s)", source.pk, repeat.pk,
                repeat.timestamp)
    return repeat


def _repeat_replaces(repeat: Crawl) -> None:
    """The repeat ended by itself: with documents, it takes the repeated crawl's place
    wherever search reads that crawl (``signals.crawl_replaced``: the index chosen for search,
    crawl mixes), in the
    finishing transaction, and the repeated crawl is closed and marked replaced (its files
    are removed later, ``crawler.machines.repeats``); without documents nothing changes."""
    old = Crawl.objects.select_for_update().filter(pk=repeat.repeat_of_id).first()
    if old is None or old.replaced_at is not None:
        return
    if repeat.documents_indexed <= 0:
        logger.warning("repeat crawl %s ended without documents: crawl %s stays searched",
                       repeat.pk, old.pk)
        return
    signals.crawl_replaced.send(sender=Crawl, old=old, repeat=repeat)
    old.replaced_at = timezone.now()
    if old.status == CrawlStatus.STOPPED:
        old.status = next_status(old.status, "close")
    old.save(update_fields=["replaced_at", "status"])
    logger.info("crawl %s (timestamp %s) replaces crawl %s (timestamp %s) in search",
                repeat.pk, repeat.timestamp, old.pk, old.timestamp)


@transaction.atomic
def crawl_resume(crawl_id: int) -> Crawl:
    """Resume a stopped, resumable crawl from its saved queues, with its original options."""
    crawl = _locked(crawl_id)
    status = _transition(crawl, "resume")
    if crawl.source == Crawl.Source.WARC:  # ARCHIVE_ROOTS may have changed since it started
        error = archive_path_errors(crawl.archive_path)
        if error:
            raise CrawlServiceError(f"crawl {crawl.name!r}: {error}")
    _activate(crawl)
    crawl.status = status
    crawl.stopped_at = None
    crawl.end_reason = ""
    _save_active(crawl, ["status", "channel", "stopped_at", "end_reason"])
    logger.info("crawl resumed crawl=%s", crawl.pk)
    return crawl


PAGE_LIMIT_REACHED = "page limit reached"
NEW_CRAWL_MAX_PAGES = 10_000  # the page limit the admin's new-crawl form starts with


def crawl_open_ended(crawl: Crawl) -> bool:
    """A web crawl neither restricted to its seed and allowed sites nor limited in pages: on
    a real network it follows links anywhere, without end (its Start asks to confirm)."""
    return crawl.source == Crawl.Source.WEB and not crawl.restrict_to_seeds and \
        not crawl.max_pages


def page_limit_reason(crawl: Crawl) -> str:
    """Why a web crawl that ended by itself with urls still queued ended: its page limit
    (its queue servers stop handing urls out once ``max_pages`` are scheduled, and only then
    settle with urls queued), with how many are left and what to do; "" otherwise."""
    if crawl.source != Crawl.Source.WEB or not crawl.max_pages or crawl.urls_queued <= 0:
        return ""
    return (f"{PAGE_LIMIT_REACHED} ({crawl.max_pages} pages); {crawl.urls_queued} urls left; "
            "raise the limit and resume")


@transaction.atomic
def crawl_raise_limit(crawl_id: int, max_pages: int) -> Crawl:
    """Raise the page limit of a crawl that ended at it (:func:`page_limit_reason`) to
    ``max_pages`` (0: no limit) and run it again from its saved queues: its queue servers
    reopen them with the new limit (a queue's limits may change, its order not). Refused
    for a crawl that did not end at its page limit, a limit not above the old one, or while
    every channel is taken (``MAX_ACTIVE_CRAWLS``)."""
    crawl = _locked(crawl_id)
    if crawl.status != CrawlStatus.STOPPED or not crawl.end_reason.startswith(
            PAGE_LIMIT_REACHED):
        raise CrawlServiceError(f"crawl {crawl.name!r} did not end at its page limit: "
                                "nothing to resume")
    if crawl.replaced_at is not None or crawl.repeats.exists():
        raise CrawlServiceError(f"crawl {crawl.name!r} was repeated: resume the repeat")
    if max_pages != 0 and max_pages <= crawl.max_pages:
        raise CrawlServiceError(f"the new page limit must be above {crawl.max_pages} "
                                "(or 0 for no limit)")
    _activate(crawl)
    crawl.max_pages = max_pages
    crawl.status = CrawlStatus.RUNNING
    crawl.stopped_at = None
    crawl.end_reason = ""
    _save_active(crawl, ["max_pages", "status", "channel", "stopped_at", "end_reason"])
    logger.info("crawl resumed with page limit %s crawl=%s", max_pages or "none", crawl.pk)
    return crawl


@transaction.atomic
def crawl_close(crawl_id: int) -> Crawl:
    """Close a crawl for good: its index stays searchable, it can no longer be resumed."""
    crawl = _locked(crawl_id)
    crawl.status = _transition(crawl, "close")
    crawl.save(update_fields=["status"])
    return crawl


@transaction.atomic
def seed_sites_add_bulk(
    crawl_id: int,
    text: str,
    policy: str = CrawlPolicy.DEFAULT.value,
    trust_weight: float = 1.0,
) -> SeedBulkResult:
    """Add one seed per line of ``text``; all or nothing.

    A bad line raises :class:`CrawlServiceError` naming it, and nothing is added.
    """
    crawl = _locked(crawl_id)
    if crawl.status == CrawlStatus.CLOSED:
        raise CrawlServiceError("a closed crawl takes no new seeds")
    CrawlPolicy(policy)
    if not 0.0 <= trust_weight <= 100.0:
        raise CrawlServiceError("trust weight must be between 0 and 100")
    try:
        parsed = parse_seed_lines(text)
    except SeedUrlError as exc:
        raise CrawlServiceError(f"Bad seed url on {exc}") from None
    if not parsed.urls:
        raise CrawlServiceError("no seed urls given")
    existing = set(
        SeedSite.objects.filter(crawl=crawl, url__in=parsed.urls).values_list("url", flat=True)
    )
    new = [u for u in parsed.urls if u not in existing]
    SeedSite.objects.bulk_create(
        [SeedSite(crawl=crawl, url=u, policy=policy, trust_weight=trust_weight) for u in new]
    )
    return SeedBulkResult(tuple(new), tuple(u for u in parsed.urls if u in existing),
                          parsed.duplicates)


@transaction.atomic
def queue_server_heartbeat(server_id: int, base_url: str, counters: dict | None = None) -> None:
    """Record that queue server ``server_id`` is alive (called by the queue server itself),
    at ``base_url`` signed with the registration key derived from the shared token (what
    :func:`crawler.selectors.registered_queue_servers` checks before a search sends the shard
    token there)."""
    signature = registration_signature(str(settings.QUEUE_SERVER_TOKEN), server_id, base_url)
    QueueServer.objects.update_or_create(
        server_id=server_id,
        defaults={"base_url": base_url, "registration": signature,
                  "state": QueueServer.State.UP, "last_heartbeat": timezone.now(),
                  "counters": counters or {}},
    )


# a fetcher row not heard from for this long is deleted (the Machines page shows it as gone
# after three missed heartbeats, then forgets it)
FETCHER_ROWS_KEPT = timedelta(minutes=10)


def fetcher_heartbeat(name: str, host: str, pid: int, state: str, *, schedule: str = "",
                      pages: int = 0, finished_schedule: bool = False,
                      rate: float | None = None) -> None:
    """Record that fetcher process ``name`` is alive, ``state`` (idle, fetching or stopped),
    with the schedule it runs and its pages per second (``rate``) when given (its heartbeat
    thread, ``crawler.machines.presence``, and the fetch task); rows of processes silent for
    FETCHER_ROWS_KEPT are deleted."""
    now = timezone.now()
    fetcher, _ = Fetcher.objects.get_or_create(
        name=name, defaults={"host": host, "pid": pid, "last_heartbeat": now})
    fetcher.state = state
    fetcher.last_heartbeat = now
    if schedule:
        fetcher.last_schedule = schedule
    if rate is not None:
        fetcher.pages_per_second = rate
    update = ["state", "last_heartbeat", "last_schedule", "pages_per_second"]
    if finished_schedule:
        fetcher.schedules_done += 1
        fetcher.pages_fetched += pages
        update += ["schedules_done", "pages_fetched"]
    fetcher.save(update_fields=update)
    Fetcher.objects.filter(last_heartbeat__lt=now - FETCHER_ROWS_KEPT).delete()


SAMPLE_EVERY = timedelta(seconds=5)
SAMPLES_KEPT = 2000


def crawl_sample_record(crawl_id: int) -> None:
    """Keep a time series of a crawl's counters (at most one sample per SAMPLE_EVERY)."""
    now = timezone.now()
    last = CrawlSample.objects.filter(crawl_id=crawl_id).order_by("-at").first()
    if last is not None and now - last.at < SAMPLE_EVERY:
        return
    crawl = Crawl.objects.filter(pk=crawl_id).only(
        "pages_fetched", "documents_indexed", "fetch_errors").first()
    if crawl is None:
        return
    CrawlSample.objects.create(crawl_id=crawl_id, at=now, pages_fetched=crawl.pages_fetched,
                               documents_indexed=crawl.documents_indexed,
                               fetch_errors=crawl.fetch_errors)
    stale = CrawlSample.objects.filter(crawl_id=crawl_id).order_by("-at")[SAMPLES_KEPT:]
    CrawlSample.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()


def _copy_name(model, name: str, max_length: int) -> str:
    """``name (copy)``, ``name (copy 2)``... the first not taken by a row of ``model``."""
    n = 1
    while True:
        suffix = " (copy)" if n == 1 else f" (copy {n})"
        candidate = name[:max_length - len(suffix)] + suffix
        if not model.objects.filter(name=candidate).exists():
            return candidate
        n += 1


def _editable_values(row, skip: set[str]) -> dict:
    return {f.name: getattr(row, f.name) for f in row._meta.concrete_fields
            if f.editable and not f.primary_key and f.name not in skip}


@transaction.atomic
def crawl_copy(crawl_id: int) -> Crawl:
    """A new crawl with ``crawl_id``'s parameters, sites, Page Options profile and seeds
    (policies and trust weights included), ready to start."""
    source = Crawl.objects.filter(pk=crawl_id).first()
    if source is None:
        raise CrawlServiceError(f"crawl {crawl_id} does not exist")
    values = _editable_values(source, {"name"})
    copy = Crawl.objects.create(name=_copy_name(Crawl, source.name, 200), **values)
    SeedSite.objects.bulk_create([
        SeedSite(crawl=copy, url=s.url, policy=s.policy, trust_weight=s.trust_weight)
        for s in source.seeds.all()])
    logger.info("crawl %s copied to crawl %s", source.pk, copy.pk)
    return copy


@transaction.atomic
def crawl_archive_new(crawl_id: int) -> Crawl:
    """A new archive crawl of crawl ``crawl_id``'s stored pages, ready to start: its
    parameters, Page Options profile (as it is now: editing it before the start is how new
    options are tried on the same pages) and seeds (they give link analysis its trust)."""
    source = Crawl.objects.filter(pk=crawl_id).first()
    if source is None:
        raise CrawlServiceError(f"crawl {crawl_id} does not exist")
    values = _editable_values(source, {"name", "source", "archive_path", "archive_of"})
    archive = Crawl.objects.create(name=f"{source.name[:190]} (archive)", source=Crawl.Source.CRAWL, archive_of=source,
                                   **values)
    SeedSite.objects.bulk_create([
        SeedSite(crawl=archive, url=s.url, policy=s.policy, trust_weight=s.trust_weight)
        for s in source.seeds.all()])
    logger.info("archive crawl %s of crawl %s created", archive.pk, source.pk)
    return archive


@transaction.atomic
def page_options_copy(options_id: int) -> PageOptions:
    """A new Page Options profile with every value, scraper and classifier use of
    ``options_id`` (not the default one)."""
    source = PageOptions.objects.filter(pk=options_id).first()
    if source is None:
        raise CrawlServiceError(f"Page Options {options_id} do not exist")
    values = _editable_values(source, {"name", "is_default"})
    copy = PageOptions.objects.create(name=_copy_name(PageOptions, source.name, 100),
                                      is_default=False, **values)
    copy.scrapers.set(source.scrapers.all())
    classifier_uses_copy(source.pk, copy.pk)
    return copy


def _pairs_text(pairs: tuple[tuple[str, str], ...]) -> str:
    """``(NAME, xpath or ':=literal')`` pairs as the admin writes them, one per line."""
    return "\n".join(f"{name}{value}" if value.startswith(":=") else f"{name}={value}"
                     for name, value in pairs)


@transaction.atomic
def scraper_from_builtin(name: str) -> Scraper:
    """A new admin scraper with every field of the built-in scraper ``name``
    (``crawler.core.processing.builtin_scrapers``), under the same name: chosen in a profile, it replaces
    the built-in one there, and the admin can then change it."""
    builtin = builtin_scraper(name)
    if builtin is None:
        raise CrawlServiceError(f"there is no built-in scraper named {name!r}")
    if Scraper.objects.filter(name__iexact=builtin.name).exists():
        raise CrawlServiceError(f"a scraper named {builtin.name} exists already")
    scraper = Scraper(
        name=builtin.name, signature=builtin.signature, priority=builtin.priority,
        text_path=builtin.text_path, delete_paths="\n".join(builtin.delete_paths),
        extract_fields=_pairs_text(builtin.extract_fields),
        meta_words=_pairs_text(builtin.meta_words))
    scraper.full_clean()
    scraper.save()
    logger.info("scraper %s copied from the built-in one", scraper.name)
    return scraper
