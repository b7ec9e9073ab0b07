"""The web server as `manage.py up` starts it (issue 18, item 4; issue 34, item 1): half-open
connections that stall mid request line do not block it, 50 clients that trickle their headers do
not slow the search page, and a long request line reaches the application."""

import os
import socket
import subprocess
import sys
import threading
import time

import pytest
import requests
from django.conf import settings

from operations.management.commands.up import web_server_argv
from tests.conftest import ROOT, free_port, sqlite_copy, wait_for_port


@pytest.fixture(scope="module")
def web_server(tmp_path_factory, migrated_sqlite):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    home = tmp_path_factory.mktemp("home")
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "PYTHONUNBUFFERED": "1",
                "VAR_DIRECTORY": str(tmp_path_factory.mktemp("var")), "HOME": str(home),
                "DATABASE_URL": sqlite_copy(migrated_sqlite, tmp_path_factory.mktemp("db"))})
    argv = web_server_argv(sys.executable, f"127.0.0.1:{port}", settings.WEB_WORKERS,
                           settings.WEB_WORKER_CONNECTIONS)
    log = open(tmp_path_factory.mktemp("log") / "gunicorn.log", "w+")
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, timeout=30)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:  # every worker booted (the port opens before the app loads)
            try:
                if requests.get(f"{base}/admin/login/", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, log.read()
            time.sleep(0.2)
        yield base, port, home
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def test_four_stalled_connections_do_not_block_a_normal_request(web_server):
    base, port, _ = web_server
    stalled = []
    try:
        for _ in range(4):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /admin/lo")  # half a request line, then nothing
            stalled.append(sock)
        time.sleep(0.5)  # the server has accepted them and is waiting for the rest
        started = time.monotonic()
        response = requests.get(f"{base}/admin/login/", timeout=2)
        assert response.status_code == 200
        assert time.monotonic() - started < 2
    finally:
        for sock in stalled:
            sock.close()


def test_a_long_request_line_reaches_the_application(web_server):
    base, _, _ = web_server
    response = requests.get(f"{base}/admin/login/", params={"next": "/" + "q" * 6000},
                            timeout=5)
    assert response.status_code == 200  # the app's page, not gunicorn's 400 "line too long"


def test_no_control_socket_shared_with_other_instances(web_server):
    _, _, home = web_server
    assert not (home / ".gunicorn").exists()


class Tricklers:
    """``count`` connections that each send a request line and then one header line every
    ``interval`` seconds, never ending their headers (a slowloris client); one the server
    closes is opened again at once, so ``count`` are always trickling."""

    def __init__(self, port: int, count: int, interval: float) -> None:
        self.port, self.interval = port, interval
        self.socks = [self._open() for _ in range(count)]
        self.reopened = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.sendall(b"GET /?q=slow HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        return sock

    def _run(self) -> None:
        line = 0
        while not self.stop.wait(self.interval):
            line += 1
            for i, sock in enumerate(self.socks):
                try:
                    sock.sendall(f"X-Trickle-{line}: {'x' * 20}\r\n".encode())
                except OSError:
                    sock.close()
                    self.reopened += 1
                    try:
                        self.socks[i] = self._open()
                    except OSError:
                        pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        for sock in self.socks:
            sock.close()


@pytest.mark.long
@pytest.mark.slow
def test_search_page_answers_within_a_second_while_50_clients_trickle_headers(web_server):
    base, port, _ = web_server
    assert requests.get(f"{base}/", params={"q": "test"}, timeout=5).status_code == 200
    tricklers = Tricklers(port, count=50, interval=3.0)
    slow = []
    try:
        time.sleep(1)  # every trickling connection is accepted and has sent its first line
        end = time.monotonic() + 60
        probes = 0
        while time.monotonic() < end:
            started = time.monotonic()
            try:
                status = requests.get(f"{base}/", params={"q": "test"}, timeout=5).status_code
            except requests.RequestException as exc:
                status = repr(exc)
            took = time.monotonic() - started
            probes += 1
            if status != 200 or took >= 1:
                slow.append((round(started - end + 60, 1), status, round(took, 2)))
            time.sleep(max(0.0, 0.5 - took))
    finally:
        tricklers.close()
    assert not slow, f"{len(slow)} of {probes} probes failed or took 1 s or more: {slow[:10]}"
    assert probes >= 60
