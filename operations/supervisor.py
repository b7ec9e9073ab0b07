"""A small process supervisor for ``manage.py up`` (``operations.management.commands.up``): start
children in order, restart the ones that crash (with exponential back-off), and stop them all
cleanly on Ctrl-C or SIGTERM. Plain Python (no Django), in the operations app, which every app
may import and which imports none of them.

It reads no settings: the command builds the list of :class:`ChildSpec` and passes it in.

Children run in their own sessions, so a Ctrl-C in the terminal reaches only the supervisor, which
then stops the children in reverse start order (SIGTERM, then SIGKILL after a grace period).

A supervisor that is itself killed (kill -9, the out-of-memory killer) cannot stop anything, so
each child is started armed with its ``stop_signal`` as its parent-death signal
(:mod:`operations.process_death`): the kernel sends it the moment the supervisor dies, and every
child shuts down as it does on an ordinary stop, taking its own workers along. The supervisor's
``run`` must therefore be called in a thread that lives as long as the children (the main
thread in ``manage.py up``).

With a ``log_dir``, each child's output (stdout and stderr) comes through a pipe: a thread per
child copies every line to ``out`` (the console, as before) and to the child's log
(:mod:`.child_logs`), which the admin's Machines page reads. With a ``control_dir``, a restart
asked there (:mod:`.child_control`) for one of the ``restartable`` children is done at the next
poll: the child is stopped as on Ctrl-C (its stop signal, then SIGKILL after the grace period)
and started again at once, without back-off.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .child_control import take_requests
from .child_logs import ChildLog
from .process_death import SUPERVISOR_ENV, die_with_parent

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ChildSpec:
    name: str
    argv: Sequence[str]
    env: dict[str, str] | None = None
    cwd: str | None = None
    ready: Callable[[], bool] | None = None  # True once the child serves
    ready_timeout: float = 30.0
    stop_signal: int = signal.SIGTERM  # also sent by the kernel if the supervisor dies


@dataclass(slots=True)
class _Child:
    spec: ChildSpec
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restarts: int = 0
    backoff: float = 0.0
    restart_at: float | None = None
    history: list[int] = field(default_factory=list)
    log: ChildLog | None = None


class Supervisor:
    """Run children until asked to stop.

    ``backoff_initial`` doubles on each consecutive crash up to ``backoff_max``; a child that ran
    for ``stable_after`` seconds counts as healthy again and its back-off is reset.
    """

    def __init__(
        self,
        specs: Sequence[ChildSpec],
        out: TextIO,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        stable_after: float = 30.0,
        grace: float = 15.0,
        poll_interval: float = 0.2,
        ready_message: str = "",
        log_dir: Path | None = None,
        control_dir: Path | None = None,
        restartable: Sequence[str] = (),
    ) -> None:
        """``ready_message``: printed as it is after "all processes are up" (where to open
        the engine, say), so that it is what the console shows last. ``log_dir``,
        ``control_dir``, ``restartable``: see the module docstring."""
        if len({s.name for s in specs}) != len(specs):
            raise ValueError("child names must be unique")
        self._children = [_Child(spec) for spec in specs]
        self._out = out
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._stable_after = stable_after
        self._grace = grace
        self._poll = poll_interval
        self._stopping = False
        self._ready_message = ready_message
        self._log_dir = log_dir
        self._control_dir = control_dir
        self._restartable = [n for n in restartable if n in {s.name for s in specs}]
        self._out_lock = threading.Lock()

    def say(self, message: str) -> None:
        self._write(f"[up] {message}\n")

    def _write(self, text: str) -> None:
        with self._out_lock:
            self._out.write(text)
            self._out.flush()

    def _copy_output(self, child: _Child, stream) -> None:
        """The thread that copies a child's output to the console and its log."""
        log = child.log
        with stream:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace")
                self._write(line if line.endswith("\n") else line + "\n")
                if log is not None:
                    try:
                        log.write(line)
                    except OSError:  # a full disk loses log lines, never the child
                        pass

    def request_stop(self, *_: object) -> None:
        if not self._stopping:
            self.say("stopping (Ctrl-C again is not needed; please wait)")
        self._stopping = True

    def _spawn(self, child: _Child) -> None:
        env = {**os.environ, **(child.spec.env or {}), SUPERVISOR_ENV: str(os.getpid())}
        piped = self._log_dir is not None
        if piped and child.log is None:
            child.log = ChildLog(self._log_dir, child.spec.name)
        child.process = subprocess.Popen(
            list(child.spec.argv), env=env, cwd=child.spec.cwd, start_new_session=True,
            stdin=subprocess.DEVNULL, preexec_fn=die_with_parent(child.spec.stop_signal),
            stdout=subprocess.PIPE if piped else None,
            stderr=subprocess.STDOUT if piped else None,
        )
        if piped:
            threading.Thread(target=self._copy_output, args=(child, child.process.stdout),
                             name=f"output-{child.spec.name}", daemon=True).start()
        child.started_at = time.monotonic()
        child.restart_at = None
        self.say(f"started {child.spec.name} (pid {child.process.pid})")

    def _wait_ready(self, child: _Child) -> bool:
        probe = child.spec.ready
        if probe is None:
            return True
        deadline = time.monotonic() + child.spec.ready_timeout
        while time.monotonic() < deadline and not self._stopping:
            if child.process is not None and child.process.poll() is not None:
                return False
            try:
                if probe():
                    return True
            except Exception:  # a probe that cannot connect yet is simply "not ready"
                pass
            time.sleep(0.1)
        return False

    def start(self) -> bool:
        """Start every child in order, each after the previous one is ready."""
        for child in self._children:
            if self._stopping:
                return False
            self._spawn(child)
            if not self._wait_ready(child):
                if not self._stopping:
                    self.say(f"{child.spec.name} did not become ready within "
                             f"{child.spec.ready_timeout:.0f}s")
                return False
        return True

    def _check(self, child: _Child, now: float) -> None:
        proc = child.process
        if proc is not None and proc.poll() is not None:
            code = proc.returncode
            child.history.append(code)
            child.process = None
            ran = now - child.started_at
            if ran >= self._stable_after:
                child.backoff = 0.0
            child.backoff = min(self._backoff_max,
                                child.backoff * 2 if child.backoff else self._backoff_initial)
            child.restart_at = now + child.backoff
            self.say(f"{child.spec.name} exited with code {code} after {ran:.1f}s; "
                     f"restarting in {child.backoff:.0f}s")
        if child.process is None and child.restart_at is not None and now >= child.restart_at:
            child.restarts += 1
            self._spawn(child)

    def run(self, install_signals: bool = True) -> int:
        if install_signals:
            signal.signal(signal.SIGINT, self.request_stop)
            signal.signal(signal.SIGTERM, self.request_stop)
        try:
            if not self.start():
                if not self._stopping:
                    self.say("start-up failed; stopping what was started")
                    return 1
                return 0
            self.say("all processes are up; press Ctrl-C to stop")
            if self._ready_message:
                self._out.write(self._ready_message + "\n")
                self._out.flush()
            while not self._stopping:
                now = time.monotonic()
                self._restart_asked()
                for child in self._children:
                    self._check(child, now)
                time.sleep(self._poll)
        finally:
            self.stop_all()
        return 0

    def _restart_asked(self) -> None:
        """Restart the children whose restart was asked in ``control_dir``."""
        if self._control_dir is None or not self._restartable:
            return
        for name in take_requests(self._control_dir, self._restartable):
            child = next(c for c in self._children if c.spec.name == name)
            self.say(f"restarting {name} (asked from the admin)")
            self._stop_child(child)
            child.restarts += 1
            child.backoff = 0.0
            self._spawn(child)

    def _stop_child(self, child: _Child) -> None:
        """Stop one child: its stop signal to its process group, SIGKILL after the grace."""
        proc = child.process
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, child.spec.stop_signal)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=self._grace)
            except subprocess.TimeoutExpired:
                self.say(f"{child.spec.name} did not stop within {self._grace:.0f}s; killing it")
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        child.process = None
        self.say(f"stopped {child.spec.name}")

    def stop_all(self) -> None:
        """Stop children one by one, last started first, so that Redis outlives the workers."""
        for child in reversed(self._children):
            self._stop_child(child)
        for child in self._children:
            if child.log is not None:
                child.log.close()
        self.say("everything stopped")

    @property
    def children(self) -> list[_Child]:
        return self._children
