"""Bit-level codes, vectorised with numpy: Elias gamma, Rice, fixed-width bit packing.

Layer: ``indexer.core``. Used by :mod:`indexer.core.partition.positions` and
:mod:`indexer.core.partition.postings`; nothing here knows about files.

Every code is written as one or more *fields*: a value written most-significant bit first in a
given number of bits. Bits are numbered from the most significant bit of byte 0.

* Elias gamma of ``x >= 1``: ``floor(log2 x)`` zero bits, then ``x`` in binary. As a field it is
  simply ``x`` in ``2*floor(log2 x) + 1`` bits (the leading zeros come for free).
* Rice code with parameter ``k`` of ``v >= 0``: the quotient ``q = v >> k`` in unary (``q`` zero
  bits then a one bit: the field ``1`` in ``q + 1`` bits) and the remainder ``v & (2**k - 1)`` in
  ``k`` bits.

Encoding builds arrays of (start bit, value, width) and sets all bits at once, looping only
over bit *ranks* (at most 64), never over fields. Decoding finds the one-bits of a slice
(``np.flatnonzero(np.unpackbits(...))``) and gathers fixed-width fields with fancy indexing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


class CodeError(ValueError):
    """A bit stream does not decode (the caller adds the file name)."""


def bit_length(values: npt.ArrayLike) -> IntArray:
    """Vectorised ``int.bit_length`` for non-negative integers below 2**52."""
    arr = np.asarray(values, dtype=np.int64)
    _, exponent = np.frexp(arr.astype(np.float64))
    return np.where(arr > 0, exponent, 0).astype(np.int64)


def gamma_width(values: npt.ArrayLike) -> IntArray:
    """Bits of the Elias gamma code of each ``x >= 1``."""
    return 2 * bit_length(values) - 1


ADD_CHUNK = 1 << 18  # fields a BitPacker adds in one pass


class BitPacker:
    """Accumulates fields into a bit stream of ``total_bits``, one group of fields at a time.

    Fields must not overlap and each value must fit its width (callers guarantee both). Each
    group costs a handful of array operations and one scatter-add (``np.add.at``) into
    unsigned 64-bit words: a value of at most 32 significant bits touches the word holding its
    last bit and perhaps the word before; contributions never overlap, so adding them (no
    carries) assembles the words. Wider values are split into 32-bit halves.
    """

    __slots__ = ("total_bits", "_words")

    def __init__(self, total_bits: int) -> None:
        self.total_bits = total_bits
        self._words = np.zeros((total_bits + 63) // 64 + 1, dtype=np.uint64)

    def add(self, starts: npt.ArrayLike, values: npt.ArrayLike, widths: npt.ArrayLike) -> None:
        """Add fields ``values`` of ``widths`` bits at bit offsets ``starts``, ``ADD_CHUNK``
        fields at a time (a partition of whole pages has millions of fields: the temporary
        arrays of one pass would cost several times the fields' own arrays)."""
        starts = np.asarray(starts, dtype=np.int64)
        values = np.asarray(values, dtype=np.int64)
        widths = np.asarray(widths, dtype=np.int64)
        for a in range(0, values.size, ADD_CHUNK):
            self._add_fields(starts[a:a + ADD_CHUNK], values[a:a + ADD_CHUNK],
                             widths[a:a + ADD_CHUNK])

    def _add_fields(self, starts: IntArray, values: IntArray, widths: IntArray) -> None:
        ends = starts + widths
        wide = values >= (1 << 32)
        if wide.any():
            self._add_ends(ends[wide] - 32, values[wide] >> 32)
            self._add_ends(ends[wide], values[wide] & 0xFFFFFFFF)
            keep = ~wide
            ends, values = ends[keep], values[keep]
        self._add_ends(ends, values)

    def add_ones(self, ends: npt.ArrayLike) -> None:
        """Set the single bits just before each of ``ends`` (a unary code's terminating 1)."""
        ends = np.asarray(ends, dtype=np.int64)
        for a in range(0, ends.size, ADD_CHUNK):
            part = ends[a:a + ADD_CHUNK]
            last_word = (part - 1) >> 6
            shift = (64 * (last_word + 1) - part).astype(np.uint64)
            np.add.at(self._words, last_word, np.left_shift(np.uint64(1), shift))

    def _add_ends(self, ends: IntArray, values: IntArray) -> None:
        if ends.size == 0:
            return
        last_word = (ends - 1) >> 6
        shift = 64 * (last_word + 1) - ends  # 0..63: bits after the field in its last word
        v = values.astype(np.uint64)
        np.add.at(self._words, last_word, v << shift.astype(np.uint64))  # wraps: low part
        spill = np.flatnonzero(shift > 32)  # only then can a value below 2**32 cross words
        if spill.size:
            high = v[spill] >> (64 - shift[spill]).astype(np.uint64)
            np.add.at(self._words, last_word[spill] - 1, high)

    def tobytes(self) -> bytes:
        return self._words.astype(">u8").tobytes()[:(self.total_bits + 7) // 8]


def pack_fields(starts: npt.ArrayLike, values: npt.ArrayLike, widths: npt.ArrayLike,
                total_bits: int) -> bytes:
    """Write each ``values[i]`` in ``widths[i]`` bits at bit ``starts[i]``; other bits are 0."""
    packer = BitPacker(total_bits)
    packer.add(starts, values, widths)
    return packer.tobytes()


def to_bits(data: bytes | npt.NDArray[np.uint8], start_byte: int, end_byte: int) -> npt.NDArray[np.uint8]:
    """The bits of ``data[start_byte:end_byte]`` as a 0/1 uint8 array."""
    if isinstance(data, bytes | bytearray | memoryview):
        chunk = np.frombuffer(data, dtype=np.uint8, count=end_byte - start_byte,
                              offset=start_byte)
    else:
        chunk = data[start_byte:end_byte]
    return np.unpackbits(chunk)


def gather_fields(bits: npt.NDArray[np.uint8], starts: IntArray, widths: IntArray) -> IntArray:
    """Read fields of varying width (each at most 62 bits) from a 0/1 array."""
    n = starts.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    maxw = int(widths.max())
    if maxw == 0:
        return np.zeros(n, dtype=np.int64)
    if maxw > 62:
        raise CodeError(f"field of {maxw} bits")
    cols = np.arange(maxw, dtype=np.int64)
    index = starts[:, None] + cols[None, :]
    valid = cols[None, :] < widths[:, None]
    if int(starts.min()) < 0 or int((starts + widths).max()) > bits.size:
        raise CodeError("field outside the bit stream")
    index = np.where(valid, index, 0)
    picked = bits[index].astype(np.int64) & valid
    weights = np.left_shift(1, np.maximum(widths[:, None] - 1 - cols[None, :], 0))
    return (picked * weights).sum(axis=1)


WINDOW_FIELD_BITS = 57  # the widest field :func:`window_fields` reads (8 bytes less 7 bits)
_EIGHT = np.arange(8, dtype=np.int64)


def padded_bytes(data: bytes | memoryview, start_byte: int, end_byte: int) -> npt.NDArray[np.uint8]:
    """``data[start_byte:end_byte]`` as a uint8 array followed by 8 zero bytes, so that
    :func:`window_fields` can read a whole 8-byte window at any of its bytes."""
    buf = np.zeros(end_byte - start_byte + 8, dtype=np.uint8)
    buf[:end_byte - start_byte] = np.frombuffer(data, dtype=np.uint8,
                                                count=end_byte - start_byte, offset=start_byte)
    return buf


def window_fields(buf: npt.NDArray[np.uint8], starts: IntArray,
                  widths: IntArray | int) -> IntArray:
    """Fields of ``widths`` bits (0 to :data:`WINDOW_FIELD_BITS`) at bit offsets ``starts`` of
    ``buf`` (from :func:`padded_bytes`; every start below its unpadded length): each field is
    cut out of the big-endian 8-byte window beginning at the field's first byte, so a field
    costs a few array operations whatever its width."""
    window = buf[(starts >> 3)[:, None] + _EIGHT].view(">u8").ravel()
    shift = np.asarray(63 - np.asarray(widths), dtype=np.uint64)
    return (((window << (starts & 7).astype(np.uint64)) >> np.uint64(1)) >> shift).astype(
        np.int64)


def unpack_fixed(bits: npt.NDArray[np.uint8], start: int, count: int, width: int) -> IntArray:
    """``count`` consecutive fields of ``width`` bits from bit ``start``."""
    if count == 0 or width == 0:
        return np.zeros(count, dtype=np.int64)
    end = start + count * width
    if start < 0 or end > bits.size:
        raise CodeError("column outside the bit stream")
    matrix = bits[start:end].reshape(count, width).astype(np.int64)
    weights = np.left_shift(1, np.arange(width - 1, -1, -1, dtype=np.int64))
    return matrix @ weights


class BitReader:
    """Scalar reads from a byte string (headers: a handful of fields per list or block)."""

    __slots__ = ("data", "pos", "limit")

    def __init__(self, data: bytes, pos: int, limit: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.limit = len(data) * 8 if limit is None else limit

    def bits(self, n: int) -> int:
        if n == 0:
            return 0
        pos = self.pos
        end = pos + n
        if end > self.limit:
            raise CodeError("read past the end of the stream")
        first = pos >> 3
        chunk = int.from_bytes(self.data[first:(end + 7) >> 3], "big")
        self.pos = end
        return (chunk >> (((end + 7) >> 3) * 8 - end)) & ((1 << n) - 1)

    def gamma(self) -> int:
        """Read one Elias gamma code (values up to 2**40)."""
        pos = self.pos
        first = pos >> 3
        window = int.from_bytes(self.data[first:first + 11].ljust(11, b"\0"), "big")
        avail = 88 - (pos & 7)
        window &= (1 << avail) - 1
        if window == 0:
            raise CodeError("gamma code without a one bit")
        zeros = avail - window.bit_length()
        if zeros > 40:
            raise CodeError("gamma code too long")
        self.pos = pos + zeros
        return self.bits(zeros + 1)


# -- Rice parameter -------------------------------------------------------------------------

MAX_RICE_K = 30


def choose_rice_k(values: IntArray, group: IntArray, ngroups: int) -> IntArray:
    """The Rice parameter minimising the coded size of each group's values.

    ``values`` are the numbers to code (gap - 1, >= 0), ``group[i]`` the list value ``i``
    belongs to. Groups with no values get ``k = 0``; ties go to the smaller ``k``.
    """
    k_best = np.zeros(ngroups, dtype=np.int64)
    if values.size == 0:
        return k_best
    counts = np.bincount(group, minlength=ngroups)
    kmax = min(int(bit_length(np.array([values.max()]))[0]), MAX_RICE_K)
    if values.size > 1 and np.any(group[1:] < group[:-1]):
        best = np.full(ngroups, np.inf)
        fcounts = counts.astype(np.float64)
        for k in range(kmax + 1):
            cost = np.bincount(group, weights=(values >> k), minlength=ngroups) + fcounts * (k + 1)
            better = cost < best
            best[better] = cost[better]
            k_best[better] = k
        return k_best
    # values grouped in order (the positions encoder's case): exact integer sums per segment,
    # the values halved in place from one k to the next
    present = np.flatnonzero(counts)
    seg_start = np.cumsum(counts) - counts
    n_present = counts[present]
    shifted = values.astype(np.int64, copy=True)
    best = np.add.reduceat(shifted, seg_start[present]) + n_present
    best_k = np.zeros(present.size, dtype=np.int64)
    for k in range(1, kmax + 1):
        shifted >>= 1
        cost = np.add.reduceat(shifted, seg_start[present]) + n_present * (k + 1)
        better = cost < best
        best[better] = cost[better]
        best_k[better] = k
    k_best[present] = best_k
    return k_best
