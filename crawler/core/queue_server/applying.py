"""Applying one fetcher batch to a queue server: its documents to the index, its urls, robots.txt
answers, host errors and visits to the queue source, its tallies to the state.

Layer: ``crawler.core.queue_server``. :class:`~crawler.core.queue_server.server.QueueServerCore`
makes one :class:`BatchApplier` over its queue source, index and host book, and calls
:meth:`BatchApplier.apply` for each batch its inbox gives, with its current state. The order of
the steps is the contract: a batch for another crawl or queue server is refused before anything
is touched; the urls of dropped hosts are left out; when a document is a new copy of a page whose
copy may be in the active partition, that partition is closed first (:mod:`.recrawl`); the
documents are appended before the urls are queued; the schedule is acknowledged last, so a
batch that fails half-way leaves its schedule outstanding and is applied again (applying twice is
harmless). A malformed batch raises ``WireError``, ``ValueError``, ``KeyError`` or ``TypeError``;
a full disk ``OSError``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from crawler.core.queue_server.activity import ActivityLog
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.hosts import HostBook
from crawler.core.queue_server.near_duplicates import NearDuplicateGate
from crawler.core.queue_server.recrawl import RetiredPublisher, replaces_active_copy, visit_rows
from crawler.core.queue_server.source import QueueSource
from crawler.core.queue_server.state import QueueServerState
from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.visits import Visit
from crawler.core.transport.wire import (
    WireError,
    deferred_from_wire,
    discovered_from_wire,
    document_from_wire,
    encoded_document_from_wire,
    is_encoded_document,
)
from indexer.core.bundle.writer import IndexBundleWriter
from indexer.core.documents.encoding import EncodedDocument

logger = logging.getLogger(__name__)

# A url requested this many times and given up on each time (a page that never finishes by its
# deadline) is not requeued again: the first try and two retries.
MAX_PAGE_TRIES = 3


class BatchApplier:
    """Applies fetcher batches to one queue server (see the module)."""

    def __init__(self, config: QueueServerConfig, queue: QueueSource, index: IndexBundleWriter,
                 hosts: HostBook, activity: ActivityLog, retired: RetiredPublisher,
                 clock: Callable[[], float], on_documents: Callable[[], None]) -> None:
        self.config = config
        self.queue = queue
        self.index = index
        self.hosts = hosts
        self.activity = activity
        self.retired = retired
        self._clock = clock
        self._on_documents = on_documents  # documents were appended: a refresh is due
        self.near_duplicates = NearDuplicateGate(config.near_duplicate_bits)

    def apply(self, batch: FetcherBatch, state: QueueServerState) -> None:
        """Apply ``batch``, its tallies to ``state``."""
        self._check_addressee(batch)
        encoded = [encoded_document_from_wire(d) for d in batch.docs if is_encoded_document(d)]
        docs = [document_from_wire(d) for d in batch.docs if not is_encoded_document(d)]
        # stored as fetched: the anchor boost is the index writer's, at each partition build
        discovered = [discovered_from_wire(r) for r in batch.discovered]
        deferred = [deferred_from_wire(r) for r in batch.deferred]
        visits = [Visit.from_wire(r) for r in batch.fetched]
        hopeless = None if batch.hopeless is None else set(batch.hopeless)
        for origin, count in batch.stalls.items():
            self.hosts.record_stalls(state, origin, count,
                                     counts=hopeless is None or origin in hopeless)
        self.activity.add_log(batch.log)
        self.activity.add_refused(batch.refused)
        discovered, deferred = HostBook.without_dropped(state, discovered, deferred,
                                                        self.activity)
        partition_before = self._index(encoded, docs, state)
        self._robots(batch, state)
        # the links of near-duplicate pages are not followed again (.near_duplicates)
        discovered = self.near_duplicates.screen(visits, discovered, state.counters)
        if discovered:
            self.queue.add_discovered(discovered)
        deferred = self._without_spent_tries(state, deferred, batch.abandoned)
        if deferred:
            self.queue.requeue(deferred)
            state.counters["deferred_urls"] += len(deferred)
        for origin, count in batch.host_errors.items():
            self.queue.report_host_errors(origin, count)
            HostBook.record_errors(state, origin, count)
        self._visits(visits, partition_before)
        if batch.released and batch.schedule:
            self.hosts.released(batch.released, self._clock())
            self.queue.free_hosts(batch.schedule, batch.released)
        for key, value in batch.counters.items():
            if key in state.counters:
                state.counters[key] += value
        state.fetch_errors.add(batch.errors)
        state.skipped.add(batch.skipped)
        state.counters["batches"] += 1
        if batch.done and batch.schedule:
            now = self._clock()
            self.hosts.acknowledged(batch.schedule, self.queue.outstanding(), now)
            self.queue.acknowledge(batch.schedule)

    def _check_addressee(self, batch: FetcherBatch) -> None:
        crawl = self.config.crawl
        if batch.crawl != crawl.timestamp:
            raise WireError(f"batch of crawl {batch.crawl} sent to crawl {crawl.timestamp}")
        if batch.server is not None and batch.server != self.config.server:
            raise WireError(f"batch for queue server {batch.server} sent to "
                            f"{self.config.server}")

    def _index(self, encoded: list[EncodedDocument], docs: list[Any],
               state: QueueServerState) -> int:
        """Append the batch's documents; returns the active partition before them."""
        if replaces_active_copy(self.queue, [*(e.doc_id for e in encoded),
                                             *(d.doc_id for d in docs)],
                                self.index.active_partition):
            self.index.close_partition()  # see crawler.core.queue_server.recrawl
        partition_before = self.index.active_partition
        if encoded:
            self.index.append_encoded(encoded)
        if docs:
            self.index.append(docs)
        if encoded or docs:
            state.counters["documents_indexed"] += len(encoded) + len(docs)
            self._on_documents()
        return partition_before

    def _robots(self, batch: FetcherBatch, state: QueueServerState) -> None:
        for robots in batch.robots:
            origin, status = str(robots["origin"]), int(robots.get("status", 0))
            self.queue.add_robots(origin, robots.get("body"), status)
            kind = state.robots_failures.record(f"{origin}/robots.txt", status,
                                                robots.get("error"), robots.get("message"))
            self.activity.robots(origin, status, robots.get("body"), robots.get("error"),
                                 robots.get("message"))
            if kind is not None:
                logger.warning("queue server %d: robots.txt of %s failed (%s): host disallowed",
                               self.config.server, origin, kind)

    def _visits(self, visits: list[Visit], partition_before: int) -> None:
        if visits:
            self.queue.record_visits(visit_rows(visits, self.index.active_partition))
            if self.index.active_partition != partition_before:  # closed ones are searchable
                self.retired.publish()

    def _without_spent_tries(self, state: QueueServerState, deferred: list[Any],
                             abandoned: Sequence[str]) -> list[Any]:
        """Count the tries of the urls the fetcher requested and gave up on; leave out of
        ``deferred`` those tried :data:`MAX_PAGE_TRIES` times."""
        spent = set()
        for url in abandoned:
            tries = state.page_tries[url] = state.page_tries.get(url, 0) + 1
            if tries >= MAX_PAGE_TRIES:
                spent.add(url)
        if not spent:
            return deferred
        kept = [d for d in deferred if d[0] not in spent]
        state.counters["abandoned_urls"] += len(deferred) - len(kept)
        for url in spent:
            logger.warning("queue server %d: %s given up after %d tries that did not finish",
                           self.config.server, url, state.page_tries[url])
        return kept
