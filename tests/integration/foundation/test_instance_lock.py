"""operations.instance_lock with real processes: the lock names its holder, and is free again the
moment the holder is killed with -9."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from operations.instance_lock import AlreadyRunning, InstanceLock
from tests.conftest import ROOT

HOLDER = textwrap.dedent("""
    import sys, time
    from operations.instance_lock import InstanceLock
    lock = InstanceLock(sys.argv[1])
    print("held", flush=True)
    time.sleep(60)
""")

# takes the lock the way InstanceLock does, but never writes its pid (as a holder that has
# just taken it)
SILENT_HOLDER = textwrap.dedent("""
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("held", flush=True)
    time.sleep(60)
""")


def hold(code: str, path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    return holder


def test_lock_names_its_holder_and_is_free_once_the_holder_is_killed(tmp_path):
    path = tmp_path / "run" / "up.lock"
    holder = hold(HOLDER, path)
    try:
        with pytest.raises(AlreadyRunning) as refused:
            InstanceLock(path)
        assert refused.value.pid == holder.pid
        assert f"(pid {holder.pid})" in str(refused.value)
    finally:
        holder.kill()
        holder.wait()
    with InstanceLock(path):  # the kernel let go of the killed holder's lock
        assert path.read_text() == f"{os.getpid()}\n"
    InstanceLock(path).release()  # and released again on exit


def test_holder_that_has_not_written_its_pid_yet(tmp_path):
    path = tmp_path / "queue_server.lock"
    holder = hold(SILENT_HOLDER, path)
    try:
        with pytest.raises(AlreadyRunning, match="its pid is not known yet") as refused:
            InstanceLock(path)
        assert refused.value.pid is None
    finally:
        holder.kill()
        holder.wait()
