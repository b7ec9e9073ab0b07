"""Deflate for the many small byte strings of indexing: summaries, index blobs, anchor texts.

Layer: ``indexer.core``; used by :mod:`.encoding` and :mod:`.doc_index` (every document a
fetcher encodes: two calls per document, most of them link documents of a few hundred bytes)
and by the crawler's link-text score.

``zlib.compress`` sets its compressor up for a 32 KiB window and the default memory level
whatever the input's length: about 256 KiB allocated, and the hash table cleared, per call.
For an input of a few hundred bytes that setup costs some ten times the compression itself
(about 60 us against 6 us here, measured in fetcher threads whose allocator hands the memory
back between calls). A window just larger than the input plus zlib's lookahead (262 bytes)
finds the same matches, since no match can reach further back than the input's start, and a
memory level scaled to that window keeps a hash table and literal buffer of matching size.
The output is an ordinary zlib stream or gzip member that every reader takes (the header
names the window); its length is within a fraction of a percent of ``zlib.compress``'s.
"""

from __future__ import annotations

import zlib

LOOKAHEAD = 262  # zlib's MIN_LOOKAHEAD: a window holds the input only with this much spare
MIN_WINDOW_BITS, MAX_WINDOW_BITS = 9, 15
GZIP_CONTAINER = 16  # added to the window bits: a gzip member instead of a zlib stream


def _parameters(size: int) -> tuple[int, int]:
    """(window bits, memory level) for an input of ``size`` bytes."""
    bits = min(MAX_WINDOW_BITS, max(MIN_WINDOW_BITS, (size + LOOKAHEAD).bit_length()))
    return bits, min(8, max(1, bits - 6))


def deflate(data: bytes, level: int = 6) -> bytes:
    """``data`` as one zlib stream (what ``zlib.decompress`` reads), with a compressor sized
    to it."""
    bits, memory = _parameters(len(data))
    compressor = zlib.compressobj(level, zlib.DEFLATED, bits, memory)
    return compressor.compress(data) + compressor.flush()


def gzip_member(data: bytes, level: int = 6) -> bytes:
    """``data`` as one gzip member (``zlib.decompress(..., 31)`` and ``gzip`` read it), with a
    compressor sized to it."""
    bits, memory = _parameters(len(data))
    compressor = zlib.compressobj(level, zlib.DEFLATED, GZIP_CONTAINER + bits, memory)
    return compressor.compress(data) + compressor.flush()
