"""The postings file of a partition: per term, delta-coded postings in blocks.

Layer: ``indexer.core``. Written by :mod:`indexer.core.partition.build`; read by
:class:`indexer.core.bundle.reader.PostingsCursor` through :class:`PostingListReader`.

A posting is the seed's tuple (index of the document in doc_map, frequency of the term in the
document, offset of its entry in the positions file, length of that entry). Postings of one term
are in doc_map order and are cut into blocks of ``BLOCK_SIZE``.

Format (payload of a framed ``postings`` file; bit fields most significant bit first)::

    byte 0        W: width in bits of absolute positions offsets
    lists         one per term, each starting on a byte boundary; the dictionary (closed
                  partitions) or last_entries (active ones) holds its byte offset and length

    list   := gamma(n) gamma(k + 1) pos_start:W block*          n postings, Rice parameter k,
                                                                 bit offset of the first entry
    block  := gamma(first_doc - prev_last)    prev_last = last doc of the previous block, or -1
              gamma(last_doc - first_doc + 1)
              gamma(position bits of the block + 1)
              gamma(wd + 1) gamma(wf + 1) gamma(wo + 1) gamma(wl + 1)
              doc delta - 1   : (m - 1) fields of wd bits   (index i minus index i-1, minus 1)
              frequency       : m fields of wf bits
              offset delta    : m fields of wo bits   (entry start minus previous entry's end)
              length          : m fields of wl bits   (entry length in bits)

A block's size follows from its header alone, so ``skip_to`` walks block headers without
decoding columns; a block's columns decode with a few numpy operations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..files.codes import (
    WINDOW_FIELD_BITS,
    BitPacker,
    BitReader,
    CodeError,
    IntArray,
    bit_length,
    gamma_width,
    padded_bytes,
    to_bits,
    unpack_fixed,
    window_fields,
)
from .block_maxima import BlockMaxima, ListBlocks

BLOCK_SIZE = 128
_HEADER_WINDOW = 24  # bytes read at once for a block header's gamma codes


def _segment_max(values: IntArray, first: IntArray) -> IntArray:
    if values.size == 0:
        return np.zeros(first.size, dtype=np.int64)
    return np.maximum.reduceat(values, first)


def encode_postings(entry_list: IntArray, doc_index: IntArray, freq: IntArray,
                    entry_bits: IntArray, rice_k: IntArray, nlists: int,
                    block_size: int = BLOCK_SIZE, maxima_out: list[BlockMaxima] | None = None
                    ) -> tuple[bytes, IntArray, IntArray]:
    """Encode all term lists of a partition at once.

    Entries are sorted by list then doc index (strictly increasing within a list); every list
    has at least one entry; positions entries are laid out back to back in the same order.
    Returns ``(payload, list_offset, list_length)`` with byte offsets into the payload; with
    ``maxima_out``, the payload's block maxima are appended to it.
    """
    entry_bits = np.asarray(entry_bits, dtype=np.int64)
    wpos = max(1, int(bit_length(np.array([int(entry_bits.sum())]))[0]))
    runs: list[BlockMaxima] = []
    lists, list_offset, list_bytes = encode_list_range(entry_list, doc_index, freq, entry_bits,
                                                       rice_k, nlists, wpos, 0, block_size,
                                                       runs)
    if maxima_out is not None:
        maxima_out.append(runs[0].shifted(1))
    return bytes([wpos]) + lists, list_offset + 1, list_bytes


def encode_list_range(entry_list: IntArray, doc_index: IntArray, freq: IntArray,
                      entry_bits: IntArray, rice_k: IntArray, nlists: int, wpos: int,
                      pos_base: int, block_size: int = BLOCK_SIZE,
                      maxima_out: list[BlockMaxima] | None = None
                      ) -> tuple[bytes, IntArray, IntArray]:
    """The lists of a run of term lists as the payload holds them after its width byte (the
    whole payload is ``bytes([wpos])`` then the runs' bytes back to back): ``entry_list``
    numbers the run's lists from 0; their positions entries start at bit ``pos_base`` of the
    positions payload, whose offsets are ``wpos`` bits wide. Returns ``(bytes, list_offset,
    list_length)``, offsets from the run's first byte."""
    entry_list = np.asarray(entry_list, dtype=np.int64)
    doc_index = np.asarray(doc_index, dtype=np.int64)
    freq = np.asarray(freq, dtype=np.int64)
    entry_bits = np.asarray(entry_bits, dtype=np.int64)
    blocks = _Blocks.cut(entry_list, nlists, block_size)
    entry_start_bits = np.cumsum(entry_bits) - entry_bits
    pos_start = (entry_start_bits[blocks.list_first] + pos_base if entry_list.size
                 else np.zeros(0, dtype=np.int64))
    hvals, d, (wd, wf, wo, wl) = _block_headers(blocks, doc_index, freq, entry_bits)
    hwidths = [gamma_width(v) for v in hvals]
    n_b, n_t, b_term = blocks.count, blocks.n_t, blocks.term
    hdr_b = np.sum(hwidths, axis=0) if n_b.size else np.zeros(0, dtype=np.int64)
    size_b = hdr_b + (n_b - 1) * wd + n_b * (wf + wo + wl)
    # lists: a header, then their blocks; each list starts on a byte boundary
    k1 = np.asarray(rice_k, dtype=np.int64) + 1
    lh_t = gamma_width(n_t) + gamma_width(k1) + wpos
    list_bits = lh_t + (np.bincount(b_term, weights=size_b, minlength=nlists).astype(np.int64)
                        if n_b.size else 0)
    list_bytes = (list_bits + 7) // 8
    list_offset = np.cumsum(list_bytes) - list_bytes
    lstart = list_offset * 8
    size_cum = np.cumsum(size_b) - size_b
    block_start = (lstart[b_term] + lh_t[b_term] + size_cum
                   - size_cum[blocks.block_first_t[b_term]])
    packer = BitPacker(8 * int(list_bytes.sum()))
    packer.add(lstart, n_t, gamma_width(n_t))
    packer.add(lstart + gamma_width(n_t), k1, gamma_width(k1))
    packer.add(lstart + gamma_width(n_t) + gamma_width(k1), pos_start, np.full(nlists, wpos))
    offset = block_start.copy()
    for v, w in zip(hvals, hwidths, strict=True):
        packer.add(offset, v, w)
        offset = offset + w
    _pack_block_columns(packer, blocks, offset, d, freq, entry_bits, (wd, wf, wo, wl))
    if maxima_out is not None:
        b_first = blocks.first
        maxima_out.append(BlockMaxima(
            list_offset, n_t, np.concatenate((blocks.block_first_t, [n_b.size])),
            doc_index[b_first], doc_index[b_first + n_b - 1], _segment_max(freq, b_first),
            block_start, entry_start_bits[b_first] + pos_base if b_first.size else b_first,
            block_size).long_lists())
    return packer.tobytes(), list_offset, list_bytes


@dataclass(frozen=True, slots=True)
class _Blocks:
    """Term lists cut into blocks of ``block_size`` postings: ``n_t`` postings per list and
    ``list_first`` its first entry, ``block_first_t`` its first block; per block its first
    entry (``first``), its number of entries (``count``), its list (``term``) and whether it
    starts its list (``starts_list``); per entry its block (``blk``) and its index in it
    (``in_block``)."""

    n_t: IntArray
    list_first: IntArray
    block_first_t: IntArray
    first: IntArray
    count: IntArray
    term: IntArray
    starts_list: npt.NDArray[np.bool_]
    blk: IntArray
    in_block: IntArray

    @staticmethod
    def cut(entry_list: IntArray, nlists: int, block_size: int) -> _Blocks:
        nentries = entry_list.size
        n_t = np.bincount(entry_list, minlength=nlists).astype(np.int64)
        if nlists and int(n_t.min()) < 1:
            raise ValueError("every list needs at least one posting")
        list_first = np.cumsum(n_t) - n_t
        rank = np.arange(nentries, dtype=np.int64) - np.repeat(list_first, n_t)
        nb_t = (n_t + block_size - 1) // block_size
        block_first_t = np.cumsum(nb_t) - nb_t
        blk = block_first_t[entry_list] + rank // block_size
        n_b = np.bincount(blk, minlength=int(nb_t.sum())).astype(np.int64)
        b_first = np.cumsum(n_b) - n_b
        in_block = np.arange(nentries, dtype=np.int64) - np.repeat(b_first, n_b)
        return _Blocks(n_t, list_first, block_first_t, b_first, n_b, entry_list[b_first],
                       rank[b_first] == 0, blk, in_block)


def _block_headers(blocks: _Blocks, doc_index: IntArray, freq: IntArray,
                   entry_bits: IntArray) -> tuple[list[IntArray], IntArray,
                                                  tuple[IntArray, IntArray, IntArray,
                                                        IntArray]]:
    """The seven gamma-coded header values of every block (see the module docstring), the
    doc deltas minus 1 of every entry (0 for a block's first) and the blocks' column widths
    ``(wd, wf, wo, wl)``. Raises ``ValueError`` when doc indexes do not increase."""
    nentries = doc_index.size
    b_first, n_b = blocks.first, blocks.count
    b_last = b_first + n_b - 1
    first_doc = doc_index[b_first]
    last_doc = doc_index[b_last]
    prev_last = np.where(blocks.starts_list, -1, doc_index[np.maximum(b_first - 1, 0)])
    delta = first_doc - prev_last
    span = last_doc - first_doc
    if nentries and (int(delta.min()) < 1 or int(span.min()) < 0):
        raise ValueError("doc indexes must increase within a list")
    pos_bits = np.add.reduceat(entry_bits, b_first) if nentries else np.zeros(0, np.int64)
    prev_doc = np.empty_like(doc_index)
    if nentries:
        prev_doc[1:] = doc_index[:-1]
        prev_doc[0] = -1
    d = np.where(blocks.in_block > 0, doc_index - prev_doc - 1, 0)
    if nentries and int(d.min()) < 0:
        raise ValueError("doc indexes must increase within a list")
    o = np.zeros(nentries, dtype=np.int64)  # entries are contiguous: offset deltas are 0
    wd = bit_length(_segment_max(d, b_first))
    wf = bit_length(_segment_max(freq, b_first))
    wo = bit_length(_segment_max(o, b_first))
    wl = bit_length(_segment_max(entry_bits, b_first))
    return [delta, span + 1, pos_bits + 1, wd + 1, wf + 1, wo + 1, wl + 1], d, (wd, wf, wo, wl)


def _pack_block_columns(packer: BitPacker, blocks: _Blocks, col_d: IntArray, d: IntArray,
                        freq: IntArray, entry_bits: IntArray,
                        widths: tuple[IntArray, IntArray, IntArray, IntArray]) -> None:
    """Every block's columns after its header (which ends at ``col_d``): doc deltas minus 1
    (none for its first entry), frequencies, offset deltas (all 0: no bits) and lengths."""
    wd, wf, wo, wl = widths
    n_b, eb, in_block = blocks.count, blocks.blk, blocks.in_block
    col_f = col_d + (n_b - 1) * wd
    col_o = col_f + n_b * wf
    col_l = col_o + n_b * wo
    nonfirst = in_block > 0
    packer.add((col_d[eb] + (in_block - 1) * wd[eb])[nonfirst], d[nonfirst], wd[eb][nonfirst])
    packer.add(col_f[eb] + in_block * wf[eb], freq, wf[eb])
    packer.add(col_l[eb] + in_block * wl[eb], entry_bits, wl[eb])


@dataclass(frozen=True, slots=True)
class PostingBlock:
    """Decoded postings of one block of one partition's list (arrays of equal length)."""

    partition: int
    doc_index: IntArray
    frequency: IntArray
    pos_offset: IntArray  # bit offset of each entry in the positions payload
    pos_length: IntArray  # bit length of each entry
    rice_k: int


class PostingListReader:
    """Walks the blocks of one term list in one partition's postings payload.

    Call order: construct, then ``next_block()`` / ``skip_to(doc)`` until ``None``.
    Raises :class:`CodeError` (wrapped by callers with the file name) on malformed bits.
    """

    __slots__ = ("_data", "_end", "_reader", "count", "rice_k", "_pos", "_remaining",
                 "_prev_last", "partition", "block_size", "_blocks", "_at")

    def __init__(self, data: bytes, offset: int, length: int, partition: int,
                 block_size: int = BLOCK_SIZE, blocks: ListBlocks | None = None) -> None:
        if offset < 1 or offset + length > len(data) or length <= 0:
            raise CodeError("list outside the postings payload")
        self._data = data
        self._end = (offset + length) * 8
        wpos = data[0]
        reader = BitReader(data, offset * 8, self._end)
        self.count = reader.gamma()
        self.rice_k = reader.gamma() - 1
        self._pos = reader.bits(wpos)
        self._reader = reader
        self._remaining = self.count
        self._prev_last = -1
        self.partition = partition
        self.block_size = block_size
        # the list's blocks from the partition's block maxima: skip_to jumps by them
        fits = blocks is not None and int(blocks.count.sum()) == self.count and \
            (len(blocks) <= 1 or int(blocks.count[0]) == block_size)
        self._blocks = blocks if fits else None
        self._at = 0  # the index of the next block

    def seek_block(self, i: int) -> None:
        """Go to the list's ``i``-th block (by the block maxima the reader was made with)."""
        blocks = self._blocks
        if blocks is None or not 0 <= i <= len(blocks):
            raise CodeError("no such block")
        if i == len(blocks):
            self._remaining, self._at = 0, i
            return
        self._reader.pos = int(blocks.bit[i])
        self._pos = int(blocks.pos[i])
        self._prev_last = int(blocks.last[i - 1]) if i else -1
        self._remaining = self.count - i * self.block_size
        self._at = i

    def _header(self) -> tuple[int, int, int, int, int, int, int, int]:
        """The block header's seven gamma codes, cut from one integer window (they are short);
        when the window does not hold all seven, the bit reader reads them one by one."""
        r = self._reader
        pos = r.pos
        first_byte = pos >> 3
        chunk = self._data[first_byte:first_byte + _HEADER_WINDOW]
        avail = len(chunk) * 8 - (pos & 7)
        window = int.from_bytes(chunk, "big") & ((1 << avail) - 1) if avail > 0 else 0
        if avail > self._end - pos:  # never read past the list
            window = window >> (avail - self._end + pos) if self._end > pos else 0
            avail = max(self._end - pos, 0)
        values = []
        left = avail
        while window and len(values) < 7:
            size = 2 * (left - window.bit_length()) + 1
            if size > left:
                break
            left -= size
            values.append(window >> left)
            window &= (1 << left) - 1
        if len(values) == 7:
            r.pos = pos + avail - left
            delta, span1, pos1, wd1, wf1, wo1, wl1 = values
        else:
            delta, span1, pos1 = r.gamma(), r.gamma(), r.gamma()
            wd1, wf1, wo1, wl1 = r.gamma(), r.gamma(), r.gamma(), r.gamma()
        first = self._prev_last + delta
        last = first + span1 - 1
        return first, last, pos1 - 1, wd1 - 1, wf1 - 1, wo1 - 1, wl1 - 1, r.pos

    def _skip_block(self, m: int, wd: int, wf: int, wo: int, wl: int, body: int) -> None:
        end = body + (m - 1) * wd + m * (wf + wo + wl)
        if end > self._end:
            raise CodeError("block runs past its list")
        self._reader.pos = end

    def next_block(self) -> PostingBlock | None:
        if self._remaining <= 0:
            return None
        m = min(self.block_size, self._remaining)
        first, last, pos_bits, wd, wf, wo, wl, body = self._header()
        end = body + (m - 1) * wd + m * (wf + wo + wl)
        if end > self._end:
            raise CodeError("block runs past its list")
        byte0 = body >> 3
        base = body - byte0 * 8
        if max(wd, wf, wo, wl) <= WINDOW_FIELD_BITS:
            # the four columns in one pass: field widths, then their bit offsets
            buf = padded_bytes(self._data, byte0, (end + 7) >> 3)
            widths = np.repeat(np.array((wd, wf, wo, wl), dtype=np.int64), (m - 1, m, m, m))
            offsets = np.cumsum(widths) - widths + base
            cols = window_fields(buf, offsets, widths)
            d = cols[:m - 1]
            f = cols[m - 1:2 * m - 1]
            o = cols[2 * m - 1:3 * m - 1]
            ln = cols[3 * m - 1:]
        else:
            bits = to_bits(self._data, byte0, (end + 7) >> 3)
            d = unpack_fixed(bits, base, m - 1, wd)
            f = unpack_fixed(bits, base + (m - 1) * wd, m, wf)
            o = unpack_fixed(bits, base + (m - 1) * wd + m * wf, m, wo)
            ln = unpack_fixed(bits, base + (m - 1) * wd + m * (wf + wo), m, wl)
        docs = np.empty(m, dtype=np.int64)
        docs[0] = first
        if m > 1:
            docs[1:] = np.cumsum(d + 1)
            docs[1:] += first
        if int(docs[-1]) != last or int(ln.sum()) != pos_bits:
            raise CodeError("block columns disagree with the block header")
        ends = np.cumsum(o + ln) if wo else np.cumsum(ln)
        ends += self._pos
        starts = ends - ln
        self._pos = int(ends[-1])
        self._reader.pos = end
        self._remaining -= m
        self._prev_last = last
        self._at += 1
        return PostingBlock(self.partition, docs, f, starts, ln, self.rice_k)

    def skip_to(self, doc: int) -> PostingBlock | None:
        """The first block whose last doc index is >= ``doc`` (earlier blocks are skipped
        by their headers alone, or jumped over by the list's block maxima), or ``None`` when
        the list is exhausted."""
        blocks = self._blocks
        if blocks is not None and self._remaining > 0:
            at = self._at
            i = at + int(np.searchsorted(blocks.last[at:], doc))
            if i > at:
                self.seek_block(i)
            return self.next_block()
        while self._remaining > 0:
            save = self._reader.pos
            m = min(self.block_size, self._remaining)
            first, last, pos_bits, wd, wf, wo, wl, body = self._header()
            if last >= doc:
                self._reader.pos = save
                return self.next_block()
            self._skip_block(m, wd, wf, wo, wl, body)
            if wo:
                # offset deltas are in the columns: decode them to keep positions in step
                self._reader.pos = save
                self.next_block()
                continue
            self._pos += pos_bits
            self._remaining -= m
            self._prev_last = last
            self._at += 1
        return None
