"""Secrets of a machine run on embedded defaults: the embedded Redis asks for a password and
knows no CONFIG, and QUEUE_SERVER_TOKEN is a secret of its own. Each settings load runs in a
fresh process with a temporary VAR_DIRECTORY, as every process of the engine loads them."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest
import redis

from operations.redis_urls import redis_url_for
from tests.embedded_redis import running_embedded, settings_of_a_process


def private(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def ask(path: Path, *lines: str) -> bytes:
    """Send inline commands on a fresh connection to the unix socket ``path`` that gives no
    password; the replies."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(str(path))
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
    with running_embedded(tmp_path / "var") as server:
        yield server


def test_embedded_redis_asks_for_the_generated_password_and_refuses_config(embedded):
    var, seen = embedded.var, embedded.seen
    password = (var / "redis_password").read_text().strip()
    assert len(password) >= 32 and private(var / "redis_password") == 0o600
    # the password is in a private config file, not on the command line `ps` shows
    assert not any(password in arg for arg in seen["argv"])
    assert private(var / "redis") == 0o700 and private(var / "redis" / "redis.conf") == 0o600

    # a client without the password is refused; CONFIG does not even exist
    replies = ask(embedded.socket, "PING", "KEYS *", "FLUSHALL", "CONFIG SET dir /tmp").decode()
    *refused, config = replies.split("\r\n")[:4]
    assert refused == ["-NOAUTH Authentication required."] * 3, replies
    assert config.startswith("-ERR unknown command `CONFIG`"), replies

    # every process of the engine (web, workers, queue servers, commands) uses REDIS_URL, and
    # Celery the same server, password and database in its own form
    assert seen["broker"] == seen["backend"] == redis_url_for(seen["redis_url"], celery=True)
    engine = redis.Redis.from_url(seen["redis_url"], socket_timeout=2)
    assert engine.ping() and engine.set("k", "v") and engine.get("k") == b"v"
    for command in (("CONFIG", "GET", "dir"), ("CONFIG", "SET", "dir", "/tmp"),
                    ("DEBUG", "SLEEP", "0"), ("MODULE", "LIST")):
        with pytest.raises(redis.ResponseError, match="unknown command"):
            engine.execute_command(*command)

    # a second process (or a restart) reads the same password: it is generated once
    again = settings_of_a_process(var)
    assert again["redis_url"] == seen["redis_url"]
    assert redis.Redis.from_url(again["redis_url"], socket_timeout=2).get("k") == b"v"


def test_queue_server_token_is_its_own_generated_secret(tmp_path):
    var = tmp_path / "var"
    first = settings_of_a_process(var)
    token = (var / "queue_server_token").read_text().strip()
    assert first["token"] == token and len(token) >= 32
    assert token != first["secret_key"] and token not in first["redis_url"]
    assert private(var / "queue_server_token") == 0o600
    assert settings_of_a_process(var)["token"] == token
    # the environment's value wins (several machines share one); an outside Redis needs no
    # embedded password
    shared = settings_of_a_process(tmp_path / "other", QUEUE_SERVER_TOKEN="shared",
                                   REDIS_URL="redis://127.0.0.1:1/0")
    assert shared["token"] == "shared" and shared["redis_url"] == "redis://127.0.0.1:1/0"
    assert not (tmp_path / "other" / "queue_server_token").exists()
    assert not (tmp_path / "other" / "redis_password").exists()
