"""The Celery application shared by fetchers and queue-server workers.

Queues: ``fetch`` (fetcher workers) and ``qs.<n>`` (one per queue server, n = 0 ..
NUM_QUEUE_SERVERS - 1). Messages are JSON only; a message is acknowledged only after the task
returns (late acknowledgement), and each worker process holds one message at a time. Each
pool process of a ``fetch`` worker runs a heartbeat thread (``crawler.machines.presence``).
"""

from __future__ import annotations

import os
from types import ModuleType

from celery import Celery
from celery.signals import (
    celeryd_after_setup,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
)
from django.conf import settings
from kombu import Queue

from crawler.core.memory import limit_malloc_arenas
from operations.private_files import private_umask
from operations.process_death import exit_when_orphaned

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "searchsite.settings.base")

app = Celery("searchsite")
app.config_from_object("django.conf:settings", namespace="CELERY")


def queue_names(num_queue_servers: int) -> list[str]:
    """The names of every queue the engine uses, for ``num_queue_servers`` shards."""
    return ["fetch", *(f"qs.{n}" for n in range(num_queue_servers))]


@app.on_after_configure.connect
def _declare_queues(sender: Celery, **_: object) -> None:
    sender.conf.task_queues = [Queue(name) for name in queue_names(settings.NUM_QUEUE_SERVERS)]


@worker_init.connect
def _private_files(**_: object) -> None:
    """A worker started without ``manage.py`` (``celery -A searchsite worker``) writes its
    batches, journals and indexes private to its user too (``operations.private_files``);
    its pool processes inherit the umask."""
    private_umask()


@worker_init.connect
def _exit_when_orphaned(**_: object) -> None:
    """A worker ``manage.py up`` started goes when up is gone, even one that got up's
    parent-death signal while still starting (``operations.process_death``)."""
    exit_when_orphaned()


@worker_init.connect
@worker_process_init.connect
def _limit_malloc_arenas(**_: object) -> None:
    """A worker's threads share capped malloc arenas (see crawler.core.memory): set in the main
    process before it forks its pool, and again in each pool process."""
    limit_malloc_arenas()


def _presence() -> ModuleType:
    """``crawler.machines.presence``, imported when a worker signal first needs it."""
    # it imports the crawler's models: this module is imported as Django's settings load (the
    # project package imports it), before the app registry is ready; the signals come after
    from crawler.machines import presence

    return presence


@celeryd_after_setup.connect
def _note_fetch_worker(instance, **_: object) -> None:
    """A worker consuming the ``fetch`` queue: each of its pool processes is a fetcher."""
    _presence().mark_fetch_worker(instance.app.amqp.queues.consume_from or ())


@worker_process_init.connect
def _start_fetcher_heartbeat(**_: object) -> None:
    """Each fetch pool process reports it is alive, idle or fetching (crawler.machines.presence)."""
    _presence().start(settings.FETCHER_HEARTBEAT_SECONDS)


@worker_process_shutdown.connect
def _stop_fetcher_heartbeat(**_: object) -> None:
    _presence().stop()


app.autodiscover_tasks()
