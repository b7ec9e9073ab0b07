"""The seen-url filter that grows with the crawl: a scalable Bloom filter.

Layer: ``crawler.core.scheduler``. A fixed Bloom filter (:class:`.bloom.BloomFilter`) sized for
``n`` urls keeps its false-positive rate only up to ``n``: past it, more and more new urls are
wrongly taken as seen and never crawled (sized for 5 million, about 6 % at 10 million and half
at 20 million). Almeida, Baquero, Preguiça and Hutchison's *scalable Bloom filters* (2007) keep a
bound instead: a list of fixed filters ("slices"); urls go into the newest slice until it holds
its capacity, then a new slice is added with ``GROWTH`` times the capacity and ``TIGHTENING``
times the false-positive rate. A url is seen when any slice holds it. With slice ``i``'s rate
``p0 * r**i`` and ``p0 = p * (1 - r)``, the compounded rate stays below ``p`` however many slices
there are; memory grows with the urls actually seen (about 16 to 20 bits a url at ``p`` = 0.1 %).

On-disk format (``UrlExistsFilterBundle/bloom.<generation>.bin``): a checksummed blob (see
:mod:`..durable.storage`, magic ``YQSBLOOM``) whose payload is ``target_rate f64 | slices u32``,
then per slice ``capacity u64 | rate f64 | m u64 | k u32 | count u64 | bits``. A fixed filter's file
(``YQBLOOM1``, written before this format) loads as one full slice, so a saved crawl resumes.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from crawler.core.scheduler.durable.storage import read_blob, write_blob
from crawler.core.scheduler.errors import CorruptQueueError
from crawler.core.scheduler.filters.bloom import _MAGIC as FIXED_MAGIC
from crawler.core.scheduler.filters.bloom import BloomFilter, UrlSet

GROWTH = 2           # each new slice holds this many times the urls of the one before
TIGHTENING = 0.5     # ... at this many times its false-positive rate
_MAGIC = b"YQSBLOOM"
_VERSION = 1
_HEAD = struct.Struct("<dI")
_SLICE = struct.Struct("<QdQIQ")


class _Slice:
    __slots__ = ("capacity", "filter", "rate")

    def __init__(self, capacity: int, rate: float, bloom: BloomFilter) -> None:
        self.capacity = int(capacity)
        self.rate = float(rate)
        self.filter = bloom

    @classmethod
    def new(cls, capacity: int, rate: float) -> _Slice:
        return cls(capacity, rate, BloomFilter.for_capacity(capacity, rate))

    @property
    def room(self) -> int:
        return max(0, self.capacity - self.filter.count)


class ScalableBloomFilter(UrlSet):
    """Seen urls with a false-positive rate below ``target_rate`` at any size; the first slice
    holds ``initial_capacity`` urls. Same interface as :class:`.bloom.BloomFilter`: urls are
    given as :func:`indexer.core.urls.md5_halves`; ``count`` is the number of urls inserted."""

    def __init__(self, initial_capacity: int, target_rate: float,
                 slices: list[_Slice] | None = None) -> None:
        if initial_capacity < 1 or not 0.0 < target_rate < 1.0:
            raise ValueError("a scalable Bloom filter needs a capacity and a rate in (0, 1)")
        self.target_rate = float(target_rate)
        self._slices = slices or [_Slice.new(initial_capacity,
                                             target_rate * (1.0 - TIGHTENING))]

    @property
    def count(self) -> int:
        return sum(s.filter.count for s in self._slices)

    @property
    def num_bits(self) -> int:
        return sum(s.filter.num_bits for s in self._slices)

    @property
    def slices(self) -> int:
        return len(self._slices)

    def contains_many(self, digests: np.ndarray) -> np.ndarray:
        """Boolean array: which of the urls may have been inserted (never a false "no")."""
        found = np.zeros(len(digests), dtype=bool)
        for piece in self._slices:
            todo = np.flatnonzero(~found)
            if not todo.size:
                break
            found[todo] = piece.filter.contains_many(digests[todo])
        return found

    def add_many(self, digests: np.ndarray) -> np.ndarray:
        """Insert urls; returns which were (probably) new. Duplicates within ``digests`` must
        have been removed by the caller (the second copy would report new too)."""
        present = self.contains_many(digests)
        fresh = digests[~present]
        while len(fresh):
            last = self._slices[-1]
            if not last.room:
                last = _Slice.new(last.capacity * GROWTH, last.rate * TIGHTENING)
                self._slices.append(last)
            taken, fresh = fresh[:last.room], fresh[last.room:]
            last.filter.add_many(taken)
        return ~present

    def clear(self) -> None:
        """Forget every url (back to one empty first slice)."""
        first = self._slices[0]
        self._slices = [_Slice.new(first.capacity, first.rate)]

    def save(self, path: Path, *, sync: bool = True) -> None:
        parts = [_HEAD.pack(self.target_rate, len(self._slices))]
        for piece in self._slices:
            bloom = piece.filter
            parts.append(_SLICE.pack(piece.capacity, piece.rate, bloom.num_bits,
                                     bloom.num_hashes, bloom.count))
            parts.append(bloom.bits.tobytes())
        write_blob(path, _MAGIC, _VERSION, b"".join(parts), sync=sync)

    @classmethod
    def load(cls, path: Path, target_rate: float = 0.001) -> ScalableBloomFilter:
        """The filter saved at ``path``; a fixed filter's file becomes one full slice (new urls
        then go to a second slice) kept at ``target_rate``."""
        try:
            with open(path, "rb") as handle:
                magic = handle.read(len(_MAGIC))
        except FileNotFoundError:
            raise CorruptQueueError("checkpoint file is missing", str(path)) from None
        if magic == FIXED_MAGIC:
            fixed = BloomFilter.load(path)
            rate = target_rate * (1.0 - TIGHTENING)
            return cls(max(1, fixed.count), target_rate,
                       [_Slice(max(1, fixed.count), rate, fixed)])
        _, payload = read_blob(path, _MAGIC, _VERSION)
        try:
            return cls._from_payload(memoryview(payload))
        except (struct.error, ValueError) as exc:
            raise CorruptQueueError(f"Bloom filter unreadable: {exc}", str(path)) from None

    @classmethod
    def _from_payload(cls, payload: memoryview) -> ScalableBloomFilter:
        target_rate, count = _HEAD.unpack_from(payload)
        at = _HEAD.size
        slices = []
        for _ in range(count):
            capacity, rate, num_bits, num_hashes, inserted = _SLICE.unpack_from(payload, at)
            at += _SLICE.size
            nbytes = (num_bits + 7) // 8
            if at + nbytes > len(payload):
                raise ValueError("slice bits truncated")
            bits = np.frombuffer(payload, dtype=np.uint8, count=nbytes, offset=at).copy()
            at += nbytes
            slices.append(_Slice(capacity, rate, BloomFilter(num_bits, num_hashes, bits,
                                                             inserted)))
        if not slices or at != len(payload):
            raise ValueError("no slices, or bytes after the last one")
        return cls(slices[0].capacity, target_rate, slices)
