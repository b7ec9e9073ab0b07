"""A Bloom filter of the urls already queued (the seed's UrlExistsFilterBundle).

Layer: ``crawler.core.scheduler``. Bits live in a numpy ``uint8`` array; a batch of urls is
tested and inserted with vectorised index arithmetic (double hashing: index_j = h1 + j*h2 mod m,
with h1, h2 the two 64-bit halves of the url's md5: :func:`indexer.core.urls.md5_halves`).

Sizing: for ``n`` expected urls and false-positive rate ``p``, ``m = ceil(-n ln p / ln2^2)``
bits and ``k = round(m/n ln 2)`` hashes. The trade-off: no false negatives (a queued url is
never queued again), but a false positive makes the queue skip a url it has never seen — with
the defaults (5 million urls, 0.1 %) about one new url in a thousand once the crawl nears the
expected size, more beyond it. Size ``bloom_expected_urls`` for the crawl.

On-disk format (``UrlExistsFilterBundle/bloom.<generation>.bin``): a checksummed blob (see
:mod:`..durable.storage`, magic ``YQBLOOM1``) whose payload is ``m u64 | k u32 | count u64 | bits``.
"""

from __future__ import annotations

import abc
import math
import struct
from pathlib import Path

import numpy as np

from crawler.core.scheduler.durable.storage import read_blob, write_blob
from crawler.core.scheduler.errors import CorruptQueueError
from indexer.core.urls import md5_halves

_MAGIC = b"YQBLOOM1"
_VERSION = 1
_HEAD = struct.Struct("<QIQ")


class UrlSet(abc.ABC):
    """A set of urls given as :func:`indexer.core.urls.md5_halves`, with one-url conveniences over its
    ``contains_many`` / ``add_many``."""

    @abc.abstractmethod
    def contains_many(self, digests: np.ndarray) -> np.ndarray:
        """Boolean array: which of the urls may have been inserted."""

    @abc.abstractmethod
    def add_many(self, digests: np.ndarray) -> np.ndarray:
        """Insert urls; boolean array of which were (probably) new."""

    def __contains__(self, url: str) -> bool:
        return bool(self.contains_many(md5_halves([url]))[0])

    def add(self, url: str) -> bool:
        return bool(self.add_many(md5_halves([url]))[0])


class BloomFilter(UrlSet):
    """A fixed-size Bloom filter. ``count`` is the number of insertions that changed it."""

    def __init__(self, num_bits: int, num_hashes: int, bits: np.ndarray | None = None,
                 count: int = 0) -> None:
        if num_bits < 8 or num_hashes < 1:
            raise ValueError("a Bloom filter needs at least 8 bits and 1 hash")
        self.num_bits = int(num_bits)
        self.num_hashes = int(num_hashes)
        nbytes = (self.num_bits + 7) // 8
        if bits is None:
            bits = np.zeros(nbytes, dtype=np.uint8)
        elif bits.shape != (nbytes,):
            raise ValueError("bit array does not match num_bits")
        self.bits = bits
        self.count = count
        self._steps = np.arange(self.num_hashes, dtype=np.uint64)

    @classmethod
    def for_capacity(cls, expected: int, fp_rate: float) -> BloomFilter:
        bits = math.ceil(-expected * math.log(fp_rate) / (math.log(2) ** 2))
        bits = max(64, bits)
        hashes = max(1, round(bits / expected * math.log(2)))
        return cls(bits, hashes)

    def _positions(self, digests: np.ndarray) -> np.ndarray:
        h1 = digests[:, 0:1]
        h2 = digests[:, 1:2] | np.uint64(1)
        with np.errstate(over="ignore"):
            return (h1 + self._steps[None, :] * h2) % np.uint64(self.num_bits)

    def contains_many(self, digests: np.ndarray) -> np.ndarray:
        """Boolean array: which of the urls (given as :func:`indexer.core.urls.md5_halves`) may be present."""
        if len(digests) == 0:
            return np.zeros(0, dtype=bool)
        pos = self._positions(digests)
        byte = (pos >> np.uint64(3)).astype(np.intp)
        mask = (np.uint8(1) << (pos & np.uint64(7)).astype(np.uint8))
        return np.all((self.bits[byte] & mask) != 0, axis=1)

    def add_many(self, digests: np.ndarray) -> np.ndarray:
        """Insert urls; returns which were (probably) new. Duplicates within ``digests`` must
        have been removed by the caller (the second copy would report new too)."""
        present = self.contains_many(digests)
        fresh = digests[~present]
        if len(fresh):
            pos = self._positions(fresh)
            byte = (pos >> np.uint64(3)).astype(np.intp).ravel()
            mask = (np.uint8(1) << (pos & np.uint64(7)).astype(np.uint8)).ravel()
            np.bitwise_or.at(self.bits, byte, mask)
            self.count += len(fresh)
        return ~present

    def clear(self) -> None:
        self.bits[:] = 0
        self.count = 0

    def save(self, path: Path, *, sync: bool = True) -> None:
        head = _HEAD.pack(self.num_bits, self.num_hashes, self.count)
        write_blob(path, _MAGIC, _VERSION, head + self.bits.tobytes(), sync=sync)

    @classmethod
    def load(cls, path: Path) -> BloomFilter:
        _, payload = read_blob(path, _MAGIC, _VERSION)
        if len(payload) < _HEAD.size:
            raise CorruptQueueError("Bloom filter header truncated", str(path))
        num_bits, num_hashes, count = _HEAD.unpack_from(payload)
        bits = np.frombuffer(payload, dtype=np.uint8, offset=_HEAD.size).copy()
        try:
            return cls(num_bits, num_hashes, bits, count)
        except ValueError as exc:
            raise CorruptQueueError(str(exc), str(path)) from None
