"""``manage.py up``: run the whole engine on one machine under one supervisor.

Starts, in order: the embedded Redis (only when REDIS_URL is unset), the web server (gunicorn),
the agent API's MCP server (``run_mcp_server``, streamable HTTP on MCP_BIND, loopback by
default; none when MCP_BIND is empty), the fetcher workers (Celery, queue ``fetch``, NUM_FETCHERS processes), one worker per queue
server (queue ``qs.<n>``) beside its ``run_queue_server`` (queue servers 0 .. NUM_QUEUE_SERVERS-1,
or only those QUEUE_SERVERS_HERE names: the machines of one engine share the numbers out) and,
on a machine that runs queue servers, the link-analysis worker
(queue ``analysis``: one run at a time, each in a fresh process so that a large graph's memory
is given back when the run ends) and, on the machine of queue server 0, the scheduler (Celery
beat: the periodic tasks of ``CELERY_BEAT_SCHEDULE``, such as the news sources' update, sent to
the workers; one per engine). Ctrl-C stops everything; a crashed child is restarted with
back-off; if ``up`` itself is killed, its children stop on their own (``operations.supervisor``).
Each child's output goes to the console and to ``VAR_DIRECTORY/logs/<child>.log`` (its recent
lines are on the admin's Machines page, which can also ask for a restart of the fetcher pool:
``operations.child_logs``, ``operations.child_control``).

Before it starts anything, ``up`` makes what an earlier run left in VAR_DIRECTORY, WORK_DIRECTORY
and the SQLite database private to its user (``operations.private_files``): it and every child
run with umask 077.

One ``up`` per VAR_DIRECTORY: it holds ``VAR_DIRECTORY/up.lock`` for its whole life
(``operations.instance_lock``), and a second one refuses to start, naming the running one's pid.

The embedded Redis (``operations.embedded_redis``) listens on a unix socket in the private
folder ``VAR_DIRECTORY/redis`` only, no TCP port, asks for the password generated into
``var/redis_password`` (``settings.REDIS_URL`` carries both to every process of the machine)
and knows no CONFIG, DEBUG or MODULE command: other local users can neither reach it nor read
or empty the queues, nor have it write files.
"""

from __future__ import annotations

import shutil
import socket
import sys
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from operations.child_control import CONTROL_DIR, RESTARTABLE
from operations.child_logs import LOG_DIR
from operations.embedded_redis import embedded_redis_spec
from operations.instance_lock import AlreadyRunning, InstanceLock
from operations.private_files import make_private
from operations.supervisor import ChildSpec, Supervisor

LOCK_FILE = "up.lock"  # in VAR_DIRECTORY


def private_paths() -> list[Path]:
    """What :func:`operations.private_files.make_private` fixes when ``up`` starts:
    VAR_DIRECTORY, WORK_DIRECTORY (when it is elsewhere) and a SQLite database's files."""
    paths = [settings.VAR_DIRECTORY, settings.WORK_DIRECTORY]
    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3") and str(database["NAME"]) != ":memory:":
        name = str(database["NAME"])
        paths += [Path(name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
    return paths


def _http_ready(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as response:
        return response.status < 500


def _tcp_ready(host: str, port: int) -> bool:
    with socket.create_connection((host, port), timeout=2):
        return True


def mcp_spec(python: str, base: str, bind: str) -> ChildSpec | None:
    """The MCP server's child (``manage.py run_mcp_server --bind``), None without a bind."""
    host, _, port = bind.rpartition(":")
    if not bind:
        return None
    if not host or not port.isdigit():
        raise CommandError(f"MCP_BIND must be host:port, got {bind!r}")
    probe = "127.0.0.1" if host in ("0.0.0.0", "") else host.strip("[]")
    return ChildSpec("mcp", [python, "manage.py", "run_mcp_server", "--bind", bind], cwd=base,
                     ready=lambda: _tcp_ready(probe, int(port)), ready_timeout=60)


def web_server_argv(python: str, bind: str, workers: int, connections: int,
                    access_log: str = "-") -> list[str]:
    """The gunicorn command line of the web server; its access log goes to ``access_log``
    (a file, "-" the console, "" none: ``WEB_ACCESS_LOG``).

    Event-loop workers (gevent, ``connections`` open connections each): a connection waiting
    for the rest of its request costs a greenlet, not a thread, so clients that send a request
    line and then trickle header lines (50 of them, one line every 3 s, took every gthread
    thread and timed out every search; issue 34) do not keep anyone else's request waiting.
    The application's blocking I/O (database, Redis, remote shards) yields to other requests
    (gevent's monkey-patching, done by the worker before the application is loaded); its
    CPU work does not, and a request that keeps a worker busy past ``--timeout`` (30 s) has its
    worker restarted. ``--graceful-timeout`` bounds a restart, ``--keep-alive`` lets an idle
    connection go after 5 s, and request lines up to 8190 bytes (gunicorn's maximum) reach the
    application, which answers a too-long search url itself. gunicorn's control socket (one
    path in the user's home, shared by every instance) is off: nothing here uses it. In
    production a reverse proxy in front still terminates TLS and bounds slow clients' time
    (README "Production").
    """
    return [python, "-m", "gunicorn", "searchsite.wsgi:application", "--bind", bind,
            "--worker-class", "gevent", "--workers", str(workers),
            "--worker-connections", str(connections),
            "--timeout", "30", "--graceful-timeout", "10", "--keep-alive", "5",
            "--limit-request-line", "8190", "--no-control-socket",
            *(["--access-logfile", access_log] if access_log else [])]


def web_metrics_env(directory: Path) -> dict[str, str]:
    """The web server's environment for ``/metrics`` (``searchsite.metrics``): its workers
    keep their histograms in ``directory``, emptied first (prometheus_client's multi-process
    mode), so every worker's searches are counted whichever worker is scraped."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    return {"PROMETHEUS_MULTIPROC_DIR": str(directory)}


def queue_server_numbers(count: int, here: tuple[int, ...], total: int) -> list[int]:
    """The numbers of the queue servers this machine runs: none when ``count`` (``up
    --queue-servers``) is 0; else ``here`` (``QUEUE_SERVERS_HERE``: on a machine that runs,
    say, queue server 1 of 2) when it names any, each in 0 .. ``total`` - 1
    (``NUM_QUEUE_SERVERS``), else 0 .. ``count`` - 1. Raises CommandError for a number out of
    range or named twice."""
    if count <= 0:
        return []
    if not here:
        return list(range(count))
    wrong = [n for n in here if not 0 <= n < total]
    if wrong or len(set(here)) != len(here):
        raise CommandError(f"QUEUE_SERVERS_HERE must name distinct queue servers between 0 and "
                           f"{total - 1} (NUM_QUEUE_SERVERS={total}), got "
                           f"{','.join(map(str, here))}")
    return sorted(here)


def worker_specs(python: str, base: str, fetchers: int, numbers: list[int]) -> list[ChildSpec]:
    """The Celery workers and queue servers of one machine: ``fetchers`` fetcher processes
    (queue ``fetch``), and for each queue server number its inbox worker (``qs.<n>``) and its
    ``run_queue_server --server <n>``, with the link-analysis worker when there is any."""
    celery = [python, "-m", "celery", "-A", "searchsite", "worker", "--loglevel", "INFO",
              "--without-gossip", "--without-mingle"]
    specs: list[ChildSpec] = []
    if fetchers > 0:
        specs.append(ChildSpec(
            "fetchers", [*celery, "-Q", "fetch", "-c", str(fetchers), "-n", "fetch@%h"],
            cwd=base))
    if numbers:
        specs.append(ChildSpec(
            "analysis", [*celery, "-Q", "analysis", "-c", "1", "--max-tasks-per-child", "1",
                         "-n", "analysis@%h"], cwd=base))
    for n in numbers:
        specs.append(ChildSpec(
            f"qs{n}-inbox", [*celery, "-Q", f"qs.{n}", "-c", "1", "-n", f"qs{n}@%h"], cwd=base))
        specs.append(ChildSpec(
            f"queue-server-{n}", [python, "manage.py", "run_queue_server", "--server", str(n)],
            cwd=base))
    return specs


def scheduler_spec(python: str, base: str, var_directory: Path) -> ChildSpec:
    """Celery beat, which sends ``CELERY_BEAT_SCHEDULE``'s periodic tasks (its schedule's
    state in ``var_directory``, no pid file: ``up``'s lock already says one runs)."""
    return ChildSpec("scheduler", [python, "-m", "celery", "-A", "searchsite", "beat",
                                   "--loglevel", "INFO", "--pidfile=",
                                   "-s", str(var_directory / "celerybeat-schedule")], cwd=base)


class Command(BaseCommand):
    help = "Start the search engine: embedded Redis, web server, fetchers and queue servers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--bind", default=settings.WEB_BIND,
                            help="host:port of the web server (default WEB_BIND)")
        parser.add_argument("--mcp-bind", default=settings.MCP_BIND,
                            help="host:port of the MCP server (default MCP_BIND; '' for none)")
        parser.add_argument("--fetchers", type=int, default=settings.NUM_FETCHERS)
        parser.add_argument("--queue-servers", type=int, default=settings.NUM_QUEUE_SERVERS,
                            help="0: none on this machine; else queue servers 0 .. N-1, or "
                                 "the ones QUEUE_SERVERS_HERE names")
        parser.add_argument("--no-workers", action="store_true",
                            help="start only Redis and the web server")

    def handle(self, *args, **options) -> None:
        bind = options["bind"]
        host, _, port = bind.rpartition(":")
        if not host or not port.isdigit():
            raise CommandError(f"--bind must be host:port, got {bind!r}")
        try:
            lock = InstanceLock(settings.VAR_DIRECTORY / LOCK_FILE)
        except AlreadyRunning as exc:
            raise CommandError(
                f"manage.py up is already running for {settings.VAR_DIRECTORY} ({exc.holder}); "
                "stop it first (Ctrl-C in its terminal, or kill -TERM its pid), or give this "
                "one another VAR_DIRECTORY") from None
        try:
            made_private = make_private(private_paths())
            if made_private.changed:
                self.stdout.write(f"Made {made_private.changed} files and folders private to "
                                  "this user (group and other permissions removed)")
            self._run(host, port, bind, options)
        finally:
            lock.release()

    def _run(self, host: str, port: str, bind: str, options: dict) -> None:
        specs: list[ChildSpec] = []
        if settings.EMBEDDED_REDIS:  # first: a socket path it cannot use stops up at once
            specs.append(embedded_redis_spec(settings.EMBEDDED_REDIS_SOCKET,
                                             settings.EMBEDDED_REDIS_PASSWORD))
        settings.STATIC_ROOT.mkdir(parents=True, exist_ok=True)
        call_command("collectstatic", interactive=False, verbosity=0)
        python = sys.executable
        base = str(settings.BASE_DIR)
        url_host = "127.0.0.1" if host in ("0.0.0.0", "") else host.strip("[]")
        base_url = f"http://{url_host}:{port}/"
        specs.append(ChildSpec(
            "web", web_server_argv(python, bind, settings.WEB_WORKERS,
                                   settings.WEB_WORKER_CONNECTIONS, settings.WEB_ACCESS_LOG),
            cwd=base, ready=lambda: _http_ready(base_url), ready_timeout=60,
            env=web_metrics_env(settings.VAR_DIRECTORY / "metrics-web"),
        ))
        mcp = mcp_spec(python, base, options["mcp_bind"])
        if mcp is not None:
            specs.append(mcp)
        if not options["no_workers"]:
            numbers = queue_server_numbers(options["queue_servers"],
                                           settings.QUEUE_SERVERS_HERE,
                                           settings.NUM_QUEUE_SERVERS)
            specs.extend(worker_specs(python, base, options["fetchers"], numbers))
            if 0 in numbers:
                specs.append(scheduler_spec(python, base, settings.VAR_DIRECTORY))
        where = (f"Search page: {base_url}\nAdmin:       {base_url}admin/\n"
                 + (f"MCP server:  http://{options['mcp_bind']}/mcp\n" if mcp else "") +
                 f"Work directory: {settings.WORK_DIRECTORY}\n")
        self.stdout.write(where)
        self.stdout.flush()
        # said again once everything is up, so that they are the console's last lines
        supervisor = Supervisor(specs, out=self.stdout._out, ready_message=where.rstrip(),
                                log_dir=settings.VAR_DIRECTORY / LOG_DIR,
                                control_dir=settings.VAR_DIRECTORY / CONTROL_DIR,
                                restartable=RESTARTABLE)
        if supervisor.run() != 0:
            raise CommandError("the engine could not start; see the messages above")
