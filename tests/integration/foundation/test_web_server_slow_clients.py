"""The web server as `manage.py up` starts it (issue 18, item 4): half-open connections that
stall mid request line do not block it, and a long request line reaches the application."""

import os
import socket
import subprocess
import sys
import time

import pytest
import requests
from django.conf import settings

from operations.management.commands.up import web_server_argv
from tests.conftest import ROOT, free_port, wait_for_port


@pytest.fixture(scope="module")
def web_server(tmp_path_factory):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    home = tmp_path_factory.mktemp("home")
    env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "PYTHONUNBUFFERED": "1",
                "VAR_DIRECTORY": str(tmp_path_factory.mktemp("var")), "HOME": str(home)})
    argv = web_server_argv(sys.executable, f"127.0.0.1:{port}", settings.WEB_WORKERS,
                           settings.WEB_THREADS)
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
