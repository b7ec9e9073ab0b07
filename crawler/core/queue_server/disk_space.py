"""Disk watermarks: a queue server stops handing out work before its disk is full, and
resumes by itself when space returns.

Layer: ``crawler.core`` (pure Python: ``os.statvfs``, no Django). The queue-server process
(``crawler.machines.queue_server``) owns one :class:`DiskGuard` for the filesystem of its work
directory and asks it, every tick, whether new schedules may go out; the state goes into the
queue server's heartbeat counters (:meth:`DiskState.as_counters`), which the admin shows.

The rule is Elasticsearch's disk watermarks and Heritrix's pause, with hysteresis:

* *pause*: free space falls below the low-water mark, ``max(pause_free_bytes,
  pause_free_percent of the filesystem)``. The queue server hands out no new schedules (the
  crawl pauses; fetchers finish the schedules they hold, and their batches are still applied).
* *resume*: free space is back at or above the high-water mark, ``max(resume_free_bytes,
  resume_free_percent)``, never below the low-water mark. Between the two marks the state does
  not change, so a crawl near the mark does not flap between paused and running.
* *full*: a write failed for lack of space (:func:`is_out_of_space`) even though the marks
  did not foresee it (another program filled the disk, a quota). :meth:`DiskGuard.note_full`
  pauses until the high-water mark is reached, and for at least ``min_full_seconds``, so a
  filesystem that reports free bytes but refuses writes (no inodes left) is tried again
  now and then rather than in a hot loop.

Free space is what an unprivileged writer may use (``f_bavail``), so the blocks a filesystem
keeps for root do not count. A mark of 0 is off; all four at 0 switch the pause off (an
out-of-space error still pauses).
"""

from __future__ import annotations

import errno
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUT_OF_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
MB = 1024 * 1024


def is_out_of_space(exc: BaseException) -> bool:
    """True for the errors of a write that found no space (ENOSPC, or a quota's EDQUOT)."""
    return isinstance(exc, OSError) and exc.errno in OUT_OF_SPACE_ERRNOS


@dataclass(frozen=True, slots=True)
class DiskUsage:
    """Free and total bytes of the filesystem holding ``path``."""

    path: str
    free_bytes: int
    total_bytes: int


def disk_usage(path: str | os.PathLike[str]) -> DiskUsage:
    """The usage of the filesystem of ``path``, or of its nearest existing parent (a work
    directory not created yet is measured where it will be)."""
    where = Path(path).absolute()
    while not where.exists() and where != where.parent:
        where = where.parent
    stat = os.statvfs(where)
    return DiskUsage(str(path), stat.f_bavail * stat.f_frsize, stat.f_blocks * stat.f_frsize)


@dataclass(frozen=True, slots=True)
class Watermarks:
    """The low-water (pause) and high-water (resume) marks of free space; see the module.
    A mark of 0 is off; a resume mark that is set must not be below its pause mark."""

    pause_free_bytes: int = 1024 * MB
    resume_free_bytes: int = 2048 * MB
    pause_free_percent: float = 0.0
    resume_free_percent: float = 0.0

    def __post_init__(self) -> None:
        if min(self.pause_free_bytes, self.resume_free_bytes) < 0:
            raise ValueError("free-space watermarks must not be negative")
        for percent in (self.pause_free_percent, self.resume_free_percent):
            if not 0.0 <= percent < 100.0:
                raise ValueError("free-space percentages must be in [0, 100)")
        # a resume mark that is set (not 0) must not be below its pause mark
        if 0 < self.resume_free_bytes < self.pause_free_bytes:
            raise ValueError(f"the resume mark ({self.resume_free_bytes} bytes) is below the "
                             f"pause mark ({self.pause_free_bytes} bytes)")
        if 0 < self.resume_free_percent < self.pause_free_percent:
            raise ValueError(f"the resume mark ({self.resume_free_percent}%) is below the "
                             f"pause mark ({self.pause_free_percent}%)")

    def pause_below(self, total_bytes: int) -> int:
        """Free bytes under which work pauses, on a filesystem of ``total_bytes``."""
        return max(self.pause_free_bytes,
                   math.ceil(total_bytes * self.pause_free_percent / 100.0))

    def resume_at(self, total_bytes: int) -> int:
        """Free bytes from which paused work resumes (never below :meth:`pause_below`)."""
        return max(self.resume_free_bytes, self.pause_below(total_bytes),
                   math.ceil(total_bytes * self.resume_free_percent / 100.0))


def _mb(n: int) -> str:
    value = n / MB
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


@dataclass(frozen=True, slots=True)
class DiskState:
    """What a :class:`DiskGuard` decided: ``paused``, and why (``cause``: ``"low"``, below
    the low-water mark; ``"full"``, a write failed for lack of space; ``""`` when running)."""

    paused: bool
    cause: str
    usage: DiskUsage
    pause_below: int
    resume_at: int

    @property
    def reason(self) -> str:
        """One line for the admin, empty when not paused."""
        if not self.paused:
            return ""
        what = "disk full" if self.cause == "full" else "disk nearly full"
        return (f"paused: {what}, {_mb(self.usage.free_bytes)} MB free on {self.usage.path}; "
                f"resumes above {_mb(self.resume_at)} MB")

    def as_counters(self) -> dict[str, Any]:
        """The heartbeat's ``disk`` entry (JSON)."""
        return {"paused": self.paused, "cause": self.cause, "reason": self.reason,
                "path": self.usage.path, "free_bytes": self.usage.free_bytes,
                "total_bytes": self.usage.total_bytes, "pause_below": self.pause_below,
                "resume_at": self.resume_at}


class DiskGuard:
    """The pause state of one filesystem (see the module for the rule).

    Call :meth:`check` as often as you like: it measures at most every ``interval`` seconds
    (``probe`` is :func:`disk_usage`; tests pass their own). :meth:`note_full` after a write
    failed for lack of space. Not thread-safe: one owner, the queue-server loop."""

    def __init__(self, watermarks: Watermarks, path: str | os.PathLike[str], *,
                 probe: Callable[[str | os.PathLike[str]], DiskUsage] = disk_usage,
                 interval: float = 0.5, min_full_seconds: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.watermarks = watermarks
        self.path = path
        self._probe = probe
        self._interval = interval
        self._min_full = min_full_seconds
        self._clock = clock
        self._state: DiskState | None = None
        self._measured = -math.inf
        self._full_since: float | None = None

    @property
    def state(self) -> DiskState:
        """The last decision (measuring now if there is none yet)."""
        return self._state if self._state is not None else self.check()

    def check(self, force: bool = False) -> DiskState:
        """Measure (at most every ``interval`` seconds unless ``force``) and decide."""
        now = self._clock()
        if self._state is not None and not force and now - self._measured < self._interval:
            return self._state
        self._measured = now
        self._state = self._decide(self._probe(self.path), now)
        return self._state

    def note_full(self) -> DiskState:
        """A write failed for lack of space: pause until the high-water mark (and for at
        least ``min_full_seconds``)."""
        self._full_since = self._clock()
        return self.check(force=True)

    def _decide(self, usage: DiskUsage, now: float) -> DiskState:
        marks = self.watermarks
        pause_below = marks.pause_below(usage.total_bytes)
        resume_at = marks.resume_at(usage.total_bytes)
        paused = self._state is not None and self._state.paused
        cause = self._state.cause if paused and self._state is not None else ""
        if self._full_since is not None:
            if now - self._full_since < self._min_full or usage.free_bytes < resume_at:
                return DiskState(True, "full", usage, pause_below, resume_at)
            self._full_since = None
            paused, cause = False, ""
        if paused and usage.free_bytes >= resume_at:
            paused, cause = False, ""
        elif not paused and usage.free_bytes < pause_below:
            paused, cause = True, "low"
        return DiskState(paused, cause, usage, pause_below, resume_at)
