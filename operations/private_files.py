"""What the engine writes is private to the user it runs as: a umask for its processes, and a
pass at start that takes group and other permissions off what an earlier run left.

Layer: ``operations`` (plain Python, no Django). Everything under ``VAR_DIRECTORY`` is secret
or private: the SQLite database (its sessions open the admin), generated secrets, the
embedded Redis's data, and under ``WORK_DIRECTORY`` every crawled page, inbox batch, crawl
queue journal and index. Every entry point of the engine calls :func:`private_umask` before
it writes anything: ``manage.py`` (and so ``manage.py up`` and every child it starts, which
inherit the umask: the web server, the Celery workers, the queue servers, the embedded
Redis), ``searchsite.wsgi`` (a web server started some other way) and a Celery worker's
``worker_init``. Files and folders are then made 0600 and 0700 (less whatever the umask
already removed). ``manage.py up`` runs :func:`make_private` over ``VAR_DIRECTORY``,
``WORK_DIRECTORY`` and the SQLite files before it starts anything, for installs made before
this (files 0644, folders 0755).

The pass walks each tree once with ``os.scandir`` (one ``lstat`` per entry, a ``chmod`` only
where a group or other bit is set), so a repeated start costs one ``lstat`` per file: 0.3 s
for 100,000 files on a busy two-core machine (0.6 s for the first pass, which changes them). Symbolic links are neither changed nor followed (their targets are
not the engine's to change).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077  # no permission for the group or for others
_OPEN_TO_OTHERS = 0o077


def private_umask() -> int:
    """Add :data:`PRIVATE_UMASK` to this process's umask (a stricter one is kept); its
    children inherit it. Returns the umask before."""
    before = os.umask(PRIVATE_UMASK)
    os.umask(before | PRIVATE_UMASK)
    return before


@dataclass(frozen=True, slots=True)
class PrivateReport:
    """What :func:`make_private` did: entries looked at, entries whose mode it changed, and
    the entries it could not change (``path: error``, the first few)."""

    checked: int
    changed: int
    failed: tuple[str, ...] = ()


def make_private(paths: Iterable[Path]) -> PrivateReport:
    """Take the group and other permission bits off each of ``paths`` and, for a folder,
    everything under it. A path that does not exist is passed over; an entry that cannot be
    changed (another user's, gone meanwhile) is reported, not fatal."""
    checked = changed = 0
    failed: list[str] = []
    seen: set[tuple[int, int]] = set()  # a folder given twice, or inside another given
    stack: list[str] = []
    for path in paths:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            failed.append(f"{path}: {exc}")
            continue
        checked += 1
        changed += _restrict(str(path), info, failed)
        if stat.S_ISDIR(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            stack.append(str(path))
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:  # removed or unreadable meanwhile: the rest goes on
            failed.append(f"{folder}: {exc}")
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                failed.append(f"{entry.path}: {exc}")
                continue
            checked += 1
            changed += _restrict(entry.path, info, failed)
            if stat.S_ISDIR(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                stack.append(entry.path)
    if failed:
        logger.warning("could not make %d entries private, first: %s", len(failed), failed[0])
    return PrivateReport(checked, changed, tuple(failed[:10]))


def _restrict(path: str, info: os.stat_result, failed: list[str]) -> int:
    """Clear the group and other bits of ``path`` (not a symbolic link); 1 when changed."""
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode) or not mode & _OPEN_TO_OTHERS:
        return 0
    try:
        os.chmod(path, mode & ~_OPEN_TO_OTHERS)
    except OSError as exc:
        failed.append(f"{path}: {exc}")
        return 0
    return 1
