"""Retired documents: copies a recrawl replaced or removed, which search leaves out.

Layer: ``indexer.core``. Closed partitions are immutable, so when a revisit finds a page
changed, its new document goes into the active partition and the old one stays where it was;
when a page is now 404/410 or noindex, its documents stay too. The queue server (which knows,
from its crawl queue's visit table, ``crawler.core.scheduler.revisits``) publishes here which
documents no longer count, and :class:`indexer.core.bundle.reader.IndexBundleReader` drops them from
every posting list it hands out, so the old copy never appears beside the new one and a
removed page leaves the results (the seed keeps Yioop's partitions immutable; this is the
deletion list Lucene keeps beside its immutable segments)::

    BUNDLE/retired.bin    framed binary (kind "retired"), written whole, atomically:
                          u8 number of doc_ids, u8 number of url hashes (big-endian),
                          the doc_ids (24 bytes each, sorted),
                          the url hashes (8 bytes each, sorted)

A doc_map entry is left out when its representative's doc_id is retired, or when the url
hash of its representative (doc_id bytes 0-7) is: every document filed under a removed url
(the page and the link documents pointing at it) leaves the results. The writer publishes
before it refreshes the active partition, and a reader reads the file after the partition
MANIFESTs, so a reader that sees a new copy also sees the old one retired.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..errors import CorruptIndexError
from ..files.storage import atomic_write, frame, read_framed
from ..ids import DOC_ID_LEN

RETIRED_FILE = "retired.bin"
_KIND = "retired"
_COUNTS = struct.Struct(">QQ")


def write_retired(bundle: str | os.PathLike[str], doc_ids: Iterable[bytes],
                  url_hashes: Iterable[int]) -> None:
    """Publish the retired ``doc_ids`` and removed ``url_hashes`` (unsigned 64-bit) of a
    bundle, replacing what was published before."""
    ids = sorted(doc_ids)
    if any(len(d) != DOC_ID_LEN for d in ids):
        raise ValueError("a retired doc_id has 24 bytes")
    urls = np.array(sorted(url_hashes), dtype=">u8")
    payload = _COUNTS.pack(len(ids), len(urls)) + b"".join(ids) + urls.tobytes()
    atomic_write(Path(bundle) / RETIRED_FILE, frame(_KIND, payload))


def _members(values: npt.NDArray, sorted_set: npt.NDArray) -> npt.NDArray[np.bool_]:
    """Which of ``values`` are in ``sorted_set`` (a sorted array of the same dtype)."""
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(sorted_set, values)
    at[at >= len(sorted_set)] = 0
    return sorted_set[at] == values


@dataclass(frozen=True, slots=True)
class Retired:
    """A bundle's published retired set: sorted ``doc_ids`` (``S24``), the sorted url hashes
    of those doc_ids (``doc_urls``) and of the removed urls (``urls``), as ``uint64``."""

    doc_ids: npt.NDArray[np.bytes_]
    doc_urls: npt.NDArray[np.uint64]
    urls: npt.NDArray[np.uint64]

    def __len__(self) -> int:
        return len(self.doc_ids) + len(self.urls)

    def live(self, representatives: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_] | None:
        """For doc_map representatives (an ``n x 24`` byte array), which are still live;
        None when all are. Url hashes are looked up first (binary search over integers);
        whole doc_ids only for the entries whose url has a retired copy."""
        if not len(self) or not len(representatives):
            return None
        reps = np.ascontiguousarray(representatives)
        url = np.ascontiguousarray(reps[:, :8]).view(">u8").ravel().astype(np.uint64)
        dead = _members(url, self.urls)
        suspect = _members(url, self.doc_urls)
        if suspect.any():
            ids = np.ascontiguousarray(reps[suspect]).view(f"S{DOC_ID_LEN}").ravel()
            dead[suspect] |= _members(ids, self.doc_ids)
        return None if not dead.any() else ~dead


def read_retired(bundle: str | os.PathLike[str]) -> Retired | None:
    """A bundle's published retired set, or None when it has none. Raises
    :class:`CorruptIndexError` for a damaged file."""
    path = Path(bundle) / RETIRED_FILE
    try:
        payload = read_framed(path, _KIND)
    except FileNotFoundError:
        return None
    if len(payload) < _COUNTS.size:
        raise CorruptIndexError(path, "truncated counts")
    docs, urls = _COUNTS.unpack_from(payload)
    if len(payload) != _COUNTS.size + docs * DOC_ID_LEN + urls * 8:
        raise CorruptIndexError(path, "the counts do not match the payload's length")
    start = _COUNTS.size
    end = start + docs * DOC_ID_LEN
    raw = np.frombuffer(payload[start:end], dtype=np.uint8).reshape(docs, DOC_ID_LEN)
    return Retired(np.frombuffer(payload[start:end], dtype=f"S{DOC_ID_LEN}"),
                   np.sort(np.ascontiguousarray(raw[:, :8]).view(">u8").ravel()
                           .astype(np.uint64)),
                   np.frombuffer(payload[end:], dtype=">u8").astype(np.uint64))
