"""``manage.py run_queue_server --server N``: one queue server (scheduler and indexer).

Runs beside a Celery worker on queue ``qs.N`` (which fills its inbox); ``manage.py up`` starts
both for every queue server of this machine.

One process per queue-server directory: it holds ``queue_server.lock`` there for its whole life
(``operations.instance_lock``), so a second ``run_queue_server`` of the same server, started by
``up`` or by hand, refuses to run, naming the running one's pid.
"""

from __future__ import annotations

import signal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from crawler.machines.queue_server import QueueServerProcess
from crawler.tasks import send_schedule
from operations.instance_lock import AlreadyRunning, InstanceLock

LOCK_FILE = "queue_server.lock"  # in the queue server's directory


class Command(BaseCommand):
    help = "Run queue server N: its crawl queue, its index and its dictionary updater."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--server", type=int, required=True)
        parser.add_argument("--servers", type=int, default=settings.NUM_QUEUE_SERVERS,
                            help="number of queue servers of the engine (NUM_QUEUE_SERVERS)")
        parser.add_argument("--base-url", default=settings.QUEUE_SERVER_BASE_URL)

    def handle(self, *args, **options) -> None:
        server, servers = options["server"], options["servers"]
        if not 0 <= server < servers:
            raise CommandError(f"--server must be between 0 and {servers - 1}")
        process = QueueServerProcess(server, servers, options["base_url"], send_schedule)
        try:
            lock = InstanceLock(process.directory / LOCK_FILE)
        except AlreadyRunning as exc:
            raise CommandError(
                f"queue server {server} is already running for {process.directory} ({exc.holder});"
                " two would share one crawl queue and index") from None
        with lock:
            signal.signal(signal.SIGTERM, process.request_stop)
            signal.signal(signal.SIGINT, process.request_stop)
            process.run()
