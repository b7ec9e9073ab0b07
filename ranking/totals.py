"""Result totals that count what can be shown, and the index line's page count.

Layer: glue of the ``ranking`` app (no Django imports). The pipeline's ``total``
(:class:`ranking.core.search.pipeline.SearchResult`) is an estimate over the matching groups,
link-only groups included: a url only links point at (never crawled) matches the query through
its anchor text and is counted, but has no page to show, so "Results 1–7 of about 30" linked
pages 2 and 3 that were empty. Here the search service checks the estimate against the results
that can be paged to:

* a page with fewer results than asked for is the last one: the total is exact, ``offset`` +
  the results shown;
* a full page is followed by a look ahead (:func:`reach`): the results after it, up to the
  page links the page shows (``PAGE_LINKS`` pages), counted from a search that reads only
  the results' heads. Fewer than that: the total is exact; as many: the total is the estimate
  (at least what was counted), "about".

:func:`indexed_pages` counts the page documents of local bundles (link, redirect and
sub-documents left out), for the index line ("Index: crawl … · N pages").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from weakref import WeakKeyDictionary

import numpy as np

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.ids import DOC_TYPE, DocType
from ranking.core.search.mixes import unwrap
from ranking.core.search.pipeline import SearchResult
from ranking.core.shard.candidates import ShardClient
from ranking.core.shard.local import LocalShard

PAGE_LINKS = 9  # the numbered page links the search page shows around the current page
MAX_LOOK_AHEAD = 500  # results counted after a full page, at most


@dataclass(frozen=True, slots=True)
class Reach:
    """What paging can reach from a search's page: ``reachable``, the rank of the last result
    known to exist (pages up to it have results), and whether ``exact`` (no result after
    it)."""

    reachable: int
    exact: bool


def look_ahead_size(num: int) -> int:
    """How many results after a full page of ``num`` are counted: the page links' worth."""
    return min(MAX_LOOK_AHEAD, max(1, num) * PAGE_LINKS)


def reach(result: SearchResult, count_after: Callable[[int, int], int]
          ) -> tuple[SearchResult, Reach]:
    """``result`` with a ``total`` that paging can reach, and that reach.

    ``count_after(offset, n)`` is how many results the same search shows from rank ``offset``
    (0-based), at most ``n``; it is called for a full page, and for an empty page past the
    first (an offset past the end: the results before it are counted, so that its links go
    back to pages that have results)."""
    shown = len(result.results)
    end = result.offset + shown
    if result.num <= 0:
        return result, Reach(end, False)
    if not shown and result.offset:
        before = min(result.offset, MAX_LOOK_AHEAD)
        found = max(0, min(before, count_after(0, before)))
        if found < before:
            return replace(result, total=found), Reach(found, True)
        return result, Reach(found, False)
    if shown < result.num:
        return replace(result, total=end), Reach(end, True)
    ahead = look_ahead_size(result.num)
    found = max(0, min(ahead, count_after(end, ahead)))
    if found < ahead:
        return replace(result, total=end + found), Reach(end + found, True)
    return replace(result, total=max(result.total, end + found)), Reach(end + found, False)


# -- the index line's page count ---------------------------------------------------------------

_counted: WeakKeyDictionary[IndexBundleReader, tuple[object, int]] = WeakKeyDictionary()
_counted_lock = threading.Lock()


def bundle_pages(reader: IndexBundleReader) -> int:
    """The distinct page documents of ``reader``'s snapshot (a page stored again by a recrawl
    counts once), counted once per snapshot (its partition list)."""
    with _counted_lock:
        kept = _counted.get(reader)
        if kept is not None and kept[0] is reader.partitions:
            return kept[1]
    ids = [dm.member_ids[dm.member_ids[:, DOC_TYPE] == DocType.PAGE]
           for dm in (reader.doc_map(p.number) for p in reader.partitions)]
    rows = np.concatenate(ids) if ids else np.zeros((0, 1), np.uint8)
    count = int(len(np.unique(rows, axis=0))) if len(rows) else 0
    with _counted_lock:
        _counted[reader] = (reader.partitions, count)
    return count


def indexed_pages(shards: Sequence[ShardClient]) -> int | None:
    """The page documents of ``shards`` (a mix's too), or None when one of them is not a local
    bundle (a remote queue server's pages cannot be counted here)."""
    total = 0
    for shard in map(unwrap, shards):
        if not isinstance(shard, LocalShard):
            return None
        with shard.lock:
            total += bundle_pages(shard.reader)
    return total
