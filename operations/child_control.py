"""Asking ``manage.py up``'s supervisor to restart one of its children (the Machines page's
"Restart" of the fetcher pool).

Layer: the operations app, plain Python (no Django). A request is a file
``<directory>/<child>.restart`` (made by :func:`request_restart`, in the web process); the
supervisor (:mod:`.supervisor`) looks for requests at each poll (:func:`take_requests`),
removes each file and restarts that child: the same command, a new process. Files are the
channel because the web server and the supervisor share nothing else on the machine but
``VAR_DIRECTORY`` (private to their user: ``operations.private_files``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .child_logs import log_path

CONTROL_DIR = "control"  # in VAR_DIRECTORY
SUFFIX = ".restart"
RESTARTABLE = ("fetchers",)  # the children of manage.py up the admin may restart


def request_path(directory: str | os.PathLike[str], child: str) -> Path:
    """Where a restart of ``child`` is asked (ValueError for a name that is not a child's)."""
    return log_path(directory, child).with_suffix(SUFFIX)


def request_restart(directory: str | os.PathLike[str], child: str) -> Path:
    """Ask for a restart of ``child``; asking twice before it is taken is one restart."""
    path = request_path(directory, child)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.touch()
    return path


def restart_pending(directory: str | os.PathLike[str], child: str) -> bool:
    return request_path(directory, child).exists()


def take_requests(directory: str | os.PathLike[str], children: list[str]) -> list[str]:
    """The children of ``children`` whose restart was asked, their requests removed."""
    taken = []
    for child in children:
        path = request_path(directory, child)
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        taken.append(child)
    return taken
