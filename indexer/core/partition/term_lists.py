"""A partition's term lists: its entries sorted by term, then encoded a range of terms at a time.

Layer: ``indexer.core``. Called by :func:`indexer.core.partition.build.build_partition`; writes
the formats of :mod:`indexer.core.partition.positions` and :mod:`indexer.core.partition.postings` (the bytes are
the same as encoding every list at once) and gives the per-list columns of last_entries.

Memory is the reason for this module (the writer's peak is the close of a partition). A
partition of 50,000 ordinary pages holds some 22 million word positions and 12 million entries
(one per document and term); encoding them all at once took a dozen 64-bit temporaries per
position (gaps, widths, bit offsets, gather indexes), about 118 bytes per position, 2.5 GB
for one partition. Here:

* the entries are sorted by term first, before any other per-entry column exists: a stable
  sort of their 32-bit term ranks by 16-bit radix passes, giving a 32-bit permutation;
* then each entry costs its doc_map index (16 bits up to 65,536 groups), its first position's
  index and its place in the permutation (32 bits each), and what pass 1 keeps for pass 2
  (below): about 16 bytes per entry;
* the term lists are cut into *chunks* of whole lists of about :data:`CHUNK_POSITIONS`
  positions and entries; the 64-bit working arrays of one chunk (its positions gathered,
  gaps, bit offsets) live while that chunk is encoded and are freed before the next;
* pass 1 encodes the positions of chunk after chunk into one bit stream (a chunk starts where
  the previous one ended, inside a byte) and keeps per entry only its doc_map index,
  frequency and bit length (16 bits each when they fit); pass 2 encodes the postings, which
  need the width of the positions stream's offsets (known only when all positions are
  encoded), chunk after chunk.

A partition of 50,000 synthetic pages (bench/scale_bench.py) peaks at about 17 bytes per
position above the documents the writer holds. Every step is a numpy operation over a chunk
(a term list longer than a chunk, the most frequent word's, is a chunk of its own); Python
loops run per chunk only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..files.codes import bit_length
from .block_maxima import BlockMaxima
from .positions import encode_positions
from .postings import encode_list_range

CHUNK_POSITIONS = 1 << 19  # positions (plus entries) encoded at once
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]


def index_dtype(size: int) -> type[np.signedinteger]:
    """The narrowest of int32/int64 that indexes ``size`` items."""
    return np.int32 if size < 2 ** 31 else np.int64


@dataclass(frozen=True, slots=True)
class Entries:
    """A partition's entries (one per contributing document and term or meta word) in group
    order, as a recipe over the documents' own columns (built only when needed, so that the
    sort by term runs before the per-entry columns exist).

    Per document entry (append order): vocabulary number ``doc_terms``, frequency
    ``doc_counts``; ``positions`` all positions, entry after entry. ``take``: the document
    entry of each entry (None when every document contributes, in append order). Per
    contributor (group order): its entries ``contrib_entries``, its doc_map index
    ``contrib_group`` and the shift of its positions past its group's earlier contributors
    ``contrib_shift``."""

    doc_terms: I32
    doc_counts: I32
    positions: I32
    take: npt.NDArray[np.signedinteger] | None
    contrib_entries: I64
    contrib_group: I64
    contrib_shift: I64

    def terms(self) -> I32:
        return self.doc_terms if self.take is None else self.doc_terms[self.take]

    def counts(self) -> I32:
        return self.doc_counts if self.take is None else self.doc_counts[self.take]

    def columns(self) -> EntryColumns:
        """The per-entry columns of pass 1 (see :class:`EntryColumns`)."""
        itype = index_dtype(self.positions.size)
        pos_start = np.cumsum(self.doc_counts, dtype=itype)
        pos_start -= self.doc_counts
        if self.take is not None:
            pos_start = pos_start[self.take]
        ce = self.contrib_entries
        shift = np.repeat(narrow(self.contrib_shift), ce) if self.contrib_shift.any() else None
        return EntryColumns(self.counts(), np.repeat(narrow(self.contrib_group), ce),
                            pos_start, shift, self.positions)


@dataclass(frozen=True, slots=True)
class EntryColumns:
    """Per entry (group order): frequency ``counts``, doc_map index ``group`` (16 bits when
    the partition has at most 65,536 groups), index of its first position in ``positions``
    (``pos_start``; the entry's positions follow it) and, when some contributor is not its
    group's first, the shift to add to its positions (``shift``, else None)."""

    counts: I32
    group: npt.NDArray[np.integer]
    pos_start: npt.NDArray[np.signedinteger]
    shift: npt.NDArray[np.integer] | None
    positions: I32


@dataclass(frozen=True, slots=True)
class EncodedLists:
    """The positions and postings payloads of a partition, its lists' term ranks (vocabulary
    numbers, in term_id order) and per list the columns of last_entries after the term_id:
    documents, occurrences, postings byte offset and length, last entry's doc_map index and
    positions bit offset (``table``, ``nlists`` x 6), and the postings' block maxima
    (:mod:`indexer.core.partition.block_maxima`)."""

    positions: bytes
    postings: bytes
    order: list[int]
    table: I64
    postings_count: int
    positions_count: int
    block_maxima: bytes  # the payload of the block_maxima file (block_maxima.py)


class BitChunks:
    """A bit stream built from chunks that each start where the previous one ended: a chunk
    is encoded with ``lead`` (0-7) unused leading bits and its bits ORed onto the partial
    byte the stream ends with."""

    __slots__ = ("parts", "carry", "lead", "bits")

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.carry = 0  # the partial last byte (its first ``lead`` bits are the stream's)
        self.lead = 0
        self.bits = 0

    def add(self, payload: bytes, nbits: int) -> None:
        """Append ``payload``: ``nbits`` bits after ``self.lead`` unused leading bits."""
        self.bits += nbits
        end = self.lead + nbits
        if not nbits:
            return
        buf = bytearray(payload)
        buf[0] |= self.carry
        full = end >> 3
        self.parts.append(bytes(buf[:full]))
        self.lead = end & 7
        self.carry = buf[full] if self.lead else 0

    def tobytes(self) -> bytes:
        """The stream, its last byte padded with zero bits."""
        tail = [bytes([self.carry])] if self.lead else []
        return b"".join(self.parts + tail)


def stable_rank_order(rank: I32, nranks: int) -> npt.NDArray[np.signedinteger]:
    """The stable order of ``rank`` (values in ``[0, nranks)``, below 2**32) as the narrowest
    index type: one stable sort by the high 16 bits, then one per run of equal high bits by
    the low 16 (numpy sorts 16-bit keys stably by radix, in linear time)."""
    itype = index_dtype(rank.size)
    if nranks <= 1 << 16:
        return np.argsort(rank.astype(np.uint16), kind="stable").astype(itype)
    high = (rank >> 16).astype(np.uint16)
    order = np.argsort(high, kind="stable").astype(itype)
    ends = np.cumsum(np.bincount(high)).tolist()
    del high
    start = 0
    for end in ends:
        run = order[start:end]
        low = (rank[run] & 0xFFFF).astype(np.uint16)
        order[start:end] = run[np.argsort(low, kind="stable")]
        start = end
    return order


def list_chunks(entries_per_list: I64, positions_per_list: I64, limit: int) -> I64:
    """Boundaries (list numbers, first 0, last ``nlists``) of runs of whole lists holding
    about ``limit`` positions plus entries each (a list larger than ``limit`` is a run)."""
    nlists = entries_per_list.size
    if not nlists:
        return np.zeros(1, dtype=np.int64)
    cost = np.cumsum(entries_per_list + positions_per_list)
    marks = np.arange(limit, int(cost[-1]), limit, dtype=np.int64)
    cuts = np.searchsorted(cost, marks, side="left") + 1
    return np.unique(np.concatenate(([0], cuts[cuts < nlists], [nlists])))


def encode_lists(all_ids: list[bytes], entries: Entries, nterms: int, block_size: int,
                 chunk_positions: int = CHUNK_POSITIONS) -> EncodedLists:
    """Sort ``entries`` into term lists (lists in term_id order, ``all_ids`` the term_id of
    each of the ``nterms`` vocabulary numbers; each list in doc_map order; entries of one
    group for one term joined) and encode them (see the module docstring). Raises
    ``ValueError`` when a document repeats a position for one term."""
    terms = entries.terms()
    seen = np.bincount(terms, minlength=nterms)
    order = sorted(np.flatnonzero(seen).tolist(), key=all_ids.__getitem__)
    nlists = len(order)
    rank_of = np.zeros(nterms + 1, dtype=np.int32)
    rank_of[np.array(order, dtype=np.int64)] = np.arange(nlists, dtype=np.int32)
    rank = rank_of[terms]
    del rank_of, seen, terms
    perm = stable_rank_order(rank, nlists)
    per_list = np.bincount(rank, minlength=nlists).astype(np.int64)
    pos_per_list = np.zeros(nlists, dtype=np.int64)
    counts = entries.counts()
    step = 1 << 22
    for a in range(0, rank.size, step):  # bounded temporaries: counts as float64 weights
        pos_per_list += np.bincount(rank[a:a + step], weights=counts[a:a + step],
                                    minlength=nlists).astype(np.int64)
    del rank, counts
    bounds = list_chunks(per_list, pos_per_list, chunk_positions)
    kept = _encode_all_positions(entries.columns(), perm, bounds, per_list)
    del perm
    postings, table, maxima = _encode_all_postings(kept, bounds, block_size)
    return EncodedLists(kept.stream.tobytes(), postings, order, table, kept.merged,
                        int(pos_per_list.sum()), maxima.encode())


def narrow(values: I64) -> npt.NDArray[np.unsignedinteger] | npt.NDArray[np.signedinteger]:
    """``values`` (non-negative) as uint16 when they fit, else int32 or int64."""
    top = int(values.max()) if values.size else 0
    return values.astype(np.uint16 if top < 1 << 16 else np.int32 if top < 1 << 31 else np.int64)


@dataclass(slots=True)
class _Kept:
    """What pass 1 keeps for pass 2: per chunk the doc_map index, frequency and positions bit
    length of its joined entries (in list order; each column in the narrowest type that
    holds it) and its first positions bit; per list its entries and Rice parameter; the
    positions stream."""

    columns: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    bit_at: list[int]
    n_t: I64
    rice_k: I64
    stream: BitChunks
    merged: int = 0


def _encode_all_positions(entries: EntryColumns, perm: npt.NDArray[np.signedinteger],
                          bounds: I64, per_list: I64) -> _Kept:
    """Pass 1: the positions stream, chunk after chunk of lists (``per_list``: entries per
    list before entries of one group are joined)."""
    nlists = int(bounds[-1])
    kept = _Kept([], [], np.zeros(nlists, np.int64), np.zeros(nlists, np.int64), BitChunks())
    entry_end = np.cumsum(per_list)
    for r0, r1 in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        e0 = int(entry_end[r0 - 1]) if r0 else 0
        idx = perm[e0:int(entry_end[r1 - 1])]
        lst, doc, freq, pos = _gather_chunk(entries, idx, per_list[r0:r1])
        del idx
        stream = kept.stream
        payload, bits, k, nbits = encode_positions(pos, freq, lst, r1 - r0, stream.lead)
        del pos
        kept.bit_at.append(stream.bits)
        stream.add(payload, nbits)
        kept.columns.append((narrow(doc), narrow(freq), narrow(bits)))
        kept.n_t[r0:r1] = np.bincount(lst, minlength=r1 - r0)
        kept.rice_k[r0:r1] = k
        kept.merged += freq.size
    return kept


def _gather_chunk(entries: EntryColumns, idx: npt.NDArray[np.signedinteger], per_list: I64
                  ) -> tuple[I64, I64, I64, I64]:
    """The entries ``idx`` (one chunk of lists with ``per_list`` entries each, in list then
    group order) joined per (list, group): their list (from 0), doc_map index, frequency,
    and all their positions (shifted past earlier contributors), entry after entry."""
    s_list = np.repeat(np.arange(per_list.size, dtype=np.int32), per_list)
    s_group = entries.group[idx]
    change = np.empty(idx.size, dtype=bool)
    change[:1] = True
    change[1:] = (s_list[1:] != s_list[:-1]) | (s_group[1:] != s_group[:-1])
    boundary = np.flatnonzero(change)
    del change
    counts = entries.counts[idx].astype(np.int64)
    freq = (np.add.reduceat(counts, boundary) if boundary.size
            else np.zeros(0, dtype=np.int64))
    total = int(freq.sum())
    step = entries.pos_start[idx].astype(np.int64)
    step -= np.cumsum(counts) - counts
    gather = np.repeat(step, counts)
    del step
    gather += np.arange(total, dtype=np.int64)
    pos = entries.positions[gather].astype(np.int64)
    del gather
    if entries.shift is not None:
        pos += np.repeat(entries.shift[idx], counts)
    return (s_list[boundary].astype(np.int64), s_group[boundary].astype(np.int64), freq,
            pos)


def _encode_all_postings(kept: _Kept, bounds: I64, block_size: int
                         ) -> tuple[bytes, I64, BlockMaxima]:
    """Pass 2: the postings payload (its width byte, then the lists of chunk after chunk),
    the last_entries columns of every list and the payload's block maxima."""
    nlists = int(bounds[-1])
    wpos = max(1, int(bit_length(np.array([kept.stream.bits]))[0]))
    parts = [bytes([wpos])]
    offset = 1
    table = np.zeros((nlists, 6), dtype=np.int64)
    maxima: list[BlockMaxima] = []
    chunks = zip(bounds[:-1].tolist(), bounds[1:].tolist(), kept.columns, kept.bit_at,
                 strict=True)
    for r0, r1, columns, bit0 in chunks:
        n_t = kept.n_t[r0:r1]
        lst = np.repeat(np.arange(r1 - r0, dtype=np.int64), n_t)
        doc, freq, bits = (c.astype(np.int64) for c in columns)
        runs: list[BlockMaxima] = []
        payload, list_offset, list_length = encode_list_range(
            lst, doc, freq, bits, kept.rice_k[r0:r1], r1 - r0, wpos, bit0, block_size, runs)
        maxima.append(runs[0].shifted(offset))
        parts.append(payload)
        first = np.cumsum(n_t) - n_t
        last = first + n_t - 1
        start = np.cumsum(bits) - bits
        table[r0:r1] = np.column_stack([n_t, np.add.reduceat(freq, first), list_offset + offset,
                                        list_length, doc[last], start[last] + bit0])
        offset += len(payload)
    return b"".join(parts), table, BlockMaxima.concat(maxima, block_size)
