"""The document index blob: what the index keeps of each document beside its summary.

Layer: ``indexer.core``. Written by :mod:`indexer.core.documents.encoding` (one document at a time for
fetchers, a whole batch at a time for the indexer) and read back by
:mod:`indexer.core.partition.build` (the active partition rebuilt after a crash, a finished
partition re-ordered) and :mod:`indexer.core.bundle.verify`. Holds no file: blobs are stored
zlib-compressed next to their summaries in ``partition_N.txt.gz``
(:mod:`indexer.core.documents.store`).

A blob holds a document's terms, positions, meta words, region weights and classifier scores::

    u32 length, u32 nterms, u32 nmeta, u32 nregions, u32 nclassifier, u8 wide
    u32 byte length of the terms               then the terms, UTF-8, each followed by NUL
    u32 byte length of the meta words          then the meta words, each followed by NUL
    nterms x N frequency                       then sum(frequency) x N positions
                                               (N = u16 when wide is 0, else u32)
    nregions x (i32 last position, f64 weight) then nclassifier x f64
                                               (a page whose title has no words has a
                                               first region ending at -1; an i32 reads
                                               every u32 written before the same way)

Three encoders write exactly the same bytes: :func:`encode_doc_index` (numpy, any document),
:func:`small_doc_index` (``struct``, for the many small link documents fetchers encode) and
:func:`encode_blobs` (a whole :class:`DocBatch`, its array work done once).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt
from isal import isal_zlib

from ..text.term_positions import TermPositions
from .document import IndexDocument

_BLOB_HEAD = struct.Struct(">IIIIIB")
_HEAD_AND_TERMS = struct.Struct(">IIIIIBI")  # the blob head, then the terms' byte length
_U32 = struct.Struct(">I")
_REGION = np.dtype([("p", ">i4"), ("w", ">f8")])
BLOB_COMPRESSION_LEVEL = 1  # ISA-L level (0-3); 0 is twice as fast again but ~18% larger


@dataclass(frozen=True, slots=True)
class DocIndexData:
    """A decoded document index blob."""

    length: int
    terms: list[str]
    meta_words: list[str]
    counts: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int64]
    regions: tuple[tuple[int, float], ...]
    classifier_scores: tuple[float, ...]


@dataclass(slots=True)
class DocBatch:
    """Documents to append, column-wise: per document its id, length, regions and classifier
    scores; all terms, frequencies, positions and meta words of the batch back to back
    (``nterms``/``nmeta`` per document cut them)."""

    doc_ids: list[bytes]
    lengths: list[int]
    regions: list[tuple[tuple[int, float], ...]]
    classifier_scores: list[tuple[float, ...]]
    terms: list[str]
    nterms: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int64]
    meta: list[str]
    nmeta: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.doc_ids)

    def npos(self) -> npt.NDArray[np.int64]:
        """Positions per document."""
        ends = np.cumsum(self.nterms)
        cum = np.concatenate(([0], np.cumsum(self.counts)))
        return cum[ends] - cum[ends - self.nterms]

    def slice(self, a: int, b: int) -> DocBatch:
        """Documents ``a`` to ``b`` (exclusive) as a batch."""
        t0, t1 = int(self.nterms[:a].sum()), int(self.nterms[:b].sum())
        npos = self.npos()
        p0, p1 = int(npos[:a].sum()), int(npos[:b].sum())
        m0, m1 = int(self.nmeta[:a].sum()), int(self.nmeta[:b].sum())
        return DocBatch(self.doc_ids[a:b], self.lengths[a:b], self.regions[a:b],
                        self.classifier_scores[a:b], self.terms[t0:t1], self.nterms[a:b],
                        self.counts[t0:t1], self.positions[p0:p1], self.meta[m0:m1],
                        self.nmeta[a:b])

    @staticmethod
    def concat(docs: Sequence[DocIndexData], doc_ids: list[bytes]) -> DocBatch:
        """A batch of decoded document index blobs."""
        def cat(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
            return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

        return DocBatch(doc_ids, [d.length for d in docs], [d.regions for d in docs],
                        [d.classifier_scores for d in docs],
                        [t for d in docs for t in d.terms],
                        np.array([len(d.terms) for d in docs], dtype=np.int64),
                        cat([d.counts for d in docs]), cat([d.positions for d in docs]),
                        [w for d in docs for w in d.meta_words],
                        np.array([len(d.meta_words) for d in docs], dtype=np.int64))


def _joined(strings: Collection[str]) -> bytes:
    """Strings each followed by NUL (terms never contain NUL: we refuse those that do)."""
    if not strings:
        return b""
    text = "\0".join(strings) + "\0"
    if text.count("\0") != len(strings):
        raise ValueError("a term contains a NUL character")
    return text.encode("utf-8", "surrogatepass")


def gathered_positions(term_maps: Sequence[Mapping[str, Sequence[int]]]
                       ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(counts, positions)`` of several documents' terms, in order: every term's count,
    then all positions flat. A :class:`~indexer.core.text.term_positions.TermPositions` gives
    its arrays as they are; each run of other mappings (link documents' small dicts) is read
    in one pass."""
    counts: list[npt.NDArray[np.int64]] = []
    positions: list[npt.NDArray[np.int64]] = []
    run: list[Mapping[str, Sequence[int]]] = []

    def flush() -> None:
        if run:
            values = list(chain.from_iterable(m.values() for m in run))
            run_counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
            counts.append(run_counts)
            positions.append(np.fromiter(chain.from_iterable(values), dtype=np.int64,
                                         count=int(run_counts.sum())))
            run.clear()

    for terms in term_maps:
        if isinstance(terms, TermPositions):
            flush()
            counts.append(terms.counts)
            positions.append(terms.positions)
        else:
            run.append(terms)
    flush()
    if len(counts) == 1:
        return counts[0], positions[0]
    empty = np.zeros(0, dtype=np.int64)
    return (np.concatenate(counts) if counts else empty,
            np.concatenate(positions) if positions else empty)


def encode_doc_index(doc: IndexDocument) -> tuple[bytes, list[str], npt.NDArray[np.int64],
                                                  npt.NDArray[np.int64]]:
    """The compressed index blob of ``doc`` plus its terms, counts and flat positions."""
    terms = list(doc.terms)
    counts, positions = gathered_positions([doc.terms])
    total = positions.size
    raw_terms = _joined(terms)
    raw_meta = _joined(doc.meta_words)
    regions = np.array([tuple(r) for r in doc.region_weights], dtype=_REGION) \
        if doc.region_weights else np.zeros(0, dtype=_REGION)
    wide = bool(total) and int(positions.max()) > 0xFFFF or bool(counts.size) and int(
        counts.max()) > 0xFFFF
    small = ">u4" if wide else ">u2"
    parts = [
        _BLOB_HEAD.pack(doc.length, len(terms), len(doc.meta_words), len(regions),
                        len(doc.classifier_scores), wide),
        struct.pack(">I", len(raw_terms)), raw_terms,
        struct.pack(">I", len(raw_meta)), raw_meta,
        counts.astype(small).tobytes(),
        positions.astype(small).tobytes(),
        regions.tobytes(),
        np.array(doc.classifier_scores, dtype=">f8").tobytes(),
    ]
    return isal_zlib.compress(b"".join(parts), BLOB_COMPRESSION_LEVEL), terms, counts, positions


def decode_doc_index(blob: bytes) -> DocIndexData:
    """Inverse of :func:`encode_doc_index`; raises ``ValueError`` (or ``zlib.error``)."""
    raw = zlib.decompress(blob)
    length, nterms, nmeta, nregions, nclass, wide = _BLOB_HEAD.unpack_from(raw)
    small = ">u4" if wide else ">u2"
    pos = _BLOB_HEAD.size

    def take(count: int, dtype: npt.DTypeLike) -> npt.NDArray[np.generic]:
        nonlocal pos
        arr = np.frombuffer(raw, dtype=dtype, count=count, offset=pos)
        pos += arr.nbytes
        return arr

    def strings(count: int) -> list[str]:
        nonlocal pos
        (size,) = struct.unpack_from(">I", raw, pos)
        pos += 4
        chunk = raw[pos:pos + size]
        pos += size
        if not count:
            if size:
                raise ValueError("unexpected strings")
            return []
        if not chunk.endswith(b"\0"):
            raise ValueError("strings not NUL terminated")
        out = chunk[:-1].decode("utf-8", "surrogatepass").split("\0")
        if len(out) != count:
            raise ValueError("string count mismatch")
        return out

    terms = strings(nterms)
    meta = strings(nmeta)
    counts = take(nterms, small).astype(np.int64)
    positions = take(int(counts.sum()), small).astype(np.int64)
    regions = take(nregions, _REGION)
    classifier = take(nclass, ">f8")
    if pos != len(raw):
        raise ValueError("document index blob has stray bytes")
    return DocIndexData(length, terms, meta, counts, positions,
                        tuple((int(p), float(w)) for p, w in regions.tolist()),
                        tuple(float(c) for c in classifier.tolist()))


def small_doc_index(doc: IndexDocument) -> bytes | None:
    """``encode_doc_index(doc)[0]`` without numpy; None when the slow path must decide (a
    NUL in a term, a negative or huge value, a value that is not an int)."""
    try:
        values = list(doc.terms.values())
        counts = [len(v) for v in values]
        positions = [p for v in values for p in v]
        wide = bool(positions) and max(positions) > 0xFFFF or bool(counts) and max(
            counts) > 0xFFFF
        small = "I" if wide else "H"
        raw_terms = _joined(doc.terms)  # a NUL in a term raises ValueError: None below
        raw_meta = _joined(doc.meta_words)
        regions = doc.region_weights
        scores = doc.classifier_scores
        parts = [
            _BLOB_HEAD.pack(doc.length, len(counts), len(doc.meta_words), len(regions),
                            len(scores), wide),
            struct.pack(">I", len(raw_terms)), raw_terms,
            struct.pack(">I", len(raw_meta)), raw_meta,
            struct.pack(f">{len(counts)}{small}", *counts),
            struct.pack(f">{len(positions)}{small}", *positions),
            b"".join(struct.pack(">id", p, w) for p, w in regions),
            struct.pack(f">{len(scores)}d", *scores),
        ]
    except (struct.error, TypeError, ValueError, OverflowError):
        return None
    return isal_zlib.compress(b"".join(parts), BLOB_COMPRESSION_LEVEL)


def _joined_pieces(strings: list[str], per_doc: np.ndarray) -> list[bytes]:
    """Each document's strings, each followed by NUL (``_joined`` of its slice of
    ``strings``), from one join and one encode for the whole batch."""
    n = per_doc.size
    if not strings:
        return [b""] * n
    raw = ("\0".join(strings) + "\0").encode("utf-8", "surrogatepass")
    nul = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0)
    if nul.size != len(strings):
        raise ValueError("a term contains a NUL character")
    last = np.cumsum(per_doc)
    ends = np.where(last > 0, nul[np.maximum(last - 1, 0)] + 1, 0)
    starts = np.concatenate(([0], ends[:-1]))
    return [raw[x:y] for x, y in zip(starts.tolist(), ends.tolist(), strict=True)]


def encode_blobs(batch: DocBatch) -> list[bytes]:
    """``encode_doc_index(doc)[0]`` of every document of ``batch``, the same bytes, with the
    array work done once for the batch (only the deflate call is per document)."""
    compress = isal_zlib.compress
    return [compress(raw, BLOB_COMPRESSION_LEVEL) for raw in _raw_blobs(batch)]


def _raw_blobs(batch: DocBatch) -> list[bytes]:
    """The uncompressed document index blobs of ``batch``."""
    n = len(batch)
    terms = _joined_pieces(batch.terms, batch.nterms)
    metas = _joined_pieces(batch.meta, batch.nmeta)
    counts, positions = batch.counts, batch.positions
    npos = batch.npos()
    t_end = np.cumsum(batch.nterms)
    p_end = np.cumsum(npos)
    big_doc = np.zeros(n, dtype=bool)
    if counts.size and int(counts.max()) > 0xFFFF:
        big_doc[np.searchsorted(t_end, np.flatnonzero(counts > 0xFFFF), side="right")] = True
    if positions.size and int(positions.max()) > 0xFFFF:
        big_doc[np.searchsorted(p_end, np.flatnonzero(positions > 0xFFFF), side="right")] = True
    c_small = counts.astype(">u2").tobytes()
    p_small = positions.astype(">u2").tobytes()
    nreg = np.fromiter(map(len, batch.regions), dtype=np.int64, count=n)
    flat = [r for regs in batch.regions for r in regs]
    regions = np.zeros(len(flat), dtype=_REGION)
    if flat:
        pos = np.array([int(p) for p, _ in flat], dtype=np.int64)
        if int(pos.min()) < -1 or int(pos.max()) > 0x7FFFFFFF:
            raise ValueError("a region's last position is out of range")
        regions["p"] = pos
        regions["w"] = [float(w) for _, w in flat]
    r_bytes = regions.tobytes()
    r_end = np.cumsum(nreg) * _REGION.itemsize
    ncls = np.fromiter(map(len, batch.classifier_scores), dtype=np.int64, count=n)
    s_bytes = np.array([float(c) for cls in batch.classifier_scores for c in cls],
                       dtype=">f8").tobytes()
    s_end = np.cumsum(ncls) * 8
    rows = zip(batch.lengths, batch.nterms.tolist(), batch.nmeta.tolist(), nreg.tolist(),
               ncls.tolist(), big_doc.tolist(), terms, metas, t_end.tolist(), p_end.tolist(),
               r_end.tolist(), s_end.tolist(), strict=True)
    out = []
    t0 = p0 = r0 = s0 = 0
    for length, nt, nm, nr, nc, wide, raw_t, raw_m, t1, p1, r1, s1 in rows:
        if wide:
            c_raw = counts[t0:t1].astype(">u4").tobytes()
            p_raw = positions[p0:p1].astype(">u4").tobytes()
        else:
            c_raw = c_small[2 * t0:2 * t1]
            p_raw = p_small[2 * p0:2 * p1]
        out.append(b"".join((
            _HEAD_AND_TERMS.pack(length, nt, nm, nr, nc, wide, len(raw_t)), raw_t,
            _U32.pack(len(raw_m)), raw_m, c_raw, p_raw, r_bytes[r0:r1], s_bytes[s0:s1])))
        t0, p0, r0, s0 = t1, p1, r1, s1
    return out
