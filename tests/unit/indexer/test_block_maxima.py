"""The block maxima of a partition's postings (indexer.core.partition.block_maxima): per block of
every list of more than one block, its doc range and largest frequency are those of the
postings it holds (so the frequency is a true upper bound), its offsets start a reader at it,
and the file's bytes decode to the same columns; skip_to jumps by them to the same blocks as
the header walk."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.partition.block_maxima import BlockMaxima
from indexer.core.partition.positions import encode_positions
from indexer.core.partition.postings import PostingListReader, encode_postings

term_lists = st.lists(
    st.dictionaries(st.integers(min_value=0, max_value=3000), st.integers(1, 40),
                    min_size=1, max_size=90).map(lambda d: sorted(d.items())),
    min_size=1, max_size=6)


def _encode(lists: list[list[tuple[int, int]]], block_size: int):
    entry_list = np.repeat(np.arange(len(lists)), [len(x) for x in lists])
    docs = np.array([d for x in lists for d, _ in x], dtype=np.int64)
    counts = np.array([c for x in lists for _, c in x], dtype=np.int64)
    flat = np.concatenate([np.arange(c, dtype=np.int64) * 3 for c in counts])
    _, bits, k, _ = encode_positions(flat, counts, entry_list, len(lists))
    maxima: list[BlockMaxima] = []
    data, off, ln = encode_postings(entry_list, docs, counts, bits, k, len(lists), block_size,
                                    maxima)
    return data, off, ln, maxima[0]


@given(term_lists, st.sampled_from([2, 3, 8]))
@settings(max_examples=80, deadline=None)
def test_block_maxima_are_those_of_the_blocks(lists, block_size: int) -> None:
    data, off, ln, maxima = _encode(lists, block_size)
    again = BlockMaxima.decode(maxima.encode())
    for name in ("list_offset", "list_count", "list_block", "first", "last", "max_freq", "bit",
                 "pos"):
        assert np.array_equal(getattr(again, name), getattr(maxima, name)), name
    for t, postings in enumerate(lists):
        blocks = again.of_list(int(off[t]))
        if len(postings) <= block_size:  # one block: not kept
            assert blocks is None
            continue
        assert blocks is not None
        reader = PostingListReader(data, int(off[t]), int(ln[t]), 0, block_size)
        decoded = []
        while (block := reader.next_block()) is not None:
            decoded.append(block)
        assert len(decoded) == len(blocks)
        for i, block in enumerate(decoded):
            assert int(blocks.first[i]) == int(block.doc_index[0])
            assert int(blocks.last[i]) == int(block.doc_index[-1])
            # the stored maximum bounds every posting's frequency, and is reached
            assert int(blocks.max_freq[i]) == int(block.frequency.max())
            assert int(blocks.count[i]) == block.doc_index.size
            jump = PostingListReader(data, int(off[t]), int(ln[t]), 0, block_size, blocks)
            jump.seek_block(i)
            got = jump.next_block()
            assert got is not None
            assert np.array_equal(got.doc_index, block.doc_index)
            assert np.array_equal(got.pos_offset, block.pos_offset)
            assert np.array_equal(got.frequency, block.frequency)


@given(term_lists, st.lists(st.integers(0, 3100), min_size=1, max_size=12).map(sorted))
@settings(max_examples=60, deadline=None)
def test_skip_to_by_maxima_is_the_header_walk(lists, targets: list[int]) -> None:
    data, off, ln, maxima = _encode(lists, 4)
    for t in range(len(lists)):
        blocks = maxima.of_list(int(off[t]))
        walk = PostingListReader(data, int(off[t]), int(ln[t]), 0, 4)
        jump = PostingListReader(data, int(off[t]), int(ln[t]), 0, 4, blocks)
        for doc in targets:
            a, b = walk.skip_to(doc), jump.skip_to(doc)
            assert (a is None) == (b is None)
            if a is None:
                break
            assert np.array_equal(a.doc_index, b.doc_index)
            assert np.array_equal(a.pos_offset, b.pos_offset)


def test_garbage_is_refused() -> None:
    with pytest.raises(ValueError):
        BlockMaxima.decode(b"not an npz")
