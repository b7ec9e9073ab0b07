"""The one "reload a file when it changes" cache: :class:`ReloadingFile`, and
:class:`SharedPerPath`, which gives a process one such cache per file.

Layer: ``indexer.core`` (pure Python), below its users: search's link scores
(:class:`indexer.core.signals.link_scores.CachedLinkScores`), common phrases
(:class:`indexer.core.signals.phrases.CachedPhraseLexicon`), page embeddings
(``ranking.core.semantic.store``) and the fetchers' link ordering (``crawler.machines.fetching``). Their
files are replaced by batch jobs (a rename, or a rewrite in place) while searchers and fetchers
run; every reader notices a new version at its next use, without a restart.

The rule, the same for every user:

* A file's *stamp* is ``(st_ino, st_mtime_ns, st_ctime_ns, st_size)`` of its ``os.stat``, or
  ``None`` when it cannot be stat'ed. :meth:`ReloadingFile.get` takes the stamp on every call
  (no throttle: a stat costs microseconds, and no user asks more than once per query or batch)
  and calls ``load`` only when the stamp differs from the one of the last attempt: a new inode
  (a rename), a new mtime or ctime (a rewrite, ``os.utime``), or a new size each count.
* No file: ``None``, nothing loaded or logged (a file not written yet is a normal state).
* ``load`` raises one of ``errors``: ``None`` until the file changes again; :meth:`failed` is
  called once for that version (the subclass logs there) and what it returns is kept in
  :attr:`error`. Any other exception propagates and nothing is remembered, so the next call
  tries again.
* A load runs under the cache's lock, so one version is loaded once however many threads ask.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
C = TypeVar("C")

Stamp = tuple[int, int, int, int]


def file_stamp(path: str | os.PathLike[str]) -> Stamp | None:
    """The stamp of ``path`` (see the module), or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)


_NEVER = object()  # the stamp before the first attempt (None is the stamp of a missing file)


class ReloadingFile(Generic[T]):
    """The value ``load(path)`` of the current version of a file, loaded again when the
    file's stamp changes (the rule of the module docstring). ``stamped`` is the file whose
    stamp is taken when it is not ``path`` itself (a folder whose manifest is rewritten last).
    Subclasses override :meth:`loaded` and :meth:`failed` to log."""

    def __init__(self, path: str | os.PathLike[str], load: Callable[[Path], T], *,
                 errors: tuple[type[BaseException], ...] = (),
                 stamped: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path)
        self.stamped = Path(stamped) if stamped is not None else self.path
        self._load = load
        self._errors = errors
        self._lock = threading.Lock()
        self._stamp: object = _NEVER
        self._value: T | None = None
        self.error: str | None = None

    def get(self) -> T | None:
        """The loaded value of the file's current version, or None (no file, or unusable)."""
        stamp = file_stamp(self.stamped)
        with self._lock:
            if stamp == self._stamp:
                return self._value
            self._stamp, self._value, self.error = _NEVER, None, None
            if stamp is not None:
                try:
                    value = self._load(self.path)
                except self._errors as exc:
                    self.error = self.failed(exc)
                else:
                    self._value = value
                    self.loaded(value)
            self._stamp = stamp
            return self._value

    def loaded(self, value: T) -> None:
        """Called once per version loaded (under the lock)."""

    def failed(self, exc: BaseException) -> str | None:
        """Called once per version whose load raised one of ``errors``; gives the text kept in
        :attr:`error` (None: the failure is not an error, e.g. a file not complete yet)."""
        return str(exc)


class SharedPerPath(Generic[C]):
    """One cache object per file for the whole process: ``shared(path)`` gives the object
    ``make`` built for ``path`` (resolved) the first time it was asked for. Thread-safe."""

    def __init__(self, make: Callable[[Path], C]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._made: dict[Path, C] = {}

    def __call__(self, path: str | os.PathLike[str]) -> C:
        key = Path(path).resolve()
        with self._lock:
            got = self._made.get(key)
            if got is None:
                got = self._made[key] = self._make(key)
            return got
