"""Child processes that do not outlive their parent (Linux ``prctl(PR_SET_PDEATHSIG)``).

Plain Python, no Django. Used where the engine starts long-running children: the supervisor of
``manage.py up`` (``operations.supervisor``) and the queue server for its dictionary updater
(``crawler.machines.queue_server``).

A handler in the parent cannot help when the parent is killed with SIGKILL (or by the kernel's
out-of-memory killer); the kernel can: a child that asked with ``PR_SET_PDEATHSIG`` receives the
chosen signal as soon as its parent dies. Choose the signal the parent would itself send to stop
the child, so that the child shuts down as cleanly as it does on an ordinary stop (a Celery or
gunicorn master then stops its own pool or workers).

The rules of the kernel that shape how this is used:

- The setting survives ``execve`` (except into set-uid programs) and is not inherited by the
  child's own children: each parent arms the children it starts. Celery arms its prefork pool
  itself (SIGKILL) and a gunicorn worker exits when its parent changes, so the masters'
  children go with them.
- The signal follows the *thread* that started the child, not the process: start children from
  a thread that lives as long as they should (the main thread).
- A parent that dies between ``fork`` and ``prctl`` sends nothing. The child therefore compares
  ``getppid()`` with the parent's pid after arming and, when they differ, exits at once with
  :data:`ORPHANED_EXIT` without running its program.

On systems without ``prctl`` only the ``getppid()`` check is made.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
ORPHANED_EXIT = 1  # the exit code of a child whose parent was gone before it could start
# set by a supervisor in its children's environment: its pid (see :func:`exit_when_orphaned`)
SUPERVISOR_ENV = "YIOOPY_SUPERVISOR_PID"


def _prctl() -> Callable[..., int] | None:
    """The C library's ``prctl``, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    function = ctypes.CDLL(None, use_errno=True).prctl
    function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                         ctypes.c_ulong]
    function.restype = ctypes.c_int
    return function


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child receives ``sig`` when its
    parent dies, however it dies (precisely: when the thread that calls ``Popen`` ends).

    Call it in the parent, in the thread that then calls ``Popen``. The function it returns
    runs in the child between ``fork`` and ``exec`` and only makes system calls (``prctl`` is
    looked up here, in the parent, so that the child has nothing to load)."""
    signum = int(signal.Signals(sig))  # ValueError for a number that is no signal
    prctl = _prctl()
    parent = os.getpid()

    def arm() -> None:
        if prctl is not None and prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(ORPHANED_EXIT)

    return arm


def exit_when_orphaned(grace: float = 10.0, poll: float = 0.5) -> bool:
    """The safety net behind the parent-death signal, for a child that may miss it: a
    Celery worker that gets its stop signal while it is still starting only notes it, and
    with the broker gone too (the embedded Redis dies with the same supervisor) it can wait
    on its connection for ever. When ``SUPERVISOR_ENV`` names this process's parent, a daemon
    thread watches ``getppid()``; once the parent is gone it waits ``grace`` seconds (for the
    ordinary shutdown the signal started) and then kills this process (SIGKILL: its own
    children armed with a parent-death signal, as Celery's pool is, go with it). A parent
    already gone: killed at once. Returns whether the watch runs (False without the variable,
    as for a worker started by hand, or when it names another process)."""
    try:
        supervisor = int(os.environ.get(SUPERVISOR_ENV, ""))
    except ValueError:
        return False
    if os.getppid() != supervisor:
        if supervisor > 0 and not _alive(supervisor):
            os.kill(os.getpid(), signal.SIGKILL)
        return False

    def watch() -> None:
        while os.getppid() == supervisor:
            time.sleep(poll)
        time.sleep(grace)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
