"""The first n matches of a query: in posting order, or in global importance order.

Layer: ``ranking.core``. Reads a plan's root iterator (:mod:`ranking.core.postings.plan`); the shard
(:mod:`ranking.core.shard.local`) scores what it returns.

The seed ("Yioop Search Engine Ranking Mechanisms", Introduction and "Looking up Initial
Links") scans a query's posting lists only until it has the first ``n`` matches ("minimum
results to group"), assuming they hold the most important documents. In crawl order that is
:func:`~ranking.core.postings.iterators.collect`: the first n keys in (partition, doc_map index) order.

Once partitions are re-ordered by importance (:mod:`indexer.core.bundle.reorder`), each partition's
doc_map is sorted by a key, highest first, but the key does not grow with the partition number:
partition 1's best page may beat all of partition 0. The first n matches in *global key order*
(key descending, ties by partition then index; :class:`indexer.core.partition.grouping.ImportanceRanks`)
are then the n-way merge of each partition's matches, and :func:`collect_by_key` finds them as
impact-ordered indexes terminate early:

* from each partition at most ``n`` matches are read (its first ones, which are its highest
  keyed), then the iterator skips to the next partition;
* on entering a partition, once ``n`` matches are held, the n-th highest key held so far,
  ``t``, bounds the partition: only its entries with a key above ``t`` can still be among the
  top n (an equal key loses the tie to the earlier partition), and they are a prefix of its
  doc_map, so the scan of the partition stops at the first index past that prefix;
* of everything held, the ``n`` with the highest keys are kept.

This is exact: a match left unread in a partition has a key no higher than the partition's
matches reach). Work is bounded by the plan's time :class:`~ranking.core.postings.iterators.Budget`
across all partitions, as before: when it runs out, the iterators stop and the best of what was
read is returned (marked partial by the budget); and by the per-partition read bounds of
:mod:`ranking.core.postings.limits` (long lists, phrase checks), under which "every match" means every
match in the part of each partition that was read.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from ranking.core.postings.blocks import Block, concat_blocks, key_index, key_partition, make_keys
from ranking.core.postings.iterators import DocIterator

FloatArray = npt.NDArray[np.float64]


def _index_bound(keys: FloatArray, held: list[FloatArray], count: int, n: int) -> int:
    """How many leading entries of a partition with (non-increasing) ``keys`` can still enter
    the top ``n`` when ``count`` matches with keys ``held`` are held from earlier partitions."""
    if count < n:
        return int(keys.size)
    flat = np.concatenate(held)
    threshold = np.partition(flat, count - n)[count - n]  # the n-th highest held key
    # entries with key > threshold: a prefix, since keys do not increase
    return int(keys.size - np.searchsorted(keys[::-1], threshold, side="right"))


def collect_by_key(iterator: DocIterator, n: int,
                   keys: Mapping[int, FloatArray]) -> tuple[Block, bool]:
    """The first ``n`` matches of ``iterator`` in global key order (see the module
    docstring), returned in ascending (partition, index) order like
    :func:`~ranking.core.postings.iterators.collect`, and whether every match was read and returned.

    ``keys[p][j]`` is the key of doc_map entry ``j`` of partition ``p``, non-increasing in
    ``j``, for every partition the iterator can return."""
    if n <= 0:
        return Block.empty(), False
    held: list[Block] = []
    held_keys: list[FloatArray] = []
    count = 0
    part, room, bound = -1, 0, 0  # the partition being read, matches it may still give, index bound
    complete = True
    block = iterator.next_block()
    while block is not None:
        parts = key_partition(block.keys)
        index = key_index(block.keys)
        edges = [0, *(np.flatnonzero(parts[1:] != parts[:-1]) + 1).tolist(), len(block)]
        done = False
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            p = int(parts[a])
            if p != part:
                part, room = p, n
                bound = _index_bound(keys[p], held_keys, count, n)
            take = min(int(np.searchsorted(index[a:b], bound)), room)
            if take:
                held.append(block.take(slice(a, a + take)))
                held_keys.append(keys[p][index[a:a + take]])
                room -= take
                count += take
            done = take < b - a or room == 0
            complete &= take == b - a
        if done:  # nothing more of this partition can enter: go to the next one
            complete = False
            block = iterator.skip_to(int(make_keys(part + 1, np.zeros(1, np.int64))[0]))
        else:
            block = iterator.next_block()
    out = concat_blocks(held)
    if len(out) > n:
        flat = np.concatenate(held_keys)
        top = np.lexsort((out.keys, -flat))[:n]  # key descending, then (partition, index)
        out = out.take(np.sort(top))
        complete = False
    return out, complete


__all__ = ["collect_by_key"]
