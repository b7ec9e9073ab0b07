"""A bounded cache of what a shard read for a document: Solr's document cache.

Layer: ``ranking.core``. A shard's index is a snapshot (a refreshed bundle opens a new shard,
:class:`ranking.indexes.ReaderPool`), so what was read of a document stays true for the
shard's lifetime: the same pages head the result lists query after query, and reading one
again means inflating and parsing a gzip member (summaries) or looking a meta word up in the
dictionary (redirect sources). Like Solr's ``documentCache``, the cache holds a fixed number
of entries, the least recently used going first; it holds query-independent data only
(never a snippet). Values are shared: a caller copies a value before changing it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class DocumentCache(Generic[K, V]):
    """At most ``size`` values by key, least recently used out first. Not thread-safe: the
    shard calls it under its lock."""

    __slots__ = ("size", "_values")

    def __init__(self, size: int) -> None:
        self.size = max(0, int(size))
        self._values: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        values = self._values
        value = values.get(key)
        if value is not None:
            values.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``, dropping the least recently used beyond ``size``."""
        if not self.size:
            return
        values = self._values
        values[key] = value
        values.move_to_end(key)
        if len(values) > self.size:
            values.popitem(last=False)

    def load(self, key: K, read: Callable[[K], V]) -> V:
        """The value of ``key``, ``read`` (and kept) on a miss."""
        value = self.get(key)
        if value is None:
            value = read(key)
            self.put(key, value)
        return value

    def __len__(self) -> int:
        return len(self._values)
