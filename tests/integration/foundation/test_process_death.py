"""Children that do not outlive their parent (operations.process_death), with real processes: the
supervisor's children get their own stop signal when the supervisor is killed with -9, and a
child whose parent died before it could arm the signal does not start its program at all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

from tests.conftest import ROOT

# a child that says it is ready, then writes the name of the signal that stopped it
CHILD = textwrap.dedent("""
    import pathlib, signal, sys, time
    out = pathlib.Path(sys.argv[1])
    def bye(signum, frame):
        out.write_text(signal.Signals(signum).name)
        sys.exit(0)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    out.write_text("ready")
    time.sleep(60)
""")

SUPERVISOR = textwrap.dedent("""
    import signal, sys
    from operations.supervisor import ChildSpec, Supervisor
    child, term, intr = sys.argv[1:]
    Supervisor([ChildSpec("term", [sys.executable, "-c", child, term]),
                ChildSpec("int", [sys.executable, "-c", child, intr], stop_signal=signal.SIGINT)],
               out=sys.stdout, poll_interval=0.05).run()
""")


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_children_get_their_stop_signal_when_the_supervisor_is_killed(tmp_path):
    term, intr = tmp_path / "term", tmp_path / "int"
    supervisor = subprocess.Popen([sys.executable, "-c", SUPERVISOR, CHILD, str(term), str(intr)],
                                  cwd=ROOT, stdout=subprocess.DEVNULL)
    children: list[psutil.Process] = []
    try:
        wait_for(lambda: all(p.exists() and p.read_text() == "ready" for p in (term, intr)),
                 30, "the children did not start")
        children = psutil.Process(supervisor.pid).children()
        assert len(children) == 2
        supervisor.kill()
        supervisor.wait(timeout=10)
        wait_for(lambda: term.read_text() == "SIGTERM" and intr.read_text() == "SIGINT", 10,
                 f"the children were not signalled: {term.read_text()}, {intr.read_text()}")
        wait_for(lambda: not any(running(c.pid) for c in children), 10, "a child stayed")
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
        for child in children:
            if running(child.pid):
                child.kill()


# A parent that starts a child, armed, and is killed between the child's fork and its arming:
# the preexec function first writes the child's pid and waits for its parent to die, so that
# the test kills the parent in that window, as a kill -9 of `manage.py up` can happen while it
# starts a child.
PARENT = textwrap.dedent("""
    import os, subprocess, sys, time
    from operations.process_death import die_with_parent
    pid_file, marker = sys.argv[1:]
    arm = die_with_parent()
    def slow_arm():
        parent = os.getppid()
        with open(pid_file, "w") as out:
            out.write(str(os.getpid()))
        deadline = time.monotonic() + 30
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.01)
        arm()
    subprocess.Popen([sys.executable, "-c", f"open({marker!r}, 'w').close()"],
                     preexec_fn=slow_arm)
    time.sleep(60)
""")


def test_child_whose_parent_died_before_arming_never_runs(tmp_path):
    pid_file, marker = tmp_path / "pid", tmp_path / "ran"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pid_file), str(marker)],
                              cwd=ROOT)
    child = None
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text().isdigit(), 30,
                 "the child was not forked")
        child = int(pid_file.read_text())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        wait_for(lambda: not running(child), 10, "the orphaned child is still running")
        assert not Path(marker).exists(), "the orphaned child ran its program"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if child is not None and running(child):
            os.kill(child, signal.SIGKILL)


DEAF_CHILD = textwrap.dedent("""
    import os, pathlib, signal, sys, time
    from operations.process_death import exit_when_orphaned
    signal.signal(signal.SIGTERM, lambda *_: None)  # noted, not acted on (a worker starting)
    watching = exit_when_orphaned(grace=0.5, poll=0.05)
    pathlib.Path(sys.argv[1]).write_text(f"{os.getpid()} {watching}")
    time.sleep(60)
""")


def test_a_child_deaf_to_its_stop_signal_still_goes_with_a_killed_supervisor(tmp_path):
    """The safety net for a child that misses its parent-death signal (a Celery worker that
    got it while starting): once the supervisor is gone and the grace is over, it is killed."""
    out = tmp_path / "deaf"
    sup = subprocess.Popen([sys.executable, "-c", SUPERVISOR.replace(
        'ChildSpec("int", [sys.executable, "-c", child, intr], stop_signal=signal.SIGINT)', ""),
        DEAF_CHILD, str(out), str(tmp_path / "unused")], cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: out.exists() and out.read_text(), 30, "the child never started")
        pid, watching = out.read_text().split()
        assert watching == "True"
        os.kill(sup.pid, signal.SIGKILL)
        sup.wait(timeout=10)
        time.sleep(0.3)
        assert running(int(pid))  # SIGTERM came and was ignored: the grace runs
        wait_for(lambda: not running(int(pid)), 10, "the deaf child outlived its supervisor")
    finally:
        if sup.poll() is None:
            sup.kill()
