"""The company-level-domain table (the seed's CLDData): CLD hash -> (SEEN_URLS,
WEIGHTED_SEEN_URLS, WEIGHTED_INCOMING_URLS).

Layer: ``crawler.core.scheduler``. In memory: a dict from the 64-bit CLD hash to a row number and
three compact ``array`` columns (8 bytes per value; about 100 bytes per domain with the dict, so
10^6 domains take ~100 MB). On disk (``CLDData/cld.<generation>.bin``): a checksummed blob (magic
``YQCLD001``) whose payload is ``rows u64`` then four little-endian arrays of ``rows`` values:
keys (u64), seen (i64), weighted seen (f64), weighted incoming (f64). Rows are in insertion order.
Written whole at each checkpoint (a 10^6-domain table is 32 MB).
"""

from __future__ import annotations

import struct
from array import array
from pathlib import Path

import numpy as np

from crawler.core.scheduler.durable.storage import read_blob, write_blob
from crawler.core.scheduler.errors import CorruptQueueError

_MAGIC = b"YQCLD001"
_VERSION = 1
_ROWS = struct.Struct("<Q")


class CldTable:
    """Per-CLD counters. :meth:`update` is the only mutator."""

    __slots__ = ("_incoming", "_index", "_keys", "_seen", "_wseen")

    def __init__(self) -> None:
        self._index: dict[int, int] = {}
        self._keys = array("Q")
        self._seen = array("q")
        self._wseen = array("d")
        self._incoming = array("d")

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, key: int) -> tuple[int, float, float]:
        row = self._index.get(key)
        if row is None:
            return (0, 0.0, 0.0)
        return (self._seen[row], self._wseen[row], self._incoming[row])

    def update(self, key: int, seen_inc: float, incoming_inc: float) -> tuple[float, float]:
        """Add one seen url (weighted by ``seen_inc``) and ``incoming_inc`` incoming weight;
        returns the new ``(weighted_seen, weighted_incoming)``."""
        row = self._index.get(key)
        if row is None:
            row = len(self._keys)
            self._index[key] = row
            self._keys.append(key)
            self._seen.append(0)
            self._wseen.append(0.0)
            self._incoming.append(0.0)
        self._seen[row] += 1
        wseen = self._wseen[row] + seen_inc
        self._wseen[row] = wseen
        incoming = self._incoming[row] + incoming_inc
        self._incoming[row] = incoming
        return wseen, incoming

    def save(self, path: Path, *, sync: bool = True) -> None:
        parts = [_ROWS.pack(len(self._keys))]
        for column, dtype in ((self._keys, "<u8"), (self._seen, "<i8"), (self._wseen, "<f8"),
                              (self._incoming, "<f8")):
            parts.append(np.frombuffer(column, dtype=_native(column)).astype(dtype).tobytes())
        write_blob(path, _MAGIC, _VERSION, b"".join(parts), sync=sync)

    @classmethod
    def load(cls, path: Path) -> CldTable:
        _, payload = read_blob(path, _MAGIC, _VERSION)
        (rows,) = _ROWS.unpack_from(payload)
        if len(payload) != _ROWS.size + rows * 32:
            raise CorruptQueueError("CLD table length does not match its row count", str(path))
        table = cls()
        offset = _ROWS.size
        columns = []
        for dtype in ("<u8", "<i8", "<f8", "<f8"):
            columns.append(np.frombuffer(payload, dtype=dtype, count=rows, offset=offset))
            offset += rows * 8
        table._keys = array("Q", columns[0].astype(np.uint64).tobytes())
        table._seen = array("q", columns[1].astype(np.int64).tobytes())
        table._wseen = array("d", columns[2].astype(np.float64).tobytes())
        table._incoming = array("d", columns[3].astype(np.float64).tobytes())
        table._index = {int(key): row for row, key in enumerate(table._keys)}
        if len(table._index) != rows:
            raise CorruptQueueError("duplicate keys in the CLD table", str(path))
        return table


def _native(column: array) -> np.dtype:
    return np.dtype({"Q": np.uint64, "q": np.int64, "d": np.float64}[column.typecode])
