"""``/metrics``: the engine's state in the Prometheus text format, for operators who scrape it.

Layer: ``searchsite`` (above every app: it reads crawls, queue servers and fetchers from the
database, the index folders from the work directory, and the search latency histogram of
``ranking.metrics``). Everything but the histogram is read when Prometheus scrapes, so the
figures are the database's (the queue servers' and fetchers' last reports), never stale copies
kept in one web process.

Exposed (every name starts ``yioopy_``):

* per crawl (the newest ``CRAWLS_SHOWN`` and any running one), labelled ``crawl`` (its
  timestamp) and ``name``: the counters ``crawl_pages_fetched_total``,
  ``crawl_documents_indexed_total``, ``crawl_fetch_errors_total``,
  ``crawl_bytes_downloaded_total``; the gauges ``crawl_urls_seen``, ``crawl_urls_queued``,
  ``crawl_hosts_seen`` and ``crawl_running`` (1 while running or stopping);
* per queue server (label ``server``): ``queue_server_up`` (a heartbeat within the timeout),
  ``queue_server_heartbeat_age_seconds`` and every number it reports as
  ``queue_server_<counter>`` (queued urls, inbox batches, outstanding schedules, urls waiting
  for robots.txt...); a reported mapping whose name ends in ``_by_kind`` becomes one gauge with
  a ``kind`` label, and ``tiers`` one with a ``tier`` label;
* per fetcher process (label ``fetcher``): ``fetcher_heartbeat_age_seconds``,
  ``fetcher_pages_fetched_total``, ``fetcher_schedules_done_total``;
* ``index_bytes`` per crawl and queue server (labels ``crawl``, ``server``), the size of the
  index on this machine's disk (read at most every ``INDEX_SIZE_TTL`` seconds);
* ``search_seconds`` (histogram, label ``format``): the time to answer the search page.

Access: with ``METRICS_TOKEN`` set, only requests carrying ``Authorization: Bearer <token>``
(Prometheus' ``authorization`` scrape setting); without it, only clients on a loopback
address: the socket's peer, or, when that peer is one of ``TRUSTED_PROXIES``, the address its
forwarded header names (``operations.client_address``); a header from anyone else is ignored.
Production sets the token all the same (``manage.py check --deploy`` says so).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.core import checks
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client import multiprocess as prometheus_multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from crawler.core.definition.crawl import ACTIVE_STATES
from crawler.core.queue_server.heartbeat import server_totals
from crawler.models import Crawl, Fetcher, QueueServer
from crawler.selectors import HEARTBEAT_TIMEOUT
from operations.client_address import client_address
from ranking.indexes import list_bundles
from ranking.metrics import SEARCH_SECONDS

CRAWLS_SHOWN = 20
INDEX_SIZE_TTL = 60.0
_NAME = re.compile(r"[^a-zA-Z0-9_]")
CRAWL_COUNTERS = ("pages_fetched", "documents_indexed", "fetch_errors", "bytes_downloaded")
CRAWL_GAUGES = ("urls_seen", "urls_queued", "hosts_seen")


def _metric_name(text: str) -> str:
    return _NAME.sub("_", text).strip("_").lower()


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class EngineCollector:
    """The database's and the work directory's figures, read at each scrape."""

    def __init__(self, work_directory: Path) -> None:
        self.work_directory = work_directory
        self._sizes: tuple[float, list[tuple[str, str, float]]] | None = None
        self._lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        readable = 1.0
        for part in (self._crawls, self._queue_servers, self._fetchers):
            try:
                yield from list(part())
            except DatabaseError:  # the rest still answers; the gauge below says why
                readable = 0.0
        yield GaugeMetricFamily("yioopy_database_up",
                                "1 when the database could be read for this scrape.",
                                value=readable)
        yield self._index_bytes()

    def _crawls(self) -> Iterator[Metric]:
        newest = list(Crawl.objects.order_by("-timestamp")[:CRAWLS_SHOWN])
        running = Crawl.objects.filter(status__in=ACTIVE_STATES).exclude(
            pk__in=[c.pk for c in newest])
        crawls = [*newest, *running]
        labels = ["crawl", "name"]
        families = {name: CounterMetricFamily(f"yioopy_crawl_{name}",
                                              f"The crawl's {name.replace('_', ' ')}.", labels=labels)
                    for name in CRAWL_COUNTERS}
        families.update({name: GaugeMetricFamily(f"yioopy_crawl_{name}",
                                                 f"The crawl's {name.replace('_', ' ')}.",
                                                 labels=labels) for name in CRAWL_GAUGES})
        active = GaugeMetricFamily("yioopy_crawl_running",
                                   "1 while the crawl runs or is stopping.", labels=labels)
        for crawl in crawls:
            values = [str(crawl.timestamp), crawl.name]
            for name, family in families.items():
                family.add_metric(values, float(getattr(crawl, name)))
            active.add_metric(values, 1.0 if crawl.status in ACTIVE_STATES else 0.0)
        yield from families.values()
        yield active

    def _queue_servers(self) -> Iterator[Metric]:
        now = timezone.now()
        up = GaugeMetricFamily("yioopy_queue_server_up",
                               "1 when the queue server reported within the heartbeat timeout.",
                               labels=["server"])
        age = GaugeMetricFamily("yioopy_queue_server_heartbeat_age_seconds",
                                "Seconds since the queue server's last report.",
                                labels=["server"])
        reported: dict[str, GaugeMetricFamily] = {}

        def family(name: str, extra: list[str]) -> GaugeMetricFamily:
            if name not in reported:
                reported[name] = GaugeMetricFamily(
                    f"yioopy_queue_server_{name}", f"The queue server's {name} (its last report).",
                    labels=["server", *extra])
            return reported[name]

        for server in QueueServer.objects.order_by("server_id"):
            label = str(server.server_id)
            seconds = None if server.last_heartbeat is None else \
                (now - server.last_heartbeat).total_seconds()
            alive = server.state == QueueServer.State.UP and seconds is not None and \
                seconds <= HEARTBEAT_TIMEOUT.total_seconds()
            up.add_metric([label], 1.0 if alive else 0.0)
            if seconds is not None:
                age.add_metric([label], round(seconds, 3))
            for key, value in server_totals(server.counters).items():
                name = _metric_name(str(key))
                if _number(value) is not None:
                    family(name, []).add_metric([label], _number(value))
                elif isinstance(value, dict) and (name.endswith("_by_kind") or name == "tiers"):
                    extra = "tier" if name == "tiers" else "kind"
                    for kind, count in value.items():
                        if _number(count) is not None:
                            family(name, [extra]).add_metric([label, str(kind)], _number(count))
        yield up
        yield age
        yield from reported.values()

    def _fetchers(self) -> Iterator[Metric]:
        now = timezone.now()
        labels = ["fetcher"]
        age = GaugeMetricFamily("yioopy_fetcher_heartbeat_age_seconds",
                                "Seconds since the fetcher process last reported.", labels=labels)
        pages = CounterMetricFamily("yioopy_fetcher_pages_fetched",
                                    "Pages the fetcher process fetched.", labels=labels)
        schedules = CounterMetricFamily("yioopy_fetcher_schedules_done",
                                        "Schedules the fetcher process finished.", labels=labels)
        for fetcher in Fetcher.objects.all():
            age.add_metric([fetcher.name],
                           round((now - fetcher.last_heartbeat).total_seconds(), 3))
            pages.add_metric([fetcher.name], float(fetcher.pages_fetched))
            schedules.add_metric([fetcher.name], float(fetcher.schedules_done))
        yield from (age, pages, schedules)

    def _index_bytes(self) -> GaugeMetricFamily:
        family = GaugeMetricFamily("yioopy_index_bytes",
                                   "Bytes of a crawl's index on this machine, per queue server.",
                                   labels=["crawl", "server"])
        for crawl, server, size in self._sizes_kept():
            family.add_metric([crawl, server], size)
        return family

    def _sizes_kept(self) -> list[tuple[str, str, float]]:
        with self._lock:
            now = time.monotonic()
            if self._sizes is None or now - self._sizes[0] > INDEX_SIZE_TTL:
                self._sizes = (now, index_sizes(self.work_directory))
            return self._sizes[1]


def index_sizes(work_directory: Path) -> list[tuple[str, str, float]]:
    """(crawl timestamp, queue server, bytes) of every bundle in ``work_directory``."""
    return [(str(b.timestamp), str(b.server), float(_folder_bytes(b.path)))
            for b in list_bundles(work_directory)]


def _folder_bytes(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:  # a file replaced while counting
                continue
    return total


_collector: EngineCollector | None = None


def _engine_collector() -> EngineCollector:
    global _collector
    if _collector is None or _collector.work_directory != Path(settings.WORK_DIRECTORY):
        _collector = EngineCollector(Path(settings.WORK_DIRECTORY))
    return _collector


def allowed(request: HttpRequest) -> bool:
    """With METRICS_TOKEN: the request carries it as a bearer token; without: the client is
    on a loopback address."""
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        return given.startswith("Bearer ") and hmac.compare_digest(
            given[len("Bearer "):].encode(), token.encode())
    try:
        return ipaddress.ip_address(client_address(request)).is_loopback
    except ValueError:
        return False


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        return JsonResponse({"error": "metrics need the METRICS_TOKEN as a bearer token "
                                      "(or a client on this machine when none is set)"},
                            status=403)
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        prometheus_multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(SEARCH_SECONDS)
    registry.register(_engine_collector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


def metrics_token_check(app_configs, **kwargs) -> list[checks.CheckMessage]:
    if settings.METRICS_TOKEN:
        return []
    return [checks.Warning(
        "METRICS_TOKEN is not set: /metrics answers every client on a loopback address, "
        "which behind a reverse proxy on this machine not listed in TRUSTED_PROXIES is "
        "everyone.",
        hint="Set METRICS_TOKEN and give Prometheus the same value as a bearer token.",
        id="yioopy.W001")]
