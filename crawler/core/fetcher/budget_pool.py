"""A pool of worker processes that kills a job past its CPU budget and goes on.

Layer: ``crawler.core.fetcher``. :class:`ProcessPoolExecutor` cannot stop one job: C-level work
(lxml's XPath, libxml2) does not return to Python until it ends, and a worker killed from outside
breaks the whole executor. :class:`BudgetPool` keeps one duplex pipe per worker process and one
thread in this process per worker (its *slot*): the slot takes the next job from the shared
queue, sends it (pickled once, by :meth:`BudgetPool.submit`), and waits for the answer while it
watches that worker's CPU time (Linux: ``/proc/<pid>/stat``, user + system; elsewhere the wall
time). A job past ``cpu_seconds`` gets its worker killed, its future answered with
:class:`TooSlow`, and a fresh worker started in its place; every other job runs on in its own
worker, so nothing else is lost and the pool keeps its size.

Contract:

* ``submit(job) -> Future``: the future holds ``function(job)``'s return value, the exception it
  raised, :class:`TooSlow` past the budget, or :class:`WorkerLost` when the worker died on it
  (killed from outside, out of memory);
* workers start with *spawn*, run ``initializer(*initargs)`` once, then say they are ready
  (their start-up is not charged to a job);
* ``close()`` cancels the jobs not started, lets the running ones end, then ends every worker
  (killed if it does not end within :data:`STOP_SECONDS`). Not restartable.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

POLL_SECONDS = 0.05     # how often a running job's CPU time is read (an answer wakes at once)
STOP_SECONDS = 5.0      # a worker asked to stop is killed after this
_READY = b"r"
_STOP = b""
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class TooSlow(Exception):
    """A job used more than its CPU budget; its worker was killed. ``kind``: the fetch error
    kind the page is recorded under."""

    kind = "too_slow"


class WorkerLost(Exception):
    """The worker process died while it ran the job (not by the budget)."""


def cpu_seconds_of(pid: int, thread: int | None = None) -> float | None:
    """User + system CPU seconds of process ``pid`` (or of its ``thread``, a native thread
    id) on Linux, or None where it cannot be read."""
    path = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    try:
        with open(path, "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the command: state is field 3, utime 14 and stime 15 (1-based over the whole line)
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def _worker_main(conn: Any, initializer: Callable[..., None], initargs: tuple[Any, ...],
                 function: Callable[[Any], Any]) -> None:
    """A worker: start, say ready, then answer each job until told to stop or the pipe ends."""
    initializer(*initargs)
    conn.send_bytes(_READY)
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if data == _STOP:
            return
        try:
            reply: tuple[bool, Any] = (True, function(pickle.loads(data)))
        except BaseException as exc:
            reply = (False, exc)
        try:
            payload = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            payload = pickle.dumps((False, RuntimeError(f"unpicklable answer: {exc!r}")))
        conn.send_bytes(payload)


class _Slot:
    """One worker process and the thread that feeds it (only that thread touches its pipe)."""

    def __init__(self, pool: BudgetPool, number: int) -> None:
        self.pool = pool
        self.number = number
        self.process: Any = None
        self.conn: Any = None
        self.thread = threading.Thread(target=self._serve, daemon=True,
                                       name=f"budget-pool-{number}")

    def start_worker(self) -> None:
        pool = self.pool
        here, there = pool.context.Pipe(duplex=True)
        process = pool.context.Process(
            target=_worker_main, args=(there, pool.initializer, pool.initargs, pool.function),
            daemon=True, name=f"page-worker-{self.number}")
        process.start()
        there.close()
        self.process, self.conn = process, here
        here.recv_bytes()  # ready (EOFError: it could not start)

    def end_worker(self, kill: bool) -> None:
        process, conn = self.process, self.conn
        self.process = self.conn = None
        if process is None:
            return
        if not kill:
            with contextlib.suppress(OSError):  # its pipe is gone: it ended, or is killed below
                conn.send_bytes(_STOP)
            process.join(STOP_SECONDS)
        if process.is_alive():
            process.kill()
        process.join()
        conn.close()

    def _serve(self) -> None:
        while True:
            item = self.pool.jobs.get()
            if item is None:
                self.end_worker(kill=False)
                return
            future, data = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                if self.process is None:
                    self.start_worker()
                self._run(future, data)
            except (EOFError, OSError) as exc:
                self.end_worker(kill=True)
                if not future.done():
                    future.set_exception(WorkerLost(f"page worker lost: {exc!r}"))
                self.replace_worker()

    def replace_worker(self) -> None:
        """Start a fresh worker now (the pool keeps its size); one that cannot start is
        tried again with the next job."""
        try:
            self.start_worker()
        except (EOFError, OSError):
            self.end_worker(kill=True)

    def _run(self, future: Future[Any], data: bytes) -> None:
        conn, pid, budget = self.conn, self.process.pid, self.pool.cpu_seconds
        conn.send_bytes(data)
        started_cpu = cpu_seconds_of(pid) if budget else None
        started_wall = time.monotonic()
        while not conn.poll(POLL_SECONDS):
            if not budget:
                continue
            now_cpu = cpu_seconds_of(pid) if started_cpu is not None else None
            used = (now_cpu - started_cpu if now_cpu is not None and started_cpu is not None
                    else time.monotonic() - started_wall)
            if used > budget:
                self.end_worker(kill=True)
                future.set_exception(TooSlow(
                    f"processing used more than its budget of {budget:g} CPU seconds"))
                self.replace_worker()
                return
        ok, value = pickle.loads(conn.recv_bytes())
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


class BudgetPool:
    """``processes`` workers running ``function`` on submitted jobs, each job limited to
    ``cpu_seconds`` of its worker's CPU (None or 0: no limit). Workers start at once."""

    def __init__(self, function: Callable[[Any], Any], processes: int,
                 cpu_seconds: float | None, initializer: Callable[..., None],
                 initargs: tuple[Any, ...] = ()) -> None:
        self.function = function
        self.processes = max(1, int(processes))
        self.cpu_seconds = float(cpu_seconds) if cpu_seconds else None
        self.initializer = initializer
        self.initargs = initargs
        self.context = multiprocessing.get_context("spawn")
        self.jobs: queue.SimpleQueue[tuple[Future[Any], bytes] | None] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        self.slots = [_Slot(self, n) for n in range(self.processes)]
        starters = [threading.Thread(target=slot.start_worker) for slot in self.slots]
        for starter in starters:  # spawn's start-up (imports) in parallel
            starter.start()
        for starter in starters:
            starter.join()
        for slot in self.slots:
            slot.thread.start()

    def pids(self) -> list[int]:
        """The worker processes' ids now (for tests and diagnostics)."""
        return [slot.process.pid for slot in self.slots if slot.process is not None]

    def submit(self, job: Any) -> Future[Any]:
        """Queue ``job`` for the next idle worker (pickled here, once)."""
        future: Future[Any] = Future()
        data = pickle.dumps(job, pickle.HIGHEST_PROTOCOL)
        with self._lock:
            if self._closed:
                raise RuntimeError("the pool is closed")
            self.jobs.put((future, data))
        return future

    def close(self) -> None:
        """Cancel the jobs not started, wait for the running ones, end every worker."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            while True:
                try:
                    item = self.jobs.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
            for _ in self.slots:
                self.jobs.put(None)
        for slot in self.slots:
            slot.thread.join()


