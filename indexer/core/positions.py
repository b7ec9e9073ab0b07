"""The positions file of a partition: per (term, document) a gamma code and Rice-coded gaps.

Layer: ``indexer.core``. Written by :mod:`indexer.core.partition_index` when a partition's
derived files are built; read through :class:`indexer.core.postings.PostingsCursor`.

Format (the payload of a framed ``positions`` file): a bit stream. For each term of the
partition in term_id order, for each document containing the term in doc_map order, one *entry*:

    gamma(first position + 1)
    unary(q_1) ... unary(q_{f-1})          q_i = (gap_i - 1) >> k
    r_1 ... r_{f-1}, k bits each           r_i = (gap_i - 1) & (2**k - 1)

where ``f`` is the term's frequency in the document, ``gap_i`` the differences between
consecutive positions (>= 1), and ``k`` the Rice parameter chosen per term list (the one
minimising the list's size; stored in the list's postings header). The quotients of an entry are
written before its remainders so that a whole block of entries decodes with array operations.
Entries are not padded: a posting addresses its entry by bit offset and bit length. Entries of
frequency 0 (meta words) are empty.
"""

from __future__ import annotations

import numpy as np

from .codes import (
    BitPacker,
    CodeError,
    IntArray,
    bit_length,
    choose_rice_k,
    gamma_width,
    gather_fields,
    to_bits,
)


def encode_positions(positions: IntArray, counts: IntArray, entry_list: IntArray,
                     nlists: int) -> tuple[bytes, IntArray, IntArray, int]:
    """Encode every entry of a partition.

    ``positions``: all positions, entry after entry, increasing within an entry.
    ``counts``: the frequency of each entry (0 allowed). ``entry_list``: the term list of each
    entry, non-decreasing. Returns ``(payload, entry_bits, rice_k_per_list, total_bits)``;
    entries are laid out back to back, so entry ``e`` starts at ``cumsum(entry_bits)[e - 1]``.
    """
    positions = np.asarray(positions, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    nentries = counts.size
    if positions.size != int(counts.sum()):
        raise ValueError("positions and counts disagree")
    nonempty = counts > 0
    first_index = np.cumsum(counts) - counts
    is_first = np.zeros(positions.size, dtype=bool)
    is_first[first_index[nonempty]] = True
    gaps_mask = ~is_first
    gap_values = np.empty(0, dtype=np.int64)
    if positions.size:
        diffs = np.diff(positions, prepend=0)
        gap_values = diffs[gaps_mask] - 1
        if gap_values.size and int(gap_values.min()) < 0:
            raise ValueError("positions must increase strictly within an entry")
    if positions.size and int(positions.min()) < 0:
        raise ValueError("positions must be non-negative")
    entry_of_pos = np.repeat(np.arange(nentries, dtype=np.int64), counts)
    gap_entry = entry_of_pos[gaps_mask]
    gap_list = entry_list[gap_entry] if gap_entry.size else gap_entry
    k_list = choose_rice_k(gap_values, gap_list, nlists)
    k_gap = k_list[gap_list] if gap_list.size else gap_list
    # gap j of entry e: unary field then, after all unary fields of e, the remainder field
    gap_rank = np.arange(gap_values.size, dtype=np.int64) - np.repeat(
        np.cumsum(counts - nonempty) - (counts - nonempty), np.maximum(counts - 1, 0))
    firsts = positions[first_index[nonempty]] + 1
    gwidth = gamma_width(firsts)
    quotients = gap_values >> k_gap
    unary_width = quotients + 1
    # bits per entry
    entry_bits = np.zeros(nentries, dtype=np.int64)
    entry_bits[nonempty] = gwidth
    if gap_values.size:
        entry_bits += np.bincount(gap_entry, weights=unary_width + k_gap,
                                  minlength=nentries).astype(np.int64)
    entry_start = np.cumsum(entry_bits) - entry_bits
    total = int(entry_bits.sum())
    # unary fields of an entry follow its gamma code in order
    unary_cum = np.cumsum(unary_width) - unary_width  # global exclusive cumsum
    first_gap_of_entry = np.cumsum(counts - nonempty) - (counts - nonempty)
    base_unary = unary_cum[np.minimum(first_gap_of_entry, max(gap_values.size - 1, 0))] \
        if gap_values.size else np.zeros(nentries, dtype=np.int64)
    gamma_end = entry_start.copy()
    gamma_end[nonempty] += gwidth
    unary_start = gamma_end[gap_entry] + unary_cum - base_unary[gap_entry]
    unary_total = np.zeros(nentries, dtype=np.int64)
    if gap_values.size:
        unary_total = np.bincount(gap_entry, weights=unary_width,
                                  minlength=nentries).astype(np.int64)
    rem_start = gamma_end[gap_entry] + unary_total[gap_entry] + gap_rank * k_gap
    remainders = gap_values & ((np.int64(1) << k_gap) - 1)
    packer = BitPacker(total)
    packer.add(entry_start[nonempty], firsts, gwidth)
    packer.add_ones(unary_start + unary_width)
    packer.add(rem_start, remainders, k_gap)
    return packer.tobytes(), entry_bits, k_list, total


def decode_positions(data: bytes, starts: IntArray, counts: IntArray, lengths: IntArray,
                     k: int) -> tuple[IntArray, IntArray]:
    """Decode entries of one term list (one Rice parameter ``k``).

    ``starts``/``lengths`` are bit offsets and bit lengths of the entries in ``data`` (the
    positions payload), ``counts`` their frequencies. Returns ``(positions, counts)``: all
    positions, entry after entry. Raises :class:`CodeError` if the bits do not decode to exactly
    the stored lengths.
    """
    starts = np.asarray(starts, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    keep = counts > 0
    if not keep.all():
        if np.any(lengths[~keep] != 0):
            raise CodeError("empty entry with a non-zero length")
        starts, lengths = starts[keep], lengths[keep]
    fcounts = counts[keep]
    if fcounts.size == 0:
        return np.zeros(0, dtype=np.int64), counts
    lo = int(starts.min())
    hi = int((starts + lengths).max())
    if lo < 0 or hi > len(data) * 8:
        raise CodeError("entry outside the positions stream")
    b0 = starts >> 3
    nbytes = ((starts + lengths + 7) >> 3) - b0
    wanted = int(nbytes.sum())
    if 2 * wanted < ((hi + 7) >> 3) - (lo >> 3):
        # sparse entries (a few documents of a long list): expand only their own bytes
        before = np.cumsum(nbytes) - nbytes
        at = np.repeat(b0 - before, nbytes) + np.arange(wanted)
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8)[at])
        s = before * 8 + (starts & 7)
    else:
        byte0 = lo >> 3
        bits = to_bits(data, byte0, (hi + 7) >> 3)
        s = starts - byte0 * 8
    ones = np.flatnonzero(bits)
    gi = np.searchsorted(ones, s)
    if int(gi.max()) >= ones.size:
        raise CodeError("gamma code runs off the stream")
    g = ones[gi]
    nz = g - s
    first = gather_fields(bits, g, nz + 1) - 1
    u = g + nz + 1
    m = fcounts - 1
    total_gaps = int(m.sum())
    if total_gaps:
        idx0 = np.searchsorted(ones, u)
        m_start = np.cumsum(m) - m
        rep = np.repeat(idx0, m) + (np.arange(total_gaps) - np.repeat(m_start, m))
        if int(rep.max()) >= ones.size:
            raise CodeError("unary code runs off the stream")
        t = ones[rep]
        prev = np.empty_like(t)
        prev[1:] = t[:-1]
        has = m > 0
        prev[m_start[has]] = u[has] - 1
        q = t - prev - 1
        last_t = np.where(has, t[np.minimum(m_start + m - 1, total_gaps - 1)], u - 1)
        rs = last_t + 1
        gap_entry = np.repeat(np.arange(fcounts.size), m)
        rank = np.arange(total_gaps) - np.repeat(m_start, m)
        r = gather_fields(bits, rs[gap_entry] + rank * k, np.full(total_gaps, k, dtype=np.int64))
        gaps = (q << k) + r + 1
        end = rs + m * k
    else:
        gaps = np.zeros(0, dtype=np.int64)
        end = u
    if np.any(end != s + lengths):
        raise CodeError("entry length does not match its codes")
    total = int(fcounts.sum())
    vals = np.empty(total, dtype=np.int64)
    entry_first = np.cumsum(fcounts) - fcounts
    is_first = np.zeros(total, dtype=bool)
    is_first[entry_first] = True
    vals[entry_first] = first
    vals[~is_first] = gaps
    out = np.cumsum(vals)
    out -= np.repeat(out[entry_first] - first, fcounts)
    return out, counts


def max_position_bits(values: IntArray) -> int:
    return int(bit_length(values).max()) if values.size else 0
