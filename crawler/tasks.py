"""Celery tasks of the crawl processes (Celery glue only; the work is in crawler.core).

* ``fetch_schedule_task`` (queue ``fetch``): a fetcher downloads and processes one schedule and
  ships what it found to the owning queue servers.
* ``qs_receive_task`` (queue ``qs.<n>``): queue server n's worker writes a shipped batch to the
  queue server's inbox, fsynced, before the message is acknowledged. A batch it cannot write
  (a full disk) is not taken as done: it is published again and tried 1, 2, 4... seconds
  later, at most INBOX_RETRY_SECONDS apart, for as long as it takes.
* ``machine_ping``: which workers listen where; the foundation's broker round trip.
* ``link_analysis_task`` (queue ``analysis``, its own worker started by ``manage.py up``): one
  run of a crawl's link analysis (:mod:`linkgraph.services`, through
  ``crawler.link_analysis``, which reads the crawl's seeds and live queue servers when the
  run starts). Not on a queue server's ``qs.<n>`` worker: a run takes minutes on a large crawl and would hold up that shard's inbox. It
  carries only a crawl id and is harmless to repeat, so it is not signed; it is acknowledged
  on receipt (not late) because a run that kills its worker must not be delivered again and
  again: the database's run state notices the dead run instead.
* ``news_update_task`` (queue ``fetch``), sent by Celery beat every ``NEWS_TICK_SECONDS``
  (``CELERY_BEAT_SCHEDULE``): the due news sources read and their new items indexed
  (:mod:`crawler.news.updates`). It carries nothing, is harmless to repeat and expires
  after one tick, so ticks that found every fetcher busy do not pile up.
* ``export_warc_task`` (queue ``analysis`` too, for the same reasons): a crawl's WARC export
  (``crawler.warc_export``), asked for by the admin's action.

Schedules and batches are signed envelopes (``crawler.core.transport.shipping``), each with a unique id,
its issue time and its route (queue server and crawl) under the signature. A receiver refuses
and drops one without the shared QUEUE_SERVER_TOKEN, one delivered on a queue its route does
not name, one sealed more than ENVELOPE_MAX_AGE seconds ago, and one whose id was handled
already (a replay: ids live in Redis, :mod:`crawler.machines.seen_envelopes`). An id is recorded only
after its message was handled, so a redelivery after a worker died is still processed; when
Redis cannot tell whether an id was handled, the task is retried later rather than dropped.
"""

from __future__ import annotations

import logging
import os
import socket
import time

from celery import shared_task
from celery.result import AsyncResult
from django.conf import settings

from crawler.core.memory import release_free_heap
from crawler.core.transport.shipping import (
    EnvelopeError,
    Opened,
    ReplayGuard,
    SeenIdsUnavailable,
    open_envelope,
    seal,
)
from crawler.core.transport.spool import Spool
from crawler.link_analysis import link_analysis_run
from crawler.machines.fetching import run_schedule
from crawler.machines.seen_envelopes import replay_guard
from crawler.news.updates import news_update_due
from crawler.sending import EXPORT_WARC_TASK, LINK_ANALYSIS_TASK, send_link_analysis
from crawler.warc_export import ExportError, crawl_export_warc
from indexer.core.runtime.workdir import crawl_paths, queue_server_dir
from indexer.core.shard_token import message_key

logger = logging.getLogger(__name__)


@shared_task(name="crawler.machine_ping", acks_late=True)
def machine_ping(payload: dict) -> dict:
    """Echo ``payload`` with the worker's host, pid and clock (idempotent)."""
    return {"echo": payload, "host": socket.gethostname(), "pid": os.getpid(),
            "time": time.time()}


def inbox_for(server: int, crawl_timestamp: int) -> Spool:
    directory = queue_server_dir(settings.WORK_DIRECTORY, server)
    return Spool(crawl_paths(directory, crawl_timestamp)["inbox"])


FETCH_QUEUE = "fetch"
RETRY_SECONDS = 5.0  # before a message whose id Redis could not check is tried again


def _check_delivery(task, expected_queue: str) -> None:
    """Refuse a message delivered on another queue than the one its signed route names (a
    copy moved to another queue server's queue). Called directly, a task has no delivery."""
    info = task.request.delivery_info or {}
    queue = info.get("routing_key")
    if queue and queue != expected_queue:
        raise EnvelopeError(f"a message for queue {expected_queue} was delivered on {queue}")


def _record_handled(guard: ReplayGuard, opened: Opened) -> None:
    """Record ``opened`` as handled (the message is done: a failure here only logs)."""
    try:
        if not guard.handled(opened):
            logger.warning("%s envelope %s was handled twice (a copy arrived while it was "
                           "being handled)", opened.kind, opened.id)
    except SeenIdsUnavailable as exc:
        logger.warning("%s envelope %s handled but not recorded, a replay of it would be "
                       "accepted: %s", opened.kind, opened.id, exc)


def inbox_retry_countdown(retries: int, longest: float) -> float:
    """Seconds before try ``retries + 1`` of a batch the inbox could not store: 1, 2, 4...,
    at most ``longest``."""
    return float(min(max(longest, 1.0), 2.0 ** min(retries, 16)))


@shared_task(name="crawler.qs_receive", acks_late=True, bind=True, max_retries=None)
def qs_receive_task(self, envelope: dict, **unsigned: object) -> dict:
    """Store a fetcher's batch in its queue server's inbox (durable before the ack).

    The queue server and crawl come from the envelope's signed route (routing fields beside
    it are refused); the batch is stored as it came (checked, inflated, not parsed: the queue
    server parses it once, and checks that its body names the same queue server and crawl).
    Returns ``{"stored": id, ...}`` or ``{"refused": reason}``.

    When the inbox cannot be written (``OSError``: a full disk, above all) the spool leaves
    nothing behind and the task is retried later (Celery retry with a countdown, without a
    bound, the same envelope: its id is recorded only once stored): the retry is published to
    the broker before the message it replaces is acknowledged, so the batch is in the broker
    until it is in the inbox. Called as a plain function, the ``OSError`` is raised to the
    caller."""
    guard = replay_guard()
    try:
        if unsigned:
            raise EnvelopeError("routing fields outside the signature are not accepted: "
                                + ", ".join(sorted(unsigned)))
        opened = open_envelope(envelope, message_key(settings.QUEUE_SERVER_TOKEN), "batch")
        server, crawl = opened.route_int("server"), opened.route_int("crawl")
        _check_delivery(self, f"qs.{server}")
        guard.admit(opened)
    except EnvelopeError as exc:
        logger.error("refused a batch message: %s", exc)
        return {"refused": str(exc)}
    except SeenIdsUnavailable as exc:
        raise self.retry(exc=exc, countdown=RETRY_SECONDS) from exc
    try:
        inbox_for(server, crawl).put("batch", opened.raw)
    except OSError as exc:
        countdown = inbox_retry_countdown(self.request.retries, settings.INBOX_RETRY_SECONDS)
        logger.warning("queue server %d's inbox could not store a batch of crawl %d (%s): "
                       "kept in the broker, tried again in %g s (try %d)", server, crawl, exc,
                       countdown, self.request.retries + 1)
        raise self.retry(exc=exc, countdown=countdown, max_retries=None) from exc
    _record_handled(guard, opened)
    ident = opened.id
    del opened  # this worker holds nothing between batches: give their memory back
    release_free_heap()
    return {"stored": ident, "server": server, "crawl": crawl}


def ship_batch(server: int, batch: dict) -> AsyncResult:
    """Send ``batch`` to queue server ``server``'s inbox worker, its route signed with it (the
    fetcher does not wait for the result)."""
    route = {"server": int(server), "crawl": int(batch["crawl"])}
    envelope = seal("batch", batch, message_key(settings.QUEUE_SERVER_TOKEN), route=route)
    return qs_receive_task.apply_async(args=[envelope], queue=f"qs.{server}")


@shared_task(name="crawler.fetch_schedule", acks_late=True, bind=True, max_retries=None)
def fetch_schedule_task(self, envelope: dict) -> dict:
    """Download, process and ship one schedule (see crawler.core.fetcher).

    A schedule is acted on once: a replayed one would make the fetchers fetch its urls again.
    Its body must name the queue server and crawl of its signed route."""
    guard = replay_guard()
    try:
        opened = open_envelope(envelope, message_key(settings.QUEUE_SERVER_TOKEN), "schedule")
        server, crawl = opened.route_int("server"), opened.route_int("crawl")
        _check_delivery(self, FETCH_QUEUE)
        message = opened.payload()
        if (not isinstance(message, dict) or message.get("server") != server
                or message.get("crawl") != crawl):
            raise EnvelopeError("the schedule's queue server or crawl is not its signed route")
        guard.admit(opened)
    except EnvelopeError as exc:
        logger.error("refused a schedule message: %s", exc)
        return {"refused": str(exc)}
    except SeenIdsUnavailable as exc:
        raise self.retry(exc=exc, countdown=RETRY_SECONDS) from exc
    result = run_schedule(message, ship_batch)
    _record_handled(guard, opened)
    return result


def send_schedule(message: dict) -> None:
    route = {"server": int(message["server"]), "crawl": int(message["crawl"])}
    envelope = seal("schedule", message, message_key(settings.QUEUE_SERVER_TOKEN), route=route)
    fetch_schedule_task.apply_async(args=[envelope], queue=FETCH_QUEUE)


@shared_task(name=LINK_ANALYSIS_TASK, acks_late=False, ignore_result=True)
def link_analysis_task(crawl_id: int) -> str:
    """Run crawl ``crawl_id``'s link analysis (or hand it to the run in progress); never
    raises: the outcome is recorded on ``LinkAnalysis`` and returned."""
    return link_analysis_run(int(crawl_id), enqueue=send_link_analysis)


@shared_task(name=EXPORT_WARC_TASK, acks_late=False, ignore_result=True)
def export_warc_task(crawl_id: int) -> dict:
    """Export crawl ``crawl_id``'s stored pages to a WARC file (``crawler.warc_export``) on
    the ``analysis`` worker (it runs long, as a link analysis does; acknowledged on receipt for
    the same reason). Never raises: returns the report, or ``{"error": why}``."""
    try:
        return crawl_export_warc(int(crawl_id)).as_json()
    except (ExportError, OSError) as exc:
        logger.error("WARC export of crawl %s failed: %s", crawl_id, exc)
        return {"error": str(exc)}


@shared_task(name="crawler.news_update", acks_late=False)
def news_update_task() -> dict:
    """Read the due news sources and index their new items (:func:`news_update_due`)."""
    return news_update_due().as_dict()
