"""The supervisor's child logs and restarts asked from outside (the Machines page's fetcher
pool actions, issue 37 item 9), with real child processes."""

import io
import os
import sys
import threading

import pytest

from operations.child_control import request_restart, restart_pending, take_requests
from operations.child_logs import ChildLog, last_lines, log_path
from operations.supervisor import ChildSpec, Supervisor
from tests.polling import wait_until

PY = sys.executable
TALKER = ("import os, sys, time\n"
          "print('hello from', os.getpid(), flush=True)\n"
          "print('to stderr', os.getpid(), file=sys.stderr, flush=True)\n"
          "time.sleep(60)\n")


def test_child_log_rotates_and_last_lines_reads_both_files(tmp_path):
    log = ChildLog(tmp_path, "fetchers", max_bytes=100)
    for n in range(30):
        log.write(f"line {n:02d}\n")
    log.close()
    assert (tmp_path / "fetchers.log.1").exists()
    assert os.path.getsize(tmp_path / "fetchers.log") <= 100
    assert last_lines(tmp_path, "fetchers", 3) == ["line 27", "line 28", "line 29"]
    both = last_lines(tmp_path, "fetchers", 12)
    assert both == [f"line {n:02d}" for n in range(18, 30)]
    assert last_lines(tmp_path, "nobody", 5) == []
    for bad in ("../etc/passwd", "", ".hidden", "a/b"):
        with pytest.raises(ValueError):
            log_path(tmp_path, bad)


def test_requests_are_taken_once(tmp_path):
    request_restart(tmp_path, "fetchers")
    request_restart(tmp_path, "fetchers")
    assert restart_pending(tmp_path, "fetchers")
    assert take_requests(tmp_path, ["web", "fetchers"]) == ["fetchers"]
    assert take_requests(tmp_path, ["web", "fetchers"]) == []


def test_a_restart_asked_starts_a_new_process_and_its_output_is_logged(tmp_path):
    out = io.StringIO()
    logs, control = tmp_path / "logs", tmp_path / "control"
    sup = Supervisor([ChildSpec("web", [PY, "-c", "import time; time.sleep(60)"]),
                      ChildSpec("fetchers", [PY, "-c", TALKER])], out=out,
                     poll_interval=0.05, grace=5, log_dir=logs, control_dir=control,
                     restartable=["fetchers"])
    thread = threading.Thread(target=sup.run, kwargs={"install_signals": False})
    thread.start()
    try:
        wait_until(lambda: sup.children[1].process is not None, 20, "the fetchers start")
        first = sup.children[1].process.pid
        wait_until(lambda: len(last_lines(logs, "fetchers")) == 2, 20, "its output logged")
        assert sorted(last_lines(logs, "fetchers")) == [f"hello from {first}",
                                                        f"to stderr {first}"]
        request_restart(control, "web")  # not restartable: left alone
        request_restart(control, "fetchers")
        wait_until(lambda: sup.children[1].process is not None
                   and sup.children[1].process.pid != first, 20, "the restart")
        second = sup.children[1].process.pid
        wait_until(lambda: len(last_lines(logs, "fetchers")) == 4, 20, "the new output")
        assert f"hello from {second}" in last_lines(logs, "fetchers")
        with pytest.raises(ProcessLookupError):
            os.kill(first, 0)  # the old process is gone
        assert sup.children[1].restarts == 1 and sup.children[0].restarts == 0
        assert f"hello from {second}" in out.getvalue()  # the console still shows it
        assert "restarting fetchers (asked from the admin)" in out.getvalue()
    finally:
        sup.request_stop()
        thread.join(timeout=60)
    assert not thread.is_alive() and "everything stopped" in out.getvalue()
