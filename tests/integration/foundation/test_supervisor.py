"""The supervisor with real child processes (tiny Python programs)."""

import io
import sys
import threading
import time

from operations.supervisor import ChildSpec, Supervisor

PY = sys.executable


def run_for(supervisor: Supervisor, seconds: float) -> None:
    thread = threading.Thread(target=supervisor.run, kwargs={"install_signals": False})
    thread.start()
    time.sleep(seconds)
    supervisor.request_stop()
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_crashing_child_is_reported_and_restarted_with_backoff():
    out = io.StringIO()
    specs = [
        ChildSpec("steady", [PY, "-c", "import time; time.sleep(60)"]),
        ChildSpec("crasher", [PY, "-c", "import sys; sys.exit(3)"]),
    ]
    sup = Supervisor(specs, out=out, backoff_initial=0.2, backoff_max=0.8, stable_after=30,
                     poll_interval=0.05)
    run_for(sup, 2.5)
    text = out.getvalue()
    crasher = sup.children[1]
    assert "crasher exited with code 3" in text
    assert crasher.restarts >= 2
    assert set(crasher.history) == {3}
    # back-off grows: 0.2, 0.4, 0.8, 0.8 ...; so far fewer restarts than without it
    assert crasher.restarts <= 5
    assert "restarting in 1s" in text or "restarting in 0s" in text
    assert sup.children[0].restarts == 0
    assert "stopped steady" in text and "everything stopped" in text


def test_stop_escalates_to_kill_for_a_child_that_ignores_sigterm():
    out = io.StringIO()
    ignore = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
              "print('ready', flush=True); time.sleep(60)")
    sup = Supervisor([ChildSpec("stubborn", [PY, "-c", ignore])], out=out, grace=0.5,
                     poll_interval=0.05)
    started = time.monotonic()
    run_for(sup, 0.8)
    assert "did not stop within" in out.getvalue()
    assert time.monotonic() - started < 10


def test_child_that_never_becomes_ready_stops_the_start():
    out = io.StringIO()
    sup = Supervisor(
        [ChildSpec("never", [PY, "-c", "import time; time.sleep(60)"],
                   ready=lambda: False, ready_timeout=0.5),
         ChildSpec("after", [PY, "-c", "import time; time.sleep(60)"])],
        out=out, poll_interval=0.05)
    run_for(sup, 1.2)
    assert "never did not become ready" in out.getvalue()
    assert "started after" not in out.getvalue()
