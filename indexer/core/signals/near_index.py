"""Finding fingerprints within k bits of each other without comparing every pair.

Layer: ``indexer.core`` (pure Python + numpy). Used by the queue server (one page at a time,
:class:`NearIndex`) and by the crawl's clustering (a whole crawl at once, :func:`near_pairs`).

The pigeonhole rule (Manku, Jain and Das Sarma 2007): cut the 64 bits into ``k + 1``
contiguous bands; two fingerprints that differ in at most ``k`` bits differ in at most ``k``
bands, so they agree exactly on at least one. Each band is a table from its bits to the
fingerprints that have them; only fingerprints sharing a band are compared (by popcount of
the xor). With k = 3: four tables of 16 bits. Every pair within ``k`` bits is found, never one
farther (the property test checks both against brute force).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from indexer.core.signals.simhash import NO_SIMHASH

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def band_masks(k: int) -> list[tuple[int, int]]:
    """``(shift, mask)`` of each of the ``k + 1`` bands: contiguous, covering the 64 bits."""
    bands = k + 1
    if not 1 <= bands <= 64:
        raise ValueError(f"k must be in 0..63, got {k}")
    edges = [round(64 * i / bands) for i in range(bands + 1)]
    return [(lo, (1 << (hi - lo)) - 1) for lo, hi in zip(edges, edges[1:], strict=False)]


def popcount(values: U64) -> I64:
    """Set bits of each 64-bit value."""
    as_bytes = values.astype("<u8").view(np.uint8).reshape(-1, 8)
    return np.unpackbits(as_bytes, axis=1).sum(axis=1, dtype=np.int64)


def near_pairs(fingerprints: npt.ArrayLike, k: int) -> tuple[I64, I64]:
    """Every pair ``(i, j)``, ``i < j``, of positions in ``fingerprints`` whose values differ in
    at most ``k`` bits (equal values included), each pair once, sorted. A value of
    :data:`~indexer.core.signals.simhash.NO_SIMHASH` pairs with nothing.

    Equal values are paired as one before the bands are read, so a thousand copies of one page
    cost one comparison; within a band the candidates are the runs of equal band bits."""
    values = np.asarray(fingerprints, dtype=np.uint64)
    keep = np.flatnonzero(values != NO_SIMHASH)
    unique, inverse = np.unique(values[keep], return_inverse=True)
    pairs_u: set[tuple[int, int]] = set()
    for shift, mask in band_masks(k):
        band = (unique >> np.uint64(shift)) & np.uint64(mask)
        order = np.argsort(band, kind="stable")
        sorted_band = band[order]
        starts = np.flatnonzero(np.r_[True, sorted_band[1:] != sorted_band[:-1]])
        ends = np.r_[starts[1:], sorted_band.size]
        for s, e in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist(),
                        strict=True):
            members = order[s:e]
            a, b = np.triu_indices(members.size, 1)
            left, right = members[a], members[b]
            close = popcount(unique[left] ^ unique[right]) <= k
            for x, y in zip(left[close].tolist(), right[close].tolist(), strict=True):
                pairs_u.add((x, y) if x < y else (y, x))
    # expand unique values back to positions: pairs between groups, and within each group
    groups: list[list[int]] = [[] for _ in range(unique.size)]
    for position, u in zip(keep.tolist(), np.asarray(inverse).ravel().tolist(), strict=True):
        groups[u].append(position)
    out: set[tuple[int, int]] = set()
    for members_list in groups:
        for x in range(len(members_list)):
            for y in range(x + 1, len(members_list)):
                out.add((members_list[x], members_list[y]))
    for x, y in pairs_u:
        for p in groups[x]:
            for q in groups[y]:
                out.add((p, q) if p < q else (q, p))
    ordered = sorted(out)
    i = np.fromiter((p for p, _ in ordered), dtype=np.int64, count=len(ordered))
    j = np.fromiter((q for _, q in ordered), dtype=np.int64, count=len(ordered))
    return i, j


class NearIndex:
    """A growing set of fingerprints, each with a key, answering "is there one within ``k``
    bits of this?" by the band tables. Insert and lookup cost a dictionary probe per band plus
    a popcount per candidate. Not thread-safe (the queue server applies one batch at a time).
    """

    __slots__ = ("_bands", "_tables", "k", "size")

    def __init__(self, k: int) -> None:
        self.k = k
        self._bands = band_masks(k)
        self._tables: list[dict[int, list[tuple[int, str]]]] = [{} for _ in self._bands]
        self.size = 0

    def nearest(self, fingerprint: int) -> tuple[str, int] | None:
        """The key and distance of the closest fingerprint within ``k`` bits (the first
        inserted among equally close ones), or None."""
        if fingerprint == NO_SIMHASH:
            return None
        best: tuple[str, int] | None = None
        for (shift, mask), table in zip(self._bands, self._tables, strict=True):
            for value, key in table.get((fingerprint >> shift) & mask, ()):
                distance = (value ^ fingerprint).bit_count()
                if distance <= self.k and (best is None or distance < best[1]):
                    best = (key, distance)
        return best

    def add(self, fingerprint: int, key: str) -> None:
        """Remember ``fingerprint`` under ``key`` (a fingerprint of none is not kept)."""
        if fingerprint == NO_SIMHASH:
            return
        for (shift, mask), table in zip(self._bands, self._tables, strict=True):
            table.setdefault((fingerprint >> shift) & mask, []).append((fingerprint, key))
        self.size += 1
