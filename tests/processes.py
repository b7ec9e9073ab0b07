"""The family of processes a test started: found, watched and, at the end, killed by pid.

A test's engine processes start children that start their own; once a parent dies, its children
are re-parented and no longer show under the process the test started. :class:`Family` keeps
every process it has ever seen below its root (by pid and start time, so a re-used pid is never
mistaken for one of them), and also every process whose environment has the test's own
VAR_DIRECTORY (inherited by all the engine's processes), or whose working directory is in it
(the embedded Redis, which overwrites its environment with its process title, works in
VAR_DIRECTORY/redis). Only these processes are ever killed, one by one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

from tests.conftest import ROOT, free_port, wait_for_port


def alive(pid: int) -> bool:
    """Whether a process of this pid exists (signal 0 asks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop(proc: subprocess.Popen, timeout: float = 20.0) -> None:
    """End a process the test started: SIGTERM, then SIGKILL after ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Family:
    def __init__(self, root: int, var_directory: str | os.PathLike[str]) -> None:
        self.root = root
        self.var = str(var_directory)
        self._known: dict[tuple[int, float], psutil.Process] = {}
        self.refresh()

    def _add(self, proc: psutil.Process) -> None:
        try:
            self._known.setdefault((proc.pid, proc.create_time()), proc)
        except psutil.Error:
            pass

    def refresh(self) -> None:
        """Add the root's descendants, the descendants of every member still alive, and the
        processes with this VAR_DIRECTORY."""
        try:
            root = psutil.Process(self.root)
            self._add(root)
            for proc in root.children(recursive=True):
                self._add(proc)
        except psutil.Error:
            pass
        for proc in list(self._known.values()):
            try:
                for child in proc.children(recursive=True):
                    self._add(child)
            except psutil.Error:
                continue
        for proc in psutil.process_iter():
            if proc.pid == os.getpid():
                continue
            try:
                if (proc.environ().get("VAR_DIRECTORY") == self.var
                        or proc.cwd().startswith(self.var + os.sep)):
                    self._add(proc)
            except psutil.Error:
                continue

    def alive(self) -> list[psutil.Process]:
        """The members still running (zombies, waiting for a parent to reap them, are not)."""
        out = []
        for proc in self._known.values():
            try:
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    out.append(proc)
            except psutil.Error:
                continue
        return out

    def commands(self) -> list[str]:
        """The command lines of the members alive."""
        out = []
        for proc in self.alive():
            try:
                out.append(" ".join(proc.cmdline()))
            except psutil.Error:
                continue
        return out

    def wait_until_gone(self, timeout: float) -> list[psutil.Process]:
        """Wait up to ``timeout`` seconds for every member (and anything they start meanwhile)
        to end; return the survivors."""
        deadline = time.monotonic() + timeout
        while True:
            self.refresh()
            left = self.alive()
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.1)

    def describe(self, procs: list[psutil.Process] | None = None) -> str:
        lines = []
        for proc in self.alive() if procs is None else procs:
            try:
                lines.append(f"{proc.pid} (parent {proc.ppid()}) {' '.join(proc.cmdline())[:160]}")
            except psutil.Error:
                lines.append(f"{proc.pid} (gone)")
        return "\n".join(lines)

    def kill(self) -> None:
        """SIGKILL every member still running (a test's clean-up)."""
        self.refresh()
        for proc in self.alive():
            try:
                proc.kill()  # psutil checks first that the pid is still this process
            except psutil.Error:
                continue


@contextmanager
def machine_web_server(tmp_path: Path, name: str, token: str
                       ) -> Iterator[tuple[Path, str, subprocess.Popen]]:
    """The web endpoint of "another machine" (a queue server's, say): gunicorn serving the site
    from its own VAR_DIRECTORY and WORK_DIRECTORY under ``tmp_path``, with the shard ``token``
    and no database or Redis of the test's. Yields (its work directory, its url, its process);
    stopped with its process group at the end."""
    work = tmp_path / f"{name}-work"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
                "VAR_DIRECTORY": str(tmp_path / f"{name}-var"), "WORK_DIRECTORY": str(work),
                "QUEUE_SERVER_TOKEN": token, "SECRET_KEY": f"{name}-machine-secret"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "searchsite.wsgi:application", "--bind",
         f"127.0.0.1:{port}", "--workers", "1", "--timeout", "60"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        wait_for_port(port, timeout=60)
        yield work, f"http://127.0.0.1:{port}/", proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
