"""The processes the cluster test starts: each in its own session (so it and its children are
stopped together, by process group), its output in a log file of the run's temporary folder."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from .netns import Network

ROOT = Path(__file__).resolve().parents[2]


class Processes:
    def __init__(self, net: Network, logs: Path) -> None:
        self.net = net
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        self.running: dict[str, subprocess.Popen] = {}

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def start(self, name: str, role: str, argv: list[str], env: dict[str, str],
              cwd: Path = ROOT) -> subprocess.Popen:
        """Start ``argv`` on machine ``role`` as ``name`` (output appended to its log)."""
        with open(self.log(name), "a") as out:
            proc = subprocess.Popen(self.net.argv(role, argv), cwd=cwd, env=env, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.running[name] = proc
        return proc

    def run(self, role: str, argv: list[str], env: dict[str, str], timeout: float = 300,
            check: bool = True) -> subprocess.CompletedProcess:
        """Run ``argv`` on machine ``role`` to its end; its output is returned."""
        done = subprocess.run(self.net.argv(role, argv), cwd=ROOT, env=env, text=True,
                              capture_output=True, timeout=timeout)
        if check and done.returncode != 0:
            raise RuntimeError(f"on {role}: {' '.join(argv[:4])}... exited {done.returncode}:"
                               f"\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    def wait_for(self, name: str, text: str, timeout: float) -> None:
        """Until ``text`` is in ``name``'s log; raises if it ends or the time is up."""
        deadline = time.monotonic() + timeout
        while text not in self.tail(name, 10**7):
            proc = self.running.get(name)
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}):\n{self.tail(name)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: no {text!r} after {timeout:.0f}s:\n"
                                   f"{self.tail(name)}")
            time.sleep(0.3)

    def tail(self, name: str, size: int = 3000) -> str:
        try:
            data = self.log(name).read_bytes()
        except FileNotFoundError:
            return ""
        return data[-size:].decode(errors="replace")

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
        """Stop ``name``'s process group: ``sig``, then SIGKILL after ``timeout`` seconds."""
        proc = self.running.pop(name, None)
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=timeout)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)

    def forget(self, name: str) -> None:
        """A process killed otherwise (kill -9 of a machine): reap it, stop tracking it."""
        proc = self.running.pop(name, None)
        if proc is not None:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)

    def stop_all(self, order: list[str] | None = None) -> None:
        names = [n for n in (order or []) if n in self.running]
        names += [n for n in list(self.running) if n not in names]
        for name in names:
            self.stop(name)
