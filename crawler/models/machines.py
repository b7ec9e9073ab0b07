"""Rows of the engine's machines: queue servers and fetcher processes, each with its heartbeat.

Layer: Django glue. Queue servers and fetchers write their own rows
(``crawler.services.queue_server_heartbeat``, ``crawler.services.fetcher_heartbeat``); the
Machines page reads them (``crawler.selectors.machines_list``).
"""

from __future__ import annotations

from django.db import models

from .fields import in_range


class QueueServer(models.Model):
    """A shard the name server knows: one queue server process and its web endpoint."""

    class State(models.TextChoices):
        UNKNOWN = "unknown", "Unknown"
        UP = "up", "Up"
        DOWN = "down", "Down"
        DRAINING = "draining", "Draining"

    server_id = models.PositiveIntegerField(
        unique=True, validators=in_range(0, 1023),
        help_text="Shard number n: hosts with hash(host) mod servers = n belong here.")
    base_url = models.URLField(
        max_length=500, help_text="Where the name server and fetchers reach this queue server.")
    # the heartbeat's HMAC of server_id and base_url under the key derived from the shared
    # token (indexer.core.shard_token.registration_signature): a row whose url anything else
    # wrote is never sent the shard token
    registration = models.CharField(max_length=64, blank=True, default="", editable=False)
    state = models.CharField(max_length=10, choices=State.choices, default=State.UNKNOWN)
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    counters = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["server_id"]

    def __str__(self) -> str:
        return f"queue server {self.server_id}"


class Fetcher(models.Model):
    """A fetcher worker process, as it last reported: every FETCHER_HEARTBEAT_SECONDS from
    its heartbeat thread, fetching or idle (``crawler.machines.presence``), and at the start
    and end of each schedule."""

    name = models.CharField(max_length=200, unique=True, help_text="host:pid of the process")
    host = models.CharField(max_length=200)
    pid = models.PositiveIntegerField()
    state = models.CharField(max_length=20, default="idle")  # idle or fetching
    last_heartbeat = models.DateTimeField()
    schedules_done = models.PositiveIntegerField(default=0)
    pages_fetched = models.BigIntegerField(default=0)
    last_schedule = models.CharField(max_length=100, blank=True)
    # pages per second over the process's last RATE_WINDOW seconds (its heartbeat thread)
    pages_per_second = models.FloatField(default=0.0)

    class Meta:
        ordering = ["host", "pid"]

    def __str__(self) -> str:
        return self.name


class Machine(Fetcher):
    """The Machines page in the admin's menu: a proxy whose list is that page (queue servers
    and fetcher processes, live), see ``crawler.admin.machines``."""

    class Meta:
        proxy = True
        verbose_name = "machine"
        verbose_name_plural = "machines"
