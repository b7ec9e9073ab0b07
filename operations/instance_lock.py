"""At most one process of a kind per directory: a lock file held for the whole life of the process.

Plain Python, no Django. ``manage.py up`` holds ``VAR_DIRECTORY/up.lock`` and
``manage.py run_queue_server --server N`` holds ``queue_server.lock`` in its queue-server
directory, so that a second one refuses to start instead of running beside the first.

The lock is an exclusive ``flock`` on the file: the kernel releases it when the holder ends,
however it ends (kill -9 included), so a stale file never blocks a restart. The file holds the
holder's pid, which the refused process names in its message. Its descriptor is not inherited
by the holder's children (``O_CLOEXEC``), so only the holder itself keeps the lock.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path


class AlreadyRunning(Exception):
    """Another live process holds the lock; ``pid`` is its pid (None if it could not be read:
    the holder had taken the lock but not yet written its pid)."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        super().__init__(f"{path} is held by a running process ({self.holder})")

    @property
    def holder(self) -> str:
        """The holder for a message: ``pid N``, or that its pid is not known yet."""
        return f"pid {self.pid}" if self.pid is not None else "its pid is not known yet"


class InstanceLock:
    """Take the lock on ``path`` (created with its folder if missing) or raise
    :class:`AlreadyRunning`; hold it until :meth:`release` or the end of the process."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder_pid(fd)
            os.close(fd)
            raise AlreadyRunning(self.path, pid) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (the file stays: removing it could let two processes lock two
        different files of the same name)."""
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> InstanceLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


def _holder_pid(fd: int, wait: float = 1.0) -> int | None:
    """The pid the holder wrote, waiting up to ``wait`` seconds for a holder that has just
    taken the lock to write it."""
    deadline = time.monotonic() + wait
    while True:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        if text.isdigit() and text.isascii():
            return int(text)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)
