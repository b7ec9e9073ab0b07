from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.partition.doc_map import DocMap, DocMapEntry, MemberRow, encode_doc_map
from indexer.core.partition.positions import decode_positions, encode_positions
from indexer.core.partition.postings import PostingListReader, encode_postings


def _build(lists: list[list[tuple[int, list[int]]]], block_size: int):
    entry_list, docs, counts, flat = [], [], [], []
    for t, postings in enumerate(lists):
        for doc, pos in postings:
            entry_list.append(t)
            docs.append(doc)
            counts.append(len(pos))
            flat.extend(pos)
    entry_list = np.array(entry_list, dtype=np.int64)
    counts = np.array(counts, dtype=np.int64)
    pos_data, bits, k, _ = encode_positions(np.array(flat, dtype=np.int64), counts, entry_list,
                                            len(lists))
    data, off, ln = encode_postings(entry_list, np.array(docs), counts, bits, k, len(lists),
                                    block_size)
    return pos_data, data, off, ln


term_lists = st.lists(
    st.dictionaries(st.integers(min_value=0, max_value=2000),
                    st.lists(st.integers(min_value=0, max_value=500), max_size=8, unique=True)
                    .map(sorted), min_size=1, max_size=60)
    .map(lambda d: sorted(d.items())), min_size=1, max_size=8)


@given(term_lists, st.sampled_from([1, 2, 7, 128]))
@settings(max_examples=60, deadline=None)
def test_postings_round_trip(lists, block_size: int) -> None:
    pos_data, data, off, ln = _build(lists, block_size)
    for t, postings in enumerate(lists):
        reader = PostingListReader(data, int(off[t]), int(ln[t]), 3, block_size)
        assert reader.count == len(postings)
        got_docs, got_pos = [], []
        while (block := reader.next_block()) is not None:
            assert block.partition == 3
            got_docs += block.doc_index.tolist()
            pos, counts = decode_positions(pos_data, block.pos_offset, block.frequency,
                                           block.pos_length, block.rice_k)
            splits = np.split(pos, np.cumsum(counts)[:-1])
            got_pos += [s.tolist() for s in splits]
        assert got_docs == [d for d, _ in postings]
        assert got_pos == [p for _, p in postings]


@given(term_lists, st.integers(min_value=0, max_value=2100))
@settings(max_examples=60, deadline=None)
def test_skip_to(lists, target: int) -> None:
    pos_data, data, off, ln = _build(lists, 4)
    for t, postings in enumerate(lists):
        reader = PostingListReader(data, int(off[t]), int(ln[t]), 0, 4)
        block = reader.skip_to(target)
        expected = [d for d, _ in postings if d >= target]
        if not expected:
            assert block is None
            continue
        assert block is not None
        first = int(block.doc_index[np.searchsorted(block.doc_index, target)])
        assert first == expected[0]
        # positions stay in step after skipped blocks
        pos, counts = decode_positions(pos_data, block.pos_offset, block.frequency,
                                       block.pos_length, block.rice_k)
        by_doc = dict(postings)
        cut = np.cumsum(counts)[:-1]
        for doc, p in zip(block.doc_index.tolist(), np.split(pos, cut), strict=True):
            assert p.tolist() == by_doc[doc]


def test_meta_word_postings_have_no_positions() -> None:
    pos_data, data, off, ln = _build([[(0, []), (5, [1, 2]), (9, [])]], 128)
    block = PostingListReader(data, int(off[0]), int(ln[0]), 0).next_block()
    assert block.frequency.tolist() == [0, 2, 0]
    assert block.pos_length[0] == 0 and block.pos_length[2] == 0


@given(st.lists(st.tuples(st.binary(min_size=24, max_size=24), st.floats(0, 1e9),
                          st.integers(0, 10 ** 6),
                          st.lists(st.tuples(st.integers(0, 10 ** 5), st.floats(0, 10)),
                                   max_size=5),
                          st.lists(st.floats(-1, 1), max_size=3)), min_size=1, max_size=20))
@settings(max_examples=50)
def test_doc_map_round_trip(rows) -> None:
    entries = [DocMapEntry(doc_id, i, score, length, tuple(regions), tuple(cls))
               for i, (doc_id, score, length, regions, cls) in enumerate(rows)]
    members = [MemberRow(e.doc_id, i, 100 + i, 10, 0, 0, 200 + i, i) for i, e in
               enumerate(entries)]
    dm = DocMap(encode_doc_map(entries, members))
    assert dm.n == dm.m == len(rows)
    for i, e in enumerate(entries):
        assert dm.doc_id(i) == e.doc_id
        assert dm.score[i] == e.score and dm.length[i] == e.length
        assert dm.region_weights(i) == [(p, w) for p, w in e.regions]
        assert dm.classifier_scores(i) == list(e.classifier_scores)
        assert dm.find_member(e.doc_id) is not None
