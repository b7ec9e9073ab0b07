"""Link analysis run by the engine itself: when a crawl stops or finishes, every
LINK_ANALYSIS_EVERY_PAGES pages during a crawl, and from the admin's "Run link analysis now".

Layer: Django glue around :func:`linkgraph.core.analysis.run_link_analysis` (seed 002,
"Nutch's new scoring and indexing framework": WebGraph, Loops, LinkRank, ScoreUpdater). The
only writer of :class:`linkgraph.models.LinkAnalysis`.

What a run reads of the crawl (its pages fetched, timestamp, seed sites and live queue servers)
comes in as plain values through a :class:`CrawlFacts` that the caller passes: the crawler
owns crawls and calls these services (``crawler.link_analysis``); this app never imports it.
Who runs it: the crawler's Celery task on the queue ``analysis``, consumed by the worker
``manage.py up`` starts beside the queue servers; ``manage.py crawl`` calls
:func:`link_analysis_run` in its own process at the end.

One run of a crawl at a time, and no request lost: every change of ``LinkAnalysis.state`` is
one conditional UPDATE (compare and set, atomic on SQLite and PostgreSQL alike):

* a request turns ``idle`` into ``queued`` and sends the task; finding ``queued`` it does
  nothing (the queued run has not read anything yet); finding ``running`` it sets ``rerun``;
* a run claims ``idle``/``queued`` (or a ``running`` whose heartbeat is older than
  LINK_ANALYSIS_STALE_SECONDS: its worker died) as ``running`` under a new run number, and
  every later write of that run is conditional on the number, so a run presumed dead cannot
  overwrite its successor;
* at the end, ``running`` without ``rerun`` becomes ``idle``; with ``rerun`` it becomes
  ``queued`` and one follow-up is sent, however many requests came in meanwhile.

A failure of any kind is recorded (outcome, message) and shown in the admin; the task never
raises, is acknowledged on receipt and never retried, so a run that cannot succeed (or kills
its worker) cannot loop: the next request (crawl end, N more pages, the button) tries again.

Shards (:func:`shard_sources`): a queue server's bundle under this machine's WORK_DIRECTORY is
read directly; a live queue server whose bundle is elsewhere is read over HTTP at its
registered ``base_url`` and is sent the scores file afterwards
(:class:`linkgraph.core.remote.RemoteShard`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Protocol

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from indexer.core.runtime.workdir import crawl_bundles, queue_server_number
from indexer.core.shard_token import shard_bearer
from linkgraph.core.analysis import (
    AnalysisConfig,
    AnalysisReport,
    LocalShardSource,
    ShardSource,
    run_link_analysis,
)
from linkgraph.core.loops import LoopsConfig
from linkgraph.core.remote import RemoteShard
from linkgraph.core.trust import TrustConfig, TrustSeed

from .models import LinkAnalysis

logger = logging.getLogger(__name__)

Enqueue = Callable[[int], None]
PROGRESS_EVERY = 1.0  # seconds between two progress writes of a run


class CrawlFacts(Protocol):
    """What link analysis reads of a crawl, from the app that owns crawls (the crawler's
    ``crawler.link_analysis.CrawlerFacts``). Plain values only."""

    def pages_fetched(self, crawl_id: int) -> int | None:
        """The crawl's pages fetched so far; None when there is no such crawl."""

    def timestamp(self, crawl_id: int) -> int | None:
        """The crawl's timestamp; None when there is no such crawl."""

    def seeds(self, timestamp: int) -> list[TrustSeed]:
        """The seed sites of crawl ``timestamp`` as trust seeds (none for an unknown crawl)."""

    def live_shards(self) -> dict[int, str]:
        """Queue server number -> base url, for every live queue server that has one."""

    def policy_within_domain(self, timestamp: int) -> bool:
        """Whether crawl ``timestamp``'s seed policies stay in their registered domain (False
        for an unknown crawl)."""

    def url_filter(self, timestamp: int) -> Callable[[str], bool] | None:
        """Whether crawl ``timestamp``'s own url rules (its site rules) let it fetch a url;
        None for an unknown crawl."""


def analysis_config(within_domain: bool = False) -> AnalysisConfig:
    """The engine's analysis: Loops unless ``LINK_ANALYSIS_LOOPS`` is off; trust kept inside
    registered domains when the crawl says its seed policies stay there."""
    return AnalysisConfig(loops=LoopsConfig() if settings.LINK_ANALYSIS_LOOPS else None,
                          trust=TrustConfig(within_domain=within_domain))


def shard_sources(timestamp: int,
                  live: Mapping[int, str]) -> tuple[list[ShardSource], list[dict]]:
    """Where each queue server's documents of crawl ``timestamp`` are read from (``live``: the
    base url of each live queue server), and a note for each queue server left out (no bundle
    here, and not live to be asked)."""
    work = settings.WORK_DIRECTORY
    local = {queue_server_number(path.parent.name): path
             for path in crawl_bundles(work, timestamp)}
    sources: list[ShardSource] = []
    skipped: list[dict] = []
    for server in sorted(set(range(settings.NUM_QUEUE_SERVERS)) | set(local)):
        if server in local:
            sources.append(LocalShardSource(server, local[server]))
        elif server in live:
            sources.append(RemoteShard(server, live[server],
                                       shard_bearer(str(settings.QUEUE_SERVER_TOKEN)),
                                       timestamp))
        else:
            skipped.append({"server": server, "location": "",
                            "note": "no bundle on this machine and not live: left out"})
    return sources, skipped


def _row(crawl_id: int) -> LinkAnalysis:
    row, _ = LinkAnalysis.objects.get_or_create(crawl_id=crawl_id)
    return row


def link_analysis_request(crawl_id: int, reason: str, facts: CrawlFacts,
                          enqueue: Enqueue) -> str:
    """Ask for a run of crawl ``crawl_id``'s link analysis; ``enqueue(crawl_id)`` sends the
    run. Never raises for a broker that is down (recorded as a failed outcome instead).
    Returns what happened: ``queued``, ``coalesced`` (a queued run will see the new pages),
    ``follow-up`` (after the running one), ``failed`` (the task could not be sent) or
    ``no crawl``."""
    pages = facts.pages_fetched(crawl_id)
    if pages is None:
        return "no crawl"
    pk = _row(crawl_id).pk
    rows = LinkAnalysis.objects.filter(pk=pk)
    now = timezone.now()
    stale = now - timedelta(seconds=settings.LINK_ANALYSIS_STALE_SECONDS)
    mark = {"pages_at_request": pages or 0}
    for _ in range(3):  # the state may move between two conditional updates: look again
        if rows.filter(Q(state=LinkAnalysis.State.IDLE) | Q(
                state=LinkAnalysis.State.RUNNING, heartbeat_at__lt=stale)).update(
                state=LinkAnalysis.State.QUEUED, reason=reason[:100], requested_at=now,
                **mark):
            return _send(crawl_id, pk, enqueue)
        if rows.filter(state=LinkAnalysis.State.QUEUED).update(**mark):
            return "coalesced"
        if rows.filter(state=LinkAnalysis.State.RUNNING).update(rerun=True, **mark):
            return "follow-up"
    return "coalesced"


def _send(crawl_id: int, pk: int, enqueue: Enqueue) -> str:
    try:
        enqueue(crawl_id)
    except Exception as exc:  # kombu/redis raise many kinds when the broker is down
        LinkAnalysis.objects.filter(pk=pk, state=LinkAnalysis.State.QUEUED).update(
            state=LinkAnalysis.State.IDLE, last_outcome=LinkAnalysis.Outcome.FAILED,
            last_error=f"the link analysis could not be queued: {exc}")
        logger.error("link analysis of crawl=%s not queued: %s", crawl_id, exc)
        return "failed"
    logger.info("link analysis of crawl=%s queued", crawl_id)
    return "queued"


def link_analysis_maybe_periodic(crawl_id: int, facts: CrawlFacts,
                                 enqueue: Enqueue) -> str | None:
    """During a crawl: ask for a run once LINK_ANALYSIS_EVERY_PAGES pages were fetched since
    the last request (0: never). Returns what :func:`link_analysis_request` did, or None."""
    every = int(settings.LINK_ANALYSIS_EVERY_PAGES)
    if every <= 0:
        return None
    pages = facts.pages_fetched(crawl_id)
    if pages is None:
        return None
    if pages - _row(crawl_id).pages_at_request < every:
        return None
    return link_analysis_request(crawl_id, f"{pages} pages fetched", facts, enqueue)


class _ProgressRecorder:
    """Writes a run's stage and counts (and so its heartbeat) at most every PROGRESS_EVERY
    seconds, and at every change of stage."""

    def __init__(self, pk: int, run: int) -> None:
        self.rows = LinkAnalysis.objects.filter(pk=pk, runs=run)
        self.stage = ""
        self.written = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage == self.stage and now - self.written < PROGRESS_EVERY:
            return
        self.stage, self.written = stage, now
        self.rows.update(stage=stage, stage_done=done, stage_total=total,
                         heartbeat_at=timezone.now())


def link_analysis_run(crawl_id: int, facts: CrawlFacts, enqueue: Enqueue | None = None) -> str:
    """Run the crawl's link analysis now, in this process, unless a live run holds it (then
    that run is asked to follow up). Returns ``ok``, ``failed``, ``busy`` or ``no crawl``.

    ``enqueue`` sends the follow-up run when requests came in during this one; None runs the
    follow-ups here, one after the other (``manage.py crawl``, which has no workers).
    """
    while True:
        outcome, again = _run_once(crawl_id, facts, enqueue)
        if not again:
            return outcome


def _claim(pk: int) -> int | None:
    now = timezone.now()
    stale = now - timedelta(seconds=settings.LINK_ANALYSIS_STALE_SECONDS)
    rows = LinkAnalysis.objects.filter(pk=pk)
    claimed = rows.filter(
        Q(state__in=[LinkAnalysis.State.IDLE, LinkAnalysis.State.QUEUED])
        | Q(state=LinkAnalysis.State.RUNNING, heartbeat_at__lt=stale)).update(
        state=LinkAnalysis.State.RUNNING, rerun=False, runs=F("runs") + 1,
        run_started_at=now, heartbeat_at=now, stage="starting", stage_done=0, stage_total=0)
    if not claimed:
        return None
    return rows.values_list("runs", flat=True).get()


def _run_once(crawl_id: int, facts: CrawlFacts,
              enqueue: Enqueue | None) -> tuple[str, bool]:
    timestamp = facts.timestamp(crawl_id)
    if timestamp is None:
        return "no crawl", False
    pk = _row(crawl_id).pk
    run = _claim(pk)
    if run is None:
        LinkAnalysis.objects.filter(pk=pk, state=LinkAnalysis.State.RUNNING).update(rerun=True)
        return "busy", False
    mine = LinkAnalysis.objects.filter(pk=pk, runs=run)
    started = mine.values_list("run_started_at", flat=True).get()
    try:
        sources, skipped = shard_sources(timestamp, facts.live_shards())
        report = run_link_analysis(settings.WORK_DIRECTORY, timestamp, sources,
                                   facts.seeds(timestamp),
                                   analysis_config(facts.policy_within_domain(timestamp)),
                                   _ProgressRecorder(pk, run))
    except Exception as exc:  # recorded and shown: a run must never crash-loop
        logger.exception("link analysis of crawl=%s failed", crawl_id)
        mine.update(last_outcome=LinkAnalysis.Outcome.FAILED, last_error=_message(exc),
                    last_started_at=started, last_finished_at=timezone.now(),
                    last_seconds=(timezone.now() - started).total_seconds())
        outcome = "failed"
    else:
        mine.update(**_recorded(report, skipped), last_started_at=started,
                    last_finished_at=timezone.now())
        outcome = "ok"
    return outcome, _finish(pk, run, crawl_id, enqueue)


def _message(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:2000]


def _recorded(report: AnalysisReport, skipped: list[dict]) -> dict:
    shards = [{"server": s.server, "location": s.location, "documents": s.documents,
               "note": s.published or "shares this machine's work directory"}
              for s in report.shards]
    return {"last_outcome": LinkAnalysis.Outcome.OK, "last_error": "",
            "last_pages": report.pages, "last_urls": report.urls, "last_edges": report.edges,
            "last_seconds": report.seconds,
            "last_shards": sorted(shards + skipped, key=lambda s: s["server"])}


def _finish(pk: int, run: int, crawl_id: int, enqueue: Enqueue | None) -> bool:
    """Release the run; True when a follow-up must run in this process."""
    mine = LinkAnalysis.objects.filter(pk=pk, runs=run, state=LinkAnalysis.State.RUNNING)
    done = {"stage": "", "stage_done": 0, "stage_total": 0}
    if mine.filter(rerun=False).update(state=LinkAnalysis.State.IDLE, **done):
        return False
    if not mine.filter(rerun=True).update(state=LinkAnalysis.State.QUEUED, rerun=False,
                                          reason="asked for during the last run", **done):
        return False  # presumed dead and taken over: the new run owns the state
    if enqueue is None:
        return True
    _send(crawl_id, pk, enqueue)
    return False
