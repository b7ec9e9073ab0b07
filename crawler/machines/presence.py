"""A fetcher process says it is alive, fetching or idle: a heartbeat that means "alive".

Layer: Django glue, started by the Celery signals of ``searchsite.celery``. Every pool process
of a worker that consumes the ``fetch`` queue (each Celery prefork child is one fetcher, and the
Machines page shows one row per process) runs a small daemon thread that writes its row
(``crawler.services.fetcher_heartbeat``) every ``FETCHER_HEARTBEAT_SECONDS``: its state (idle
or fetching), the schedule it runs (or ran last), its pages and its pages per second over the
last :data:`RATE_WINDOW` seconds. An idle fetcher still reports, so a row whose heartbeat is
older than ``crawler.selectors.GONE_AFTER_BEATS`` heartbeats is a process that is gone (the
Machines page says so, and old rows are pruned, ``services.FETCHER_ROWS_KEPT``).
``run_schedule`` (``crawler.machines.fetching``) tells the process's :class:`Presence` when a
schedule starts, how many pages its batches carried, and when it ends.

Call order in a pool process: :func:`start` (at ``worker_process_init``), then any number of
:meth:`Presence.schedule_started` / :meth:`Presence.pages` / :meth:`Presence.schedule_done`
from the task, then :func:`stop` (at ``worker_process_shutdown``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections import deque

from django.db import DatabaseError, close_old_connections, connection

from crawler import services

logger = logging.getLogger(__name__)

RATE_WINDOW = 60.0   # seconds: a fetcher's pages per second are over the last minute



class Presence:
    """One fetcher process's state and its heartbeat thread. Thread-safe: the task's thread
    updates it, the heartbeat thread reads it."""

    def __init__(self, interval: float, clock=time.monotonic) -> None:
        self.interval = interval
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self._clock = clock
        self._lock = threading.Lock()
        self._state = "idle"
        self._schedule = ""
        self._pages: deque[tuple[float, int]] = deque()  # (when, pages) of shipped batches
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- what the task tells it ---------------------------------------------------------

    def schedule_started(self, schedule: str) -> None:
        with self._lock:
            self._state, self._schedule = "fetching", schedule

    def pages(self, count: int) -> None:
        """``count`` pages were fetched (a batch carried them)."""
        if count > 0:
            with self._lock:
                self._pages.append((self._clock(), int(count)))

    def schedule_done(self) -> None:
        with self._lock:
            self._state = "idle"

    def rate(self) -> float:
        """Pages per second over the last :data:`RATE_WINDOW` seconds."""
        cutoff = self._clock() - RATE_WINDOW
        with self._lock:
            while self._pages and self._pages[0][0] < cutoff:
                self._pages.popleft()
            return round(sum(n for _, n in self._pages) / RATE_WINDOW, 2)

    # --- the heartbeat ------------------------------------------------------------------

    def beat(self) -> None:
        """Write this process's row now (a database error is logged: the next beat retries)."""
        with self._lock:
            state, schedule = self._state, self._schedule
        try:
            close_old_connections()
            services.fetcher_heartbeat(self.name, self.host, self.pid, state,
                                       schedule=schedule, rate=self.rate())
        except DatabaseError as exc:
            logger.warning("fetcher %s: heartbeat not written: %s", self.name, exc)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="fetcher-heartbeat",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.beat()
                self._stop.wait(self.interval)
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop the thread and mark the row stopped (a clean exit, not a lost process)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 5)
        try:
            services.fetcher_heartbeat(self.name, self.host, self.pid, "stopped",
                                       rate=0.0)
        except DatabaseError as exc:
            logger.warning("fetcher %s: could not say it stopped: %s", self.name, exc)


class _ProcessPresence:
    """The presence of this process (None outside fetch pool processes), and whether the
    worker consumes the ``fetch`` queue (set in the worker's main process, before its pool
    forks, and inherited by each child)."""

    def __init__(self) -> None:
        self.fetch_worker = False
        self.current: Presence | None = None


_process = _ProcessPresence()


def mark_fetch_worker(queues) -> None:
    """Called in a worker's main process with the queues it consumes."""
    _process.fetch_worker = "fetch" in set(queues)


def start(interval: float) -> Presence | None:
    """In a pool process of a fetch worker: start its heartbeat thread."""
    if not _process.fetch_worker or _process.current is not None:
        return None
    _process.current = Presence(interval)
    _process.current.start()
    return _process.current


def stop() -> None:
    if _process.current is not None:
        _process.current.stop()
        _process.current = None


def current() -> Presence | None:
    """This process's presence, or None (not a fetch pool process: ``manage.py crawl``, tests
    calling the task directly)."""
    return _process.current
