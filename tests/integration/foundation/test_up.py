"""`manage.py up` in a subprocess: the engine starts on embedded defaults, an admin logs in over
HTTP, the MCP server lists its tools, a crashed child is restarted, and Ctrl-C (SIGINT) stops everything."""

import asyncio
import os
import re
import signal
import stat
import subprocess
import sys
import time

import psutil
import pytest
import requests
from mcp import Client

from tests.conftest import ROOT, free_port


def manage(args, env, **kwargs):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, **kwargs)


@pytest.mark.slow
def test_up_serves_admin_login_and_stops_cleanly(tmp_path):
    web_port, mcp_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update({
        "VAR_DIRECTORY": str(tmp_path / "var"), "WEB_BIND": f"127.0.0.1:{web_port}",
        "MCP_BIND": f"127.0.0.1:{mcp_port}",
        "NUM_FETCHERS": "1", "WEB_WORKERS": "1",
        "DJANGO_SETTINGS_MODULE": "searchsite.settings.base", "PYTHONUNBUFFERED": "1",
    })
    assert manage(["migrate", "--noinput"], env).returncode == 0
    created = manage(["ensure_admin"], env)
    match = re.search(r"user 'admin', password '([^']+)'", created.stdout)
    assert match, created.stdout + created.stderr
    password = match.group(1)
    assert "exists" in manage(["ensure_admin"], env).stdout  # printed once only

    log = open(tmp_path / "up.log", "w+")
    proc = subprocess.Popen([sys.executable, "manage.py", "up"], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{web_port}"
    try:
        deadline = time.monotonic() + 90
        while "all processes are up" not in read(log):
            assert proc.poll() is None, read(log)
            assert time.monotonic() < deadline, read(log)
            time.sleep(0.2)
        text = read(log)
        assert f"Admin:       {base}/admin/" in text and f"Search page: {base}/" in text
        # the embedded Redis: no TCP port at all, a 0600 socket in the 0700 folder var/redis
        redis_pid = int(re.search(r"started redis \(pid (\d+)\)", text).group(1))
        assert psutil.Process(redis_pid).net_connections(kind="inet") == []
        sock = tmp_path / "var" / "redis" / "redis.sock"
        assert str(sock) in [c.laddr for c in psutil.Process(redis_pid).net_connections("unix")]
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700

        session = requests.Session()
        login = session.get(f"{base}/admin/login/", timeout=10)
        token = session.cookies["csrftoken"]
        response = session.post(
            f"{base}/admin/login/?next=/admin/",
            data={"username": "admin", "password": password, "csrfmiddlewaretoken": token,
                  "next": "/admin/"},
            headers={"Referer": login.url}, timeout=10)
        assert response.status_code == 200 and "Crawls" in response.text
        assert "Log out" in response.text or "logout" in response.text
        assert session.get(f"{base}/static/admin/css/base.css", timeout=10).status_code == 200

        # the agent API's MCP server (issue 38), on loopback, answers the SDK's own client
        mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
        assert f"MCP server:  {mcp_url}" in text
        assert {"search", "read", "cached", "context"} <= asyncio.run(tool_names(mcp_url))

        # a crashed child is reported and restarted
        pid = int(re.search(r"started fetchers \(pid (\d+)\)", text).group(1))
        os.killpg(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while read(log).count("started fetchers") < 2:
            assert time.monotonic() < deadline, read(log)
            time.sleep(0.2)
        assert "fetchers exited with code -9" in read(log)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            raise
    text = read(log)
    assert code == 0, text
    assert "everything stopped" in text
    for name in ("redis", "web", "mcp", "fetchers", "analysis", "qs0-inbox", "queue-server-0",
                 "scheduler"):
        assert f"stopped {name}" in text
    # each child's output is on the console and in its log (the Machines page reads them)
    logs = tmp_path / "var" / "logs"
    assert {p.name for p in logs.glob("*.log")} >= {
        f"{name}.log" for name in ("redis", "web", "fetchers", "scheduler")}
    web_log = (logs / "web.log").read_text()
    assert "Listening at: http://127.0.0.1" in web_log and "Listening at" in text
    with pytest.raises(requests.ConnectionError):
        requests.get(base, timeout=2)
    for pid in re.findall(r"\(pid (\d+)\)", text):
        assert not _alive(int(pid)), f"child {pid} outlived the supervisor"


async def tool_names(url: str) -> set[str]:
    async with Client(url) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def read(handle) -> str:
    handle.flush()
    handle.seek(0)
    return handle.read()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
