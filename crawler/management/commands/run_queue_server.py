"""``manage.py run_queue_server --server N``: one queue server (scheduler and indexer).

Runs beside a Celery worker on queue ``qs.N`` (which fills its inbox); ``manage.py up`` starts
both for every queue server of this machine.
"""

from __future__ import annotations

import signal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from crawler.queue_servers import QueueServerProcess
from crawler.tasks import send_schedule


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
        signal.signal(signal.SIGTERM, process.request_stop)
        signal.signal(signal.SIGINT, process.request_stop)
        process.run()
