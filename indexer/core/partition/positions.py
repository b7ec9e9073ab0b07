"""The positions file of a partition: per (term, document) a gamma code and Rice-coded gaps.

Layer: ``indexer.core``. Written by :mod:`indexer.core.partition.build` when a partition's
derived files are built; read through :class:`indexer.core.partition.postings.PostingsCursor`.

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
import numpy.typing as npt

from ..files.codes import (
    MAX_RICE_K,
    WINDOW_FIELD_BITS,
    BitPacker,
    CodeError,
    IntArray,
    choose_rice_k,
    gamma_width,
    gather_fields,
    padded_bytes,
    window_fields,
)


def encode_positions(positions: IntArray, counts: IntArray, entry_list: IntArray,
                     nlists: int, lead: int = 0) -> tuple[bytes, IntArray, IntArray, int]:
    """Encode every entry of a partition (or of a run of whole term lists).

    ``positions``: all positions, entry after entry, increasing within an entry.
    ``counts``: the frequency of each entry (0 allowed). ``entry_list``: the term list of each
    entry, non-decreasing. Returns ``(payload, entry_bits, rice_k_per_list, total_bits)``;
    entries are laid out back to back, so entry ``e`` starts at ``cumsum(entry_bits)[e - 1]``
    after ``lead`` unused bits (0 to 7: a run of lists appended to a stream that ends inside a
    byte, :class:`indexer.core.partition.term_lists.BitChunks`). Raises ``ValueError`` when positions
    are negative or do not increase strictly within an entry.
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
    # per entry: its gaps are ``first_gap .. first_gap + ngaps - 1`` (entries in order)
    ngaps = np.maximum(counts - 1, 0)
    first_gap = np.cumsum(ngaps) - ngaps
    gap_count = gap_values.size
    k_list = choose_rice_k(gap_values, np.repeat(entry_list, ngaps), nlists)
    k_entry = k_list[entry_list] if nentries else np.zeros(0, dtype=np.int64)
    k_gap = np.repeat(k_entry, ngaps)
    firsts = positions[first_index[nonempty]] + 1
    gwidth = gamma_width(firsts)
    unary_width = (gap_values >> k_gap) + 1
    unary_cum = np.zeros(gap_count + 1, dtype=np.int64)  # unary bits before each gap
    np.cumsum(unary_width, out=unary_cum[1:])
    unary_total = unary_cum[first_gap + ngaps] - unary_cum[first_gap]
    # bits per entry: gamma code, unary fields, remainders
    entry_bits = unary_total + k_entry * ngaps
    entry_bits[nonempty] += gwidth
    entry_start = np.cumsum(entry_bits) - entry_bits + lead
    total = int(entry_bits.sum())
    gamma_end = entry_start.copy()
    gamma_end[nonempty] += gwidth
    # gap j of entry e: its unary field ends (with the terminating 1) after the gamma code and
    # the unary fields of gaps 0..j; all remainders follow the unary fields, k bits each
    unary_end = np.repeat(gamma_end - unary_cum[first_gap], ngaps) + unary_cum[1:]
    gap_index = np.arange(gap_count, dtype=np.int64)
    rem_start = np.repeat(gamma_end + unary_total - first_gap * k_entry, ngaps) + gap_index * k_gap
    remainders = gap_values & ((np.int64(1) << k_gap) - 1)
    packer = BitPacker(total + lead)  # gamma codes, unary terminators, remainders (no copies joined)
    packer.add(entry_start[nonempty], firsts, gwidth)
    packer.add_ones(unary_end)
    packer.add(rem_start, remainders, k_gap)
    return packer.tobytes(), entry_bits, k_list, total


def decode_positions(data: bytes, starts: IntArray, counts: IntArray, lengths: IntArray,
                     k: int) -> tuple[IntArray, IntArray]:
    """Decode entries of one term list (one Rice parameter ``k``).

    ``starts``/``lengths`` are bit offsets and bit lengths of the entries in ``data`` (the
    positions payload), ``counts`` their frequencies. Returns ``(positions, counts)``: all
    positions, entry after entry. Raises :class:`CodeError` if the bits do not decode to exactly
    the stored lengths.

    Method: the one-bits of the entries' bytes locate every gamma code's binary part and every
    unary terminator; fields (gamma values, remainders) are cut from 8-byte windows
    (:func:`~indexer.core.files.codes.window_fields`). With ``t`` the terminator of gap ``j`` (from 0)
    of an entry whose unary fields start at bit ``u``, the quotients up to ``j`` add up to
    ``t - u - j``, so position ``j + 1`` of the entry is
    ``first + ((t - u - j) << k) + (remainders up to j) + j + 1``: no per-gap loop and no
    per-gap differences.
    """
    starts = np.asarray(starts, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if counts.size == 0:
        return np.zeros(0, dtype=np.int64), counts
    if int(counts.min()) <= 0:
        keep = counts > 0
        if np.any(lengths[~keep] != 0):
            raise CodeError("empty entry with a non-zero length")
        starts, lengths, fcounts = starts[keep], lengths[keep], counts[keep]
        if fcounts.size == 0:
            return np.zeros(0, dtype=np.int64), counts
    else:
        fcounts = counts
    if k < 0 or k > MAX_RICE_K:
        raise CodeError(f"Rice parameter {k} out of range")
    buf, wanted, s = _entry_bytes(data, starts, lengths)
    ones = np.flatnonzero(np.unpackbits(buf[:wanted]))
    first, u = _first_positions(buf, ones, s)
    n = fcounts.size
    m = fcounts - 1  # gaps per entry
    total_gaps = int(m.sum())
    entry_first = np.cumsum(fcounts) - fcounts
    out = np.empty(total_gaps + n, dtype=np.int64)
    out[entry_first] = first
    if not total_gaps:
        if np.any(u != s + lengths):
            raise CodeError("entry length does not match its codes")
        return out, counts
    gap_slot = np.ones(total_gaps + n, dtype=bool)
    gap_slot[entry_first] = False
    out[gap_slot] = _gap_positions(buf, ones, s + lengths, first, u, m, entry_first, k)
    return out, counts


def _entry_bytes(data: bytes, starts: IntArray, lengths: IntArray
                 ) -> tuple[npt.NDArray[np.uint8], int, IntArray]:
    """The bytes holding the entries (``starts``/``lengths`` in bits, every length >= 1),
    8 zero bytes of padding after them, how many of them are the entries' own, and each
    entry's first bit in them. Sparse entries (a few documents of a long list) get only their
    own bytes copied; otherwise the span from the first to the last is."""
    n = starts.size
    ends = starts + lengths
    lo = int(starts.min())
    hi = int(ends.max())
    if lo < 0 or hi > len(data) * 8 or int(lengths.min()) < 1:
        raise CodeError("entry outside the positions stream")
    span = ((hi + 7) >> 3) - (lo >> 3)
    if 2 * (int(lengths.sum()) // 8 + 2 * n) < span:
        b0 = starts >> 3
        nbytes = ((ends + 7) >> 3) - b0
        wanted = int(nbytes.sum())
        before = np.cumsum(nbytes) - nbytes
        at = np.repeat(b0 - before, nbytes) + np.arange(wanted)
        buf = np.zeros(wanted + 8, dtype=np.uint8)
        buf[:wanted] = np.frombuffer(data, dtype=np.uint8)[at]
        return buf, wanted, before * 8 + (starts & 7)
    byte0 = lo >> 3
    return padded_bytes(data, byte0, byte0 + span), span, starts - byte0 * 8


def _first_positions(buf: npt.NDArray[np.uint8], ones: IntArray, s: IntArray
                     ) -> tuple[IntArray, IntArray]:
    """Each entry's first position (its gamma code at bit ``s``: the first one-bit from
    ``s`` ends the zeros and starts the binary part) and the first bit of its unary fields."""
    gi = np.searchsorted(ones, s)
    if int(gi.max()) >= ones.size:
        raise CodeError("gamma code runs off the stream")
    g = ones[gi]
    nz = g - s
    if int(nz.max()) * 2 + 1 > WINDOW_FIELD_BITS:
        bits = np.unpackbits(buf)
        first = gather_fields(bits, g, nz + 1) - 1
    else:
        first = window_fields(buf, s, 2 * nz + 1) - 1
    return first, g + nz + 1


def _gap_positions(buf: npt.NDArray[np.uint8], ones: IntArray, entry_end: IntArray,
                   first: IntArray, u: IntArray, m: IntArray, entry_first: IntArray,
                   k: int) -> IntArray:
    """Every position after the first, entry after entry (see :func:`decode_positions`):
    ``m`` gaps per entry, unary fields from bit ``u``, remainders after the last
    terminator; checks that each entry ends at ``entry_end``."""
    n = m.size
    total_gaps = int(m.sum())
    idx0 = np.searchsorted(ones, u)
    last = idx0 + m - 1  # index in ``ones`` of each entry's last terminator
    if int(last.max()) >= ones.size:
        raise CodeError("unary code runs off the stream")
    has = m > 0
    rs = np.where(has, ones[np.maximum(last, 0)] + 1, u)  # first bit of the remainders
    if np.any(rs + m * k != entry_end):
        raise CodeError("entry length does not match its codes")
    m_start = entry_first - np.arange(n)  # index of each entry's first gap
    rank = np.arange(total_gaps, dtype=np.int64)
    t = ones[np.repeat(idx0 - m_start, m) + rank]
    value = t << k
    value += rank * (1 - (1 << k))
    if k:
        r = np.cumsum(window_fields(buf, np.repeat(rs - m_start * k, m) + rank * k, k))
        value += r
        before_r = np.concatenate(([0], r))[m_start]
    else:
        before_r = 0
    value += np.repeat(first - (u << k) - before_r + 1 - m_start * (1 - (1 << k)), m)
    return value
