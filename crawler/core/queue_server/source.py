"""Where a queue server's schedules come from, whatever the kind of crawl: the contract, and the
one place that picks the implementation.

Layer: ``crawler.core.queue_server``. A web crawl's queue server serves schedules of urls from
its crawl queue (:class:`crawler.core.scheduler.CrawlQueue`); an archive crawl's serves
schedules of record pointers from its archive queue (:class:`crawler.core.archive.queue.
ArchiveQueue`). Both implement :class:`QueueSource`, the calls the queue server makes, so the
queue server never asks which kind of crawl it serves; an archive queue takes the calls that
only mean something to a web crawl (robots.txt, discovered urls, host overrides...) and
ignores them. Received batches are taken through an :class:`Inbox`: a web crawl's with each
page's parts together (:class:`~crawler.core.queue_server.page_parts.PageParts`), an archive
crawl's in the order of their schedules (:class:`~crawler.core.archive.ordering.OrderedInbox`).
:func:`open_source` is the only code that looks at the crawl's kind.

Call order of a queue server on its source: ``add_seeds`` at crawl start; per batch applied,
``add_robots``, ``add_discovered``, ``requeue``, ``report_host_errors``, ``record_visits`` and
``acknowledge``; between batches, ``next_schedule`` (while few are ``outstanding``),
``release``, ``set_needy_queries``, ``set_host_override``, ``take_refused``, ``stats``;
``close`` (or ``abandon`` after an ``OSError``) at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from crawler.core.archive.ordering import OrderedInbox
from crawler.core.archive.queue import ArchiveQueue, ArchiveQueueConfig
from crawler.core.archive.skipped import SkippedRecords
from crawler.core.definition.needy import NeedyQuery
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.page_parts import PageParts
from crawler.core.scheduler import CrawlQueue, DiscoveredUrl, QueueStats, Schedule, SchedulerConfig
from crawler.core.scheduler.revisits import UrlVisit, VisitRow
from crawler.core.transport.spool import Spool, SpoolItem


class SourceLimits(Protocol):
    """What the queue server reads of its source's configuration."""

    @property
    def max_pages(self) -> int:
        """Pages the crawl schedules at most (0: no bound)."""
        ...

    @property
    def recrawl_enabled(self) -> bool:
        """Whether visited urls are due again (page recrawl)."""
        ...


class QueueSource(Protocol):
    """The queue a queue server serves schedules from (see the module for the call order)."""

    @property
    def config(self) -> SourceLimits: ...

    def add_seeds(self, urls: Iterable[str]) -> int:
        """Queue the crawl's seed urls of this shard; how many were new."""
        ...

    def reconfigure(self, config: SchedulerConfig) -> bool:
        """The crawl's parameters as edited while it runs (site rules, quotas, seed
        policies), in force from now on; False when nothing changed."""
        ...

    def add_discovered(self, batch: Iterable[DiscoveredUrl]) -> int:
        """Queue the urls fetchers found; how many were new."""
        ...

    def add_robots(self, host: str, rules: Any, status: int = 200) -> None:
        """A host's robots.txt as a fetcher fetched it (``status`` 0: no HTTP answer)."""
        ...

    def report_host_errors(self, host: str, count: int) -> None:
        """A schedule's fetch errors on one host."""
        ...

    def requeue(self, entries: Iterable[Any]) -> int:
        """Queue again the urls a fetcher deferred (wire form); how many were."""
        ...

    def record_visits(self, visits: Iterable[VisitRow]) -> None:
        """How the visits of a schedule's urls went."""
        ...

    def visit_of(self, url_hash: int) -> UrlVisit | None:
        """What is kept of a visited url (None: nothing)."""
        ...

    def retired(self) -> tuple[int, set[bytes], set[int]]:
        """The version and the documents that left the index (page recrawl)."""
        ...

    def next_revisit_at(self) -> float | None:
        """When the next visited url is due again (None: never)."""
        ...

    def next_schedule(self, now: float | None = None, requester: str | None = None,
                      unparked_only: bool = False) -> Schedule | None:
        """A new or timed-out schedule, or None; ``unparked_only``: a new one of only the
        urls freed crawl-delayed hosts had parked, or None (a source without delayed hosts:
        always None)."""
        ...

    def outstanding(self) -> list[Schedule]:
        """Schedules handed out and not acknowledged."""
        ...

    def acknowledge(self, schedule_id: str) -> bool:
        """A schedule's last batch was applied; False if it was not outstanding."""
        ...

    def free_hosts(self, schedule_id: str, origins: Iterable[str]) -> int:
        """The schedule's fetcher is done with these crawl-delayed hosts (its batches say so
        before the schedule's end): free them for the next schedule; how many were."""
        ...

    def release(self, schedule_ids: Iterable[str]) -> int:
        """Hand these outstanding schedules out again with the next call."""
        ...

    def set_needy_queries(self, queries: Iterable[NeedyQuery]) -> bool:
        """Score urls against these needy queries from now on (the queue-server process
        refreshes them from the query log); whether they changed."""
        ...

    def set_host_override(self, host: str, min_delay: float, excluded: bool) -> bool:
        """The operator's minimum delay and exclusion of a host; whether it changed."""
        ...

    def host_politeness(self, host: str) -> tuple[float, bool, bool] | None:
        """A host's delay, whether it is delayed now and whether it is excluded."""
        ...

    def take_refused(self) -> list[tuple[str, str]]:
        """``(reason, url)`` of the urls refused since the last take."""
        ...

    def stats(self) -> QueueStats:
        """The queue's counters."""
        ...

    def extra_stats(self, skipped: SkippedRecords) -> dict[str, Any]:
        """Figures only this kind of source has, for the queue server's stats, given the
        records the fetchers skipped (an empty mapping when there are none)."""
        ...

    def freshness(self) -> dict[str, Any]:
        """The indexed copies' ages and the urls by their last visit's outcome."""
        ...

    def close(self) -> None: ...

    def abandon(self) -> None: ...


class Inbox(Protocol):
    """How a queue server takes its received batches (see the module)."""

    def take(self, limit: int | None = None) -> Iterator[SpoolItem]:
        """Batches to apply now, in order, at most about ``limit``; each must be applied and
        ``done`` before the next is asked for."""
        ...

    def take_all_held(self) -> Iterator[SpoolItem]:
        """Every batch held back, in the order they came (a crawl that stops)."""
        ...

    def pending(self) -> int:
        """Batches held back."""
        ...

    def finished(self) -> int:
        """Outstanding schedules whose last batch is held back (they are not being worked
        on)."""
        ...


def scheduler_config(config: QueueServerConfig) -> SchedulerConfig:
    """The crawl queue's configuration for a queue server's (at opening, and after edits)."""
    return SchedulerConfig.from_crawl(
        config.crawl, schedule_size=config.schedule_size,
        schedule_timeout=config.schedule_timeout, user_agent=config.robots_agent,
        recrawl_day_seconds=config.recrawl_day_seconds)


def open_source(config: QueueServerConfig, root: Path, spool: Spool,
                clock: Callable[[], float]) -> tuple[QueueSource, Inbox]:
    """The source of the crawl's kind, opened at ``root``, and the inbox over ``spool`` that
    goes with it."""
    crawl = config.crawl
    scheduler = scheduler_config(config)
    if crawl.archive is not None:
        archive = ArchiveQueue.open(root, crawl.archive, ArchiveQueueConfig(
            config.server, config.num_servers, crawl.timestamp, config.schedule_size,
            config.schedule_timeout, crawl.max_pages), clock=clock)
        return archive, OrderedInbox(spool, archive)
    queue = CrawlQueue.open(root, scheduler, clock=clock)
    return queue, PageParts(spool, lambda: [s.id for s in queue.outstanding()])
