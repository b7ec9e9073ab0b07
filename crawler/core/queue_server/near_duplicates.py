"""The queue server's near-duplicate gate: links found on a near-duplicate page are not queued.

Layer: ``crawler.core.queue_server``. :class:`~crawler.core.queue_server.applying.BatchApplier`
asks :meth:`NearDuplicateGate.screen` for each batch before it queues the batch's discovered
urls. A page's SimHash (:mod:`indexer.core.signals.simhash`) comes in its visit
(:class:`crawler.core.transport.visits.Visit`, ``new`` and ``changed`` visits only); the gate
compares it with the SimHashes of the pages this queue server indexed before (all of its
shard's hosts: per host and across them) by the band tables of
:class:`indexer.core.signals.near_index.NearIndex`. A page within ``bits`` of an earlier,
different url with the same title key (``Visit.title_tag``) is a near-duplicate: its links lead where its twin's do, so they are not
followed again (Manku et al. 2007; Marginalia checks per domain at processing time). Its
document is indexed as any other: the search folds it into its cluster
(``indexer.core.signals.near_clusters``).

Counters (in the queue server's state): ``near_duplicate_pages`` (pages found to be
near-duplicates), ``near_duplicate_links_skipped`` (discovered urls left out for that). The
distinct urls left out are kept (their hashes, :attr:`NearDuplicateGate.skipped_targets`) so that the crawl's
end can tell how many were never fetched at all: the fetches saved
(:meth:`NearDuplicateGate.fetches_saved`). The tables live in memory: after a restart a queue
server compares new pages with the pages fetched since (it only follows some links more).
Links of a near-duplicate that go to another queue server's hosts travel without the page's
visit and are queued there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from crawler.core.scheduler import DiscoveredUrl
from crawler.core.transport.visits import INDEXED, Visit
from indexer.core.signals.near_index import NearIndex
from indexer.core.signals.simhash import NO_SIMHASH
from indexer.core.urls import url_hash

logger = logging.getLogger(__name__)

MAX_SKIPPED_TARGETS = 2_000_000  # distinct skipped urls remembered for the fetches-saved count


class NearDuplicateGate:
    """Finds near-duplicate pages among the visits of each batch and leaves their links out
    (see the module). ``bits`` < 0 turns the gate off (nothing is compared or left out)."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self._index: dict[int, NearIndex] | None = {} if bits >= 0 else None  # by title tag
        self._near: set[str] = set()   # urls of pages found to be near-duplicates
        self.skipped_targets: set[int] = set()  # url hashes of the urls left out
        self._visited: set[int] = set()  # url hashes of every url visited (any outcome)

    @property
    def enabled(self) -> bool:
        return self._index is not None

    def screen(self, visits: Sequence[Visit], discovered: list[DiscoveredUrl],
               counters: dict[str, int]) -> list[DiscoveredUrl]:
        """Record the SimHashes of ``visits`` (in order: the first of two near-duplicates
        keeps its links) and return ``discovered`` without the urls found on near-duplicate
        pages (those of this batch and of earlier ones)."""
        index = self._index
        if index is None:
            return discovered
        for visit in visits:
            self._visited.add(url_hash(visit.url))
            if visit.outcome not in INDEXED or visit.simhash == NO_SIMHASH or \
                    visit.url in self._near:
                continue
            tagged = index.setdefault(visit.title_tag, NearIndex(self.bits))
            near = tagged.nearest(visit.simhash)
            if near is not None and near[0] != visit.url:
                self._near.add(visit.url)
                counters["near_duplicate_pages"] = counters.get("near_duplicate_pages", 0) + 1
                logger.debug("near-duplicate %s of %s (%d bits)", visit.url, near[0], near[1])
            elif near is None:
                tagged.add(visit.simhash, visit.url)
        if not self._near:
            return discovered
        kept = [d for d in discovered if d.source_url not in self._near or d.is_sitemap]
        if len(kept) != len(discovered):
            counters["near_duplicate_links_skipped"] = \
                counters.get("near_duplicate_links_skipped", 0) + len(discovered) - len(kept)
            room = MAX_SKIPPED_TARGETS - len(self.skipped_targets)
            if room > 0:
                left_out = (d.url for d in discovered
                            if d.source_url in self._near and not d.is_sitemap)
                self.skipped_targets.update(url_hash(u) for u, _ in zip(left_out, range(room),
                                                                        strict=False))
        return kept

    def fetches_saved(self) -> int:
        """Distinct urls left out that this queue server never visited: at a crawl's end,
        the downloads the gate saved (an estimate: a url robots.txt would have refused, or
        one owned by another queue server, counts too)."""
        return len(self.skipped_targets - self._visited)

    def near_duplicates(self) -> Iterable[str]:
        """The urls found to be near-duplicates so far."""
        return iter(self._near)
