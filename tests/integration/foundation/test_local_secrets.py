"""Secrets of a machine run on embedded defaults: the embedded Redis asks for a password and
knows no CONFIG, and QUEUE_SERVER_TOKEN is a secret of its own. Each settings load runs in a
fresh process with a temporary VAR_DIRECTORY, as every process of the engine loads them."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tests.conftest import ROOT, free_port, wait_for_port

SETTINGS_OF_A_PROCESS = """
import json, django
django.setup()
from django.conf import settings
from operations.management.commands.up import embedded_redis_spec
argv = settings.EMBEDDED_REDIS and list(embedded_redis_spec(
    settings.EMBEDDED_REDIS_PORT, settings.VAR_DIRECTORY / "redis",
    settings.EMBEDDED_REDIS_PASSWORD).argv)
print(json.dumps({"argv": argv, "redis_url": settings.REDIS_URL,
                  "broker": settings.CELERY_BROKER_URL, "secret_key": settings.SECRET_KEY,
                  "token": settings.QUEUE_SERVER_TOKEN}))
"""


def settings_of_a_process(var: Path, port: int, **extra: str) -> dict:
    """The settings a process of the engine sees with ``var`` as VAR_DIRECTORY, and the argv
    of the embedded Redis that ``manage.py up`` builds from them."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("REDIS_URL", "DATABASE_URL", "QUEUE_SERVER_TOKEN", "SECRET_KEY")}
    env.update({"VAR_DIRECTORY": str(var), "EMBEDDED_REDIS_PORT": str(port),
                "DJANGO_SETTINGS_MODULE": "searchsite.settings.base", **extra})
    out = subprocess.run([sys.executable, "-c", SETTINGS_OF_A_PROCESS], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def private(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def ask(port: int, *lines: str) -> bytes:
    """Send inline commands on a fresh connection that gives no password; the replies."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall("".join(f"{line}\r\n" for line in lines).encode())
        reply = b""
        while reply.count(b"\r\n") < len(lines):
            chunk = sock.recv(4096)
            if not chunk:
                break
            reply += chunk
        return reply


@pytest.fixture
def embedded(tmp_path):
    """The embedded Redis started from the argv ``manage.py up`` gives it."""
    var, port = tmp_path / "var", free_port()
    seen = settings_of_a_process(var, port)
    proc = subprocess.Popen(seen["argv"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port)
        yield var, port, seen
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_embedded_redis_asks_for_the_generated_password_and_refuses_config(embedded):
    var, port, seen = embedded
    password = (var / "redis_password").read_text().strip()
    assert len(password) >= 32 and private(var / "redis_password") == 0o600
    # the password is in a private config file, not on the command line `ps` shows
    assert not any(password in arg for arg in seen["argv"])
    assert private(var / "redis") == 0o700 and private(var / "redis" / "redis.conf") == 0o600

    # a client without the password is refused; CONFIG does not even exist
    replies = ask(port, "PING", "KEYS *", "FLUSHALL", "CONFIG SET dir /tmp").decode()
    *refused, config = replies.split("\r\n")[:4]
    assert refused == ["-NOAUTH Authentication required."] * 3, replies
    assert config.startswith("-ERR unknown command `CONFIG`"), replies

    # every process of the engine (web, workers, queue servers, commands) uses REDIS_URL
    assert seen["broker"] == seen["redis_url"]
    engine = redis.Redis.from_url(seen["redis_url"], socket_timeout=2)
    assert engine.ping() and engine.set("k", "v") and engine.get("k") == b"v"
    for command in (("CONFIG", "GET", "dir"), ("CONFIG", "SET", "dir", "/tmp"),
                    ("DEBUG", "SLEEP", "0"), ("MODULE", "LIST")):
        with pytest.raises(redis.ResponseError, match="unknown command"):
            engine.execute_command(*command)

    # a second process (or a restart) reads the same password: it is generated once
    again = settings_of_a_process(var, port)
    assert again["redis_url"] == seen["redis_url"]
    assert redis.Redis.from_url(again["redis_url"], socket_timeout=2).get("k") == b"v"


def test_queue_server_token_is_its_own_generated_secret(tmp_path):
    var = tmp_path / "var"
    first = settings_of_a_process(var, free_port())
    token = (var / "queue_server_token").read_text().strip()
    assert first["token"] == token and len(token) >= 32
    assert token != first["secret_key"] and token not in first["redis_url"]
    assert private(var / "queue_server_token") == 0o600
    assert settings_of_a_process(var, free_port())["token"] == token
    # the environment's value wins (several machines share one); an outside Redis needs no
    # embedded password
    shared = settings_of_a_process(tmp_path / "other", free_port(), QUEUE_SERVER_TOKEN="shared",
                                   REDIS_URL="redis://127.0.0.1:1/0")
    assert shared["token"] == "shared" and shared["redis_url"] == "redis://127.0.0.1:1/0"
    assert not (tmp_path / "other" / "queue_server_token").exists()
    assert not (tmp_path / "other" / "redis_password").exists()
