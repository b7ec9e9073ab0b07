"""Many document index blobs decoded at once, column-wise, into one :class:`DocBatch`.

Layer: ``indexer.core``. The queue server decodes every blob a fetcher sends before it stores
it (the check of :func:`indexer.core.documents.encoding.prepare_encoded`, whose result the
active partition keeps), and a re-order decodes every blob of a partition
(:func:`indexer.core.partition.build.load_partition_docs`): tens of thousands of blobs, most of
them link documents of a few terms, for which :func:`.doc_index.decode_doc_index`'s per-blob
Python steps cost more than the data (44 % of a re-order, a sixth of the queue server's loop
in a profiled ``manage.py crawl``). Here each blob costs one decompression (ISA-L) and a few
slices of its sections; each kind of section of all blobs is joined once and read by one
``numpy.frombuffer`` (heads, frequencies and positions) or one UTF-8 decode (terms, meta
words): no Python step per term or position (layout in :mod:`.doc_index`).

:func:`decode_doc_batch` gives exactly ``DocBatch.concat([decode_doc_index(b) ...])`` when
every blob is well formed, and ``None`` as soon as one is not: the caller then decodes one
blob at a time, which names the bad blob and what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from isal import isal_zlib

from .doc_index import DocBatch

Int64Array = npt.NDArray[np.int64]

# the blob head and the terms' byte length (:mod:`.doc_index`)
_HEAD = np.dtype([("length", ">u4"), ("nterms", ">u4"), ("nmeta", ">u4"),
                  ("nregions", ">u4"), ("nclass", ">u4"), ("wide", "u1"), ("tbytes", ">u4")])
_REGION = np.dtype([("p", ">i4"), ("w", ">f8")])
_REGION_BYTES = _REGION.itemsize


def _joined(raws: list[bytes], starts: Int64Array, ends: Int64Array) -> bytes:
    """The bytes ``raw[start:end]`` of every blob, back to back (one slice per blob)."""
    return b"".join([raw[a:b] for raw, a, b in zip(raws, starts.tolist(), ends.tolist(),
                                                   strict=True)])


def _numbers(raws: list[bytes], starts: Int64Array, ends: Int64Array,
             wide: npt.NDArray[np.bool_], per_blob: Int64Array) -> Int64Array:
    """The big-endian unsigned numbers of every blob's ``[start, end)`` section, u32 in the
    ``wide`` blobs and u16 in the others, in blob order (``per_blob`` of them each)."""
    out = np.empty(int(per_blob.sum()), dtype=np.int64)
    in_wide = np.repeat(wide, per_blob)
    for flag, dtype in ((False, ">u2"), (True, ">u4")):
        rows = np.flatnonzero(wide == flag)
        if rows.size:
            out[in_wide == flag] = np.frombuffer(
                _joined([raws[i] for i in rows.tolist()], starts[rows], ends[rows]),
                dtype=dtype)
    return out


def _strings(raws: list[bytes], starts: Int64Array, sizes: Int64Array,
             counts: Int64Array) -> list[str] | None:
    """The NUL-terminated strings of every blob's section (``counts`` in each), or None when
    a section is not ``counts`` strings each ending in NUL, or not UTF-8."""
    ends = starts + sizes
    nuls = np.fromiter((raw.count(0, a, b) for raw, a, b in zip(raws, starts.tolist(),
                                                                  ends.tolist(), strict=True)),
                       dtype=np.int64, count=len(raws))
    if not np.array_equal(nuls, counts):
        return None
    filled = np.flatnonzero(sizes > 0).tolist()
    ends_list = ends.tolist()
    if any(raws[i][ends_list[i] - 1] != 0 for i in filled):  # a section not ending in NUL
        return None
    if not filled:
        return []
    try:
        text = _joined(raws, starts, ends)[:-1].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return text.split("\0")


def decode_doc_batch(blobs: Sequence[bytes], doc_ids: list[bytes]) -> DocBatch | None:
    """The blobs (:func:`.doc_index.encode_doc_index`'s bytes, compressed) decoded as one
    :class:`DocBatch` with ``doc_ids``; None when any blob is malformed (see the module)."""
    try:  # ISA-L reads zlib streams about twice as fast as zlib
        raws = [isal_zlib.decompress(blob) for blob in blobs]
    except (isal_zlib.error, TypeError):
        return None
    n = len(raws)
    sizes = np.fromiter(map(len, raws), dtype=np.int64, count=n)
    if (sizes < _HEAD.itemsize + 4).any():
        return None
    zero = np.zeros(n, dtype=np.int64)
    head = np.frombuffer(_joined(raws, zero, zero + _HEAD.itemsize), dtype=_HEAD)
    nterms, nmeta, nregions, nclass, term_bytes = (
        head[name].astype(np.int64) for name in ("nterms", "nmeta", "nregions", "nclass",
                                                 "tbytes"))
    wide = head["wide"] != 0
    width = np.where(wide, 4, 2)
    term_at = np.full(n, _HEAD.itemsize, dtype=np.int64)
    meta_size_at = term_at + term_bytes
    if (meta_size_at + 4 > sizes).any():
        return None
    meta_bytes = np.frombuffer(_joined(raws, meta_size_at, meta_size_at + 4),
                               dtype=">u4").astype(np.int64)
    meta_at = meta_size_at + 4
    counts_at = meta_at + meta_bytes
    positions_at = counts_at + nterms * width
    if (positions_at > sizes).any():
        return None
    counts = _numbers(raws, counts_at, positions_at, wide, nterms)
    summed = np.concatenate(([0], np.cumsum(counts)))
    npos = summed[np.cumsum(nterms)] - summed[np.cumsum(nterms) - nterms]
    regions_at = positions_at + npos * width
    classifier_at = regions_at + _REGION_BYTES * nregions
    if not np.array_equal(classifier_at + 8 * nclass, sizes):
        return None
    positions = _numbers(raws, positions_at, regions_at, wide, npos)
    terms = _strings(raws, term_at, term_bytes, nterms)
    meta = _strings(raws, meta_at, meta_bytes, nmeta)
    if terms is None or meta is None:
        return None
    return DocBatch(doc_ids, head["length"].tolist(),
                    _regions(_joined(raws, regions_at, classifier_at), nregions),
                    _classifier_scores(_joined(raws, classifier_at, sizes), nclass),
                    terms, nterms, counts, positions, meta, nmeta)


def _regions(raw: bytes, count: Int64Array) -> list[tuple[tuple[int, float], ...]]:
    """Each blob's ``count`` regions (``raw``: all of them back to back) as (last position,
    weight) tuples."""
    rows = np.frombuffer(raw, dtype=_REGION)
    pairs = list(zip(rows["p"].tolist(), rows["w"].tolist(), strict=True))
    edges = np.concatenate(([0], np.cumsum(count))).tolist()
    return [tuple(pairs[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=False)]


def _classifier_scores(raw: bytes, count: Int64Array) -> list[tuple[float, ...]]:
    """Each blob's ``count`` classifier scores (``raw``: all of them back to back)."""
    if not raw:
        return [()] * int(count.size)
    scores = np.frombuffer(raw, dtype=">f8").tolist()
    edges = np.concatenate(([0], np.cumsum(count))).tolist()
    return [tuple(scores[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=False)]


__all__ = ["decode_doc_batch"]
