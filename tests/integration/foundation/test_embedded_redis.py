"""The embedded Redis of ``manage.py up`` (issue 34, item 7), started from the argv ``up`` builds
for a temporary VAR_DIRECTORY: it listens on a unix socket only, 0600 in the private folder
VAR_DIRECTORY/redis, with no TCP port (one on loopback is open to every local user); Celery's
broker and results, redis-py and Django's cache reach it there with the password, and nothing
without it; a client that never reads its replies is disconnected before it grows the server
without end; a socket path too long for a unix socket stops ``up`` with a clear message; a
REDIS_URL of one's own is used as given; the crawler refuses a TCP Redis only."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import redis
from celery import Celery
from django.core.cache.backends.redis import RedisCache
from kombu import Connection
from kombu.exceptions import OperationalError

from crawler.machines.own_endpoints import listeners
from operations.redis_urls import MAX_UNIX_SOCKET_PATH_BYTES, redis_url_for, unix_socket_url
from tests.conftest import ROOT
from tests.embedded_redis import engine_env, running_embedded, settings_of_a_process
from tests.processes import stop

MIB = 1 << 20


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """One embedded Redis for the module's tests (each uses its own keys or connections)."""
    with running_embedded(tmp_path_factory.mktemp("embedded") / "var") as server:
        yield server


def private(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_it_listens_on_a_private_unix_socket_and_no_tcp_port(embedded):
    server = psutil.Process(embedded.proc.pid)
    assert server.net_connections(kind="inet") == []  # no TCP listener, not even on loopback
    assert str(embedded.socket) in [c.laddr for c in server.net_connections(kind="unix")]
    assert embedded.socket == embedded.var / "redis" / "redis.sock"
    assert stat.S_ISSOCK(embedded.socket.lstat().st_mode)
    assert private(embedded.socket) == 0o600 and private(embedded.socket.parent) == 0o700
    # every process of the machine is given the socket, with the password, as its REDIS_URL
    url = embedded.seen["redis_url"]
    assert url == unix_socket_url(embedded.socket, embedded.seen["password"], db=0)
    assert redis.Redis.from_url(url, socket_timeout=5).ping()


@pytest.fixture
def worker(embedded):
    """A Celery worker (queue ``fetch``) of the embedded engine: no REDIS_URL, so its broker
    and result backend are the settings' own, derived from VAR_DIRECTORY."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "searchsite", "worker", "-Q", "fetch", "-c", "1",
         "-n", f"socket{os.getpid()}@%h", "--without-gossip", "--without-mingle",
         "--loglevel", "WARNING"],
        cwd=ROOT, env=engine_env(embedded.var), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    yield proc
    stop(proc)


@pytest.mark.slow  # a Celery worker's start
def test_a_celery_task_goes_through_the_socket_with_the_password(embedded, worker):
    seen = embedded.seen
    assert seen["broker"] == seen["backend"]
    assert seen["broker"].startswith("redis+socket://:") and str(embedded.socket) in seen["broker"]
    client = Celery("socket-test", broker=seen["broker"], backend=seen["backend"],
                    set_as_current=False)  # shared tasks elsewhere stay on the project's app
    client.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"])
    try:
        result = client.send_task("crawler.machine_ping", args=[{"n": 7}], queue="fetch")
        reply = result.get(timeout=90)
        assert reply["echo"] == {"n": 7} and reply["pid"] != os.getpid()
        # the result is in the embedded Redis's database 0, where REDIS_URL looks
        engine = redis.Redis.from_url(seen["redis_url"], socket_timeout=5)
        assert engine.exists(f"celery-task-meta-{result.id}")
    finally:
        client.close()

    # the same socket without the password: refused by the broker, redis-py and a raw client
    anonymous = unix_socket_url(embedded.socket, "", db=0)
    with Connection(redis_url_for(anonymous, celery=True)) as broker, \
            pytest.raises(OperationalError, match="Authentication required"):
        broker.default_channel.client.ping()
    with pytest.raises(redis.AuthenticationError):
        redis.Redis.from_url(anonymous, socket_timeout=5).get("k")
    with socket.socket(socket.AF_UNIX) as raw:
        raw.settimeout(5)
        raw.connect(str(embedded.socket))
        raw.sendall(b"PING\r\n")
        assert raw.recv(100).startswith(b"-NOAUTH")


def flood(path: Path, password: str, most: int) -> tuple[bool, int]:
    """Pipeline PING on one connection to ``path`` (after AUTH ``password`` when given) and
    never read a reply, until the server closes the connection or ``most`` bytes are sent;
    (closed, bytes sent)."""
    chunk, sent = b"PING\r\n" * 50_000, 0
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        sock.connect(str(path))
        if password:
            sock.sendall(f"AUTH {password}\r\n".encode())
            assert sock.recv(5) == b"+OK\r\n"
        try:
            while sent < most:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            return True, sent
    return False, sent


@pytest.mark.parametrize("with_password", [True, False], ids=["authenticated", "anonymous"])
def test_a_client_that_never_reads_its_replies_is_disconnected(embedded, with_password):
    server = psutil.Process(embedded.proc.pid)
    engine = redis.Redis.from_url(embedded.seen["redis_url"], socket_timeout=5)
    clients = engine.info("clients")["connected_clients"]
    before = server.memory_info().rss
    password = embedded.seen["password"] if with_password else ""
    # 96 MiB of PING: 112 MiB of replies, or 560 MiB of NOAUTH errors, if nothing bounds them
    closed, sent = flood(embedded.socket, password, most=96 * MIB)
    assert closed, f"still connected after {sent / MIB:.0f} MiB of PING"
    grown = (server.memory_info().rss - before) / MIB
    assert grown < 48, f"the server grew by {grown:.0f} MiB"  # the 32 MB limit, and slack
    assert engine.ping()  # the server is still up, and the flooding client is gone
    deadline = time.monotonic() + 10
    while engine.info("clients")["connected_clients"] > clients:
        assert time.monotonic() < deadline, engine.client_list()
        time.sleep(0.1)


def test_djangos_redis_cache_works_over_the_socket(embedded):
    assert embedded.seen["redis_url"].startswith("unix://")
    cache = RedisCache(embedded.seen["redis_url"], {"KEY_PREFIX": "socket-test"})
    try:
        cache.set("k", {"a": 1}, 60)
        assert cache.get("k") == {"a": 1}
        assert cache.add("n", 1) and cache.incr("n") == 2
        assert cache.delete("k") and cache.get("k") is None
    finally:
        cache.close()
    anonymous = RedisCache(unix_socket_url(embedded.socket, "", db=0), {})
    with pytest.raises(redis.AuthenticationError):
        anonymous.get("n")


def test_a_socket_path_too_long_stops_up_with_the_fix(tmp_path):
    var = tmp_path / ("v" * (MAX_UNIX_SOCKET_PATH_BYTES - len(str(tmp_path))))
    path = var / "redis" / "redis.sock"
    up = subprocess.run([sys.executable, "manage.py", "up"], cwd=ROOT, env=engine_env(var),
                        capture_output=True, text=True, timeout=120)
    assert up.returncode == 1, up.stdout + up.stderr
    assert (f"the embedded Redis's socket {path} is {len(str(path))} bytes long, more than "
            f"the {MAX_UNIX_SOCKET_PATH_BYTES} a unix socket's address holds: set "
            "VAR_DIRECTORY to a shorter path") in up.stderr
    assert "[up] started" not in up.stdout
    assert not path.exists()


def test_a_redis_url_of_ones_own_is_used_as_given(tmp_path):
    own = "unix://:s3cret@/run/redis/redis.sock?db=2"
    seen = settings_of_a_process(tmp_path / "var", REDIS_URL=own)
    assert seen["redis_url"] == own and seen["argv"] is False  # up starts no Redis
    assert seen["broker"] == seen["backend"] == (
        "redis+socket://:s3cret@/run/redis/redis.sock?virtual_host=2")
    assert not (tmp_path / "var" / "redis_password").exists()


@pytest.mark.django_db
def test_the_crawler_refuses_a_tcp_redis_and_has_no_port_to_refuse_for_a_socket(settings):
    settings.WEB_BIND, settings.QUEUE_SERVER_BASE_URL = "127.0.0.1:8000", ""
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    settings.REDIS_URL = "rediss://:pw@redis.example:6390/0"
    assert ("redis.example", 6390) in listeners()
    settings.REDIS_URL = "redis://127.0.0.1/0"
    with_tcp = set(listeners())
    assert ("127.0.0.1", 6379) in with_tcp
    settings.REDIS_URL = unix_socket_url("/srv/var/redis/redis.sock", "pw")
    # the web server (and a PostgreSQL database, where the tests use one) stay; no Redis
    assert set(listeners()) == with_tcp - {("127.0.0.1", 6379)}
    assert ("127.0.0.1", 8000) in listeners()
