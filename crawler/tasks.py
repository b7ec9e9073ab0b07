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

Every message is a signed envelope (``crawler.core.shipping``): without the shared
QUEUE_SERVER_TOKEN a message is refused and dropped.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time

from celery import shared_task
from django.conf import settings

from crawler.core.batch import FetcherBatch
from crawler.core.memory import release_free_heap
from crawler.core.shipping import EnvelopeError, open_envelope, open_envelope_raw, seal
from crawler.core.spool import Spool
from indexer.core.workdir import crawl_paths, queue_server_dir

logger = logging.getLogger(__name__)


@shared_task(name="crawler.machine_ping", acks_late=True)
def machine_ping(payload: dict) -> dict:
    """Echo ``payload`` with the worker's host, pid and clock (idempotent)."""
    return {"echo": payload, "host": socket.gethostname(), "pid": os.getpid(),
            "time": time.time()}


def inbox_for(server: int, crawl_timestamp: int) -> Spool:
    directory = queue_server_dir(settings.WORK_DIRECTORY, server)
    return Spool(crawl_paths(directory, crawl_timestamp)["inbox"])


def inbox_retry_countdown(retries: int, longest: float) -> float:
    """Seconds before try ``retries + 1`` of a batch the inbox could not store: 1, 2, 4...,
    at most ``longest``."""
    return float(min(max(longest, 1.0), 2.0 ** min(retries, 16)))


@shared_task(name="crawler.qs_receive", acks_late=True, bind=True, max_retries=None)
def qs_receive_task(self, envelope: dict, server: int | None = None,
                    crawl: int | None = None) -> int:
    """Store a fetcher's batch in its queue server's inbox (durable before the ack).

    Fetchers name the queue server and the crawl beside the envelope, so the batch is stored
    as it came (checked, inflated, not parsed: the queue server parses it once, and checks
    that it was meant for it). Without them the batch is parsed here to find out. Returns the
    number of documents when the batch was parsed, else 0.

    When the inbox cannot be written (``OSError``: a full disk, above all) the spool leaves
    nothing behind and the task is retried later (Celery retry with a countdown, without a
    bound): the retry is published to the broker before the message it replaces is
    acknowledged, so the batch is in the broker until it is in the inbox. Called as a plain
    function, the ``OSError`` is raised to the caller."""
    try:
        raw = open_envelope_raw(envelope, settings.QUEUE_SERVER_TOKEN, "batch")
        if server is None or crawl is None:
            batch = FetcherBatch.from_wire(json.loads(raw))
            if batch.server is None:
                raise KeyError("server")
            server, crawl, count = batch.server, batch.crawl, len(batch.docs)
        else:
            server, crawl, count = int(server), int(crawl), 0
    except (EnvelopeError, KeyError, TypeError, ValueError) as exc:
        logger.error("refused a batch message: %s", exc)
        return 0
    try:
        inbox_for(server, crawl).put("batch", raw)
    except OSError as exc:
        countdown = inbox_retry_countdown(self.request.retries, settings.INBOX_RETRY_SECONDS)
        logger.warning("queue server %d's inbox could not store a batch of crawl %d (%s): "
                       "kept in the broker, tried again in %g s (try %d)", server, crawl, exc,
                       countdown, self.request.retries + 1)
        raise self.retry(exc=exc, countdown=countdown, max_retries=None) from exc
    del raw  # this worker holds nothing between batches: give their memory back
    release_free_heap()
    return count


def ship_batch(server: int, batch: dict) -> None:
    envelope = seal("batch", batch, settings.QUEUE_SERVER_TOKEN)
    qs_receive_task.apply_async(args=[envelope], kwargs={"server": server,
                                                         "crawl": int(batch["crawl"])},
                                queue=f"qs.{server}")


@shared_task(name="crawler.fetch_schedule", acks_late=True)
def fetch_schedule_task(envelope: dict) -> dict:
    """Download, process and ship one schedule (see crawler.core.fetcher)."""
    from crawler.fetching import run_schedule

    try:
        message = open_envelope(envelope, settings.QUEUE_SERVER_TOKEN, "schedule")
    except EnvelopeError as exc:
        logger.error("refused a schedule message: %s", exc)
        return {"refused": str(exc)}
    return run_schedule(message, ship_batch)


def send_schedule(message: dict) -> None:
    envelope = seal("schedule", message, settings.QUEUE_SERVER_TOKEN)
    fetch_schedule_task.apply_async(args=[envelope], queue="fetch")


ANALYSIS_QUEUE = "analysis"


@shared_task(name="crawler.link_analysis", acks_late=False, ignore_result=True)
def link_analysis_task(crawl_id: int) -> str:
    """Run crawl ``crawl_id``'s link analysis (or hand it to the run in progress); never
    raises: the outcome is recorded on ``LinkAnalysis`` and returned."""
    from crawler.link_analysis import link_analysis_run

    return link_analysis_run(int(crawl_id), enqueue=send_link_analysis)


def send_link_analysis(crawl_id: int) -> None:
    """Queue a run; raises when the broker cannot be reached (after about a second)."""
    link_analysis_task.apply_async(
        args=[int(crawl_id)], queue=ANALYSIS_QUEUE, retry=True,
        retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.4,
                      "interval_max": 0.5})
