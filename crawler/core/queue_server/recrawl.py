"""What a queue server does for page recrawl between its crawl queue and its index.

Layer: ``crawler.core``. :class:`crawler.core.queue_server.server.QueueServerCore` calls these while
it applies a batch:

1. :func:`replaces_active_copy` before appending the batch's documents: when a document is a
   new copy of a page whose current copy may still be in the *active* partition, the active
   partition is closed first. Within one partition, documents of one url form one group
   whose representative is the first page appended (the seed's grouping,
   ``indexer.core.partition.grouping``), so a new copy there would hide behind the old one; in separate
   partitions they are separate doc_map entries, and the old one can be retired alone. A
   revisit comes ``page_recrawl_days`` after the first visit, so this is rare but for small
   crawls (about one partition closed per recrawl round).
2. :func:`visit_rows` after appending them: the batch's visits
   (:class:`crawler.core.transport.visits.Visit`) as the crawl queue journals them, with the
   partition now active (the newest partition their documents can be in).
3. :class:`RetiredPublisher` publishes the queue's retired set beside the index
   (:mod:`indexer.core.bundle.retired`) whenever it changed, before the active partition is
   refreshed, so search never shows an old copy beside its new one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from crawler.core.definition import policy as pol
from crawler.core.queue_server.source import QueueSource
from crawler.core.scheduler.revisits import VisitRow
from crawler.core.transport.visits import Visit
from indexer.core.bundle.retired import write_retired
from indexer.core.ids import DOC_TYPE, DocType

logger = logging.getLogger(__name__)

_COPY_TYPES = frozenset({DocType.PAGE, DocType.LOCATION})


def replaces_active_copy(queue: QueueSource, doc_ids: Iterable[bytes],
                         active_partition: int) -> bool:
    """Whether one of ``doc_ids`` is a new copy (page or location document) of a url whose
    current copy, another document, may be in ``active_partition``."""
    if not queue.config.recrawl_enabled:
        return False
    for doc_id in doc_ids:
        if doc_id[DOC_TYPE] not in _COPY_TYPES:
            continue
        visit = queue.visit_of(int.from_bytes(doc_id[:8], "big"))
        if (visit is not None and visit.doc_id is not None and visit.doc_id != doc_id
                and visit.partition >= active_partition):
            return True
    return False


def visit_rows(visits: Iterable[Visit], partition: int) -> list[VisitRow]:
    """The crawl queue's rows of ``visits`` whose documents were appended while
    ``partition`` was active (or before)."""
    return [VisitRow(v.url, v.outcome.value, v.fetched_at, v.etag, v.expires, v.last_modified,
                     v.doc_id, v.depth, pol.CODE[pol.parse_policy(v.policy)], v.policy_depth,
                     partition)
            for v in visits]


class RetiredPublisher:
    """Writes a queue source's retired set to the bundle when its version moved."""

    def __init__(self, queue: QueueSource, bundle: Path) -> None:
        self._queue = queue
        self._bundle = bundle
        version, retired, removed = queue.retired()
        # a new queue has nothing to publish; a reopened one publishes once, to be sure
        self._published: int | None = 0 if not (retired or removed) else None

    @property
    def pending(self) -> bool:
        return self._queue.retired()[0] != self._published

    def publish(self) -> bool:
        """Publish if the set changed since the last time; True if it wrote."""
        version, retired, removed = self._queue.retired()
        if version == self._published:
            return False
        write_retired(self._bundle, retired, removed)
        self._published = version
        logger.debug("%s: %d retired documents, %d removed urls published", self._bundle,
                     len(retired), len(removed))
        return True
