"""A CPU budget for work done in the calling thread: Python-level work is stopped past it.

Layer: ``crawler.core.fetcher``. Where pages are processed in the fetcher's own thread
(:class:`.processing.InlineProcessing`: Celery fetchers, one core) no process can be killed, so
:class:`ThreadBudget` watches the threads inside :meth:`ThreadBudget.limit`: one watchdog
thread sleeps until the first of them has run ``seconds`` of wall time (its CPU time cannot
be more), then reads each such thread's CPU time (Linux: ``/proc/<pid>/task/<tid>/stat``;
elsewhere the wall time) every :data:`POLL_SECONDS`, and past the budget raises
:class:`OverBudget` in that thread (``PyThreadState_SetAsyncExc``).

Contract and limits:

* :class:`OverBudget` is a ``BaseException``: a broad ``except Exception`` in the work (a
  plugin's guard, a parser's) does not swallow it; ``limit`` turns it into
  :class:`.budget_pool.TooSlow` for the caller;
* it is raised at the thread's next Python bytecode: pure-Python work (our pipeline, page rules,
  pypdf) stops at once, C-level work (a libxml2 XPath evaluation) only when it returns to
  Python. Worker processes (:mod:`.budget_pool`) stop both;
* an exception the watchdog sent but that had not landed when the block ended is withdrawn: it
  never reaches code after the block;
* an exception that lands where Python drops it (a ``weakref.finalize`` callback or a
  ``__del__`` the collector runs in that thread prints "Exception ignored" and goes on) is sent
  again every :data:`RESEND_SECONDS` of CPU the thread spends past its budget.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from crawler.core.fetcher.budget_pool import TooSlow, cpu_seconds_of

POLL_SECONDS = 0.1
RESEND_SECONDS = 0.5  # CPU past the budget after which an unheeded exception is sent again


class OverBudget(BaseException):
    """Raised in a thread past its budget (see the module docstring)."""


@dataclass(slots=True)
class _Watched:
    ident: int
    native: int
    started_wall: float
    started_cpu: float | None
    seconds: float
    fired: bool = False
    fired_at: float = 0.0  # the CPU seconds used when it was last sent


def _thread_cpu(native: int) -> float | None:
    return cpu_seconds_of(os.getpid(), native)


class ThreadBudget:
    """Watches the threads inside :meth:`limit`; one watchdog thread, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._watched: dict[int, _Watched] = {}
        self._thread: threading.Thread | None = None

    @contextmanager
    def limit(self, seconds: float | None) -> Iterator[None]:
        """Run the block with ``seconds`` of this thread's CPU (None or 0: no limit); past it
        the block ends with :class:`.budget_pool.TooSlow`."""
        if not seconds:
            yield
            return
        native = threading.get_native_id()
        watched = _Watched(threading.get_ident(), native, time.monotonic(), _thread_cpu(native),
                           float(seconds))
        with self._lock:
            self._watched[watched.ident] = watched
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True,
                                                name="page-cpu-budget")
                self._thread.start()
            self._lock.notify()
        try:
            yield
        except OverBudget:
            raise TooSlow(f"processing used more than its budget of {seconds:g} CPU seconds"
                          ) from None
        finally:
            with self._lock:
                self._watched.pop(watched.ident, None)
                if watched.fired:  # sent but maybe not landed: withdraw it
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(watched.ident),
                                                               None)

    def _watch(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                wait: float | None = None
                for watched in list(self._watched.values()):
                    due = watched.started_wall + watched.seconds
                    if now < due:
                        wait = due - now if wait is None else min(wait, due - now)
                        continue
                    used = self._used(watched, now)
                    if used > watched.seconds and (
                            not watched.fired or used - watched.fired_at > RESEND_SECONDS):
                        watched.fired, watched.fired_at = True, used
                        ctypes.pythonapi.PyThreadState_SetAsyncExc(
                            ctypes.c_ulong(watched.ident), ctypes.py_object(OverBudget))
                    wait = POLL_SECONDS if wait is None else min(wait, POLL_SECONDS)
                self._lock.wait(wait)

    @staticmethod
    def _used(watched: _Watched, now: float) -> float:
        if watched.started_cpu is not None:
            spent = _thread_cpu(watched.native)
            if spent is not None:
                return spent - watched.started_cpu
        return now - watched.started_wall
