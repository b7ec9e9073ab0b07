"""A partition's term lists encoded a chunk of lists at a time (indexer.core.partition.term_lists): the
bytes do not depend on the chunk size, they read back through the postings and positions
readers, and the sort by term is a stable sort."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.core.documents.encoding import prepare_documents
from indexer.core.files.packed_columns import unpack_columns
from indexer.core.ids import DocType, term_id
from indexer.core.partition.build import (
    LAST_ENTRIES_TOOL,
    ActiveDocs,
    BuiltPartition,
    Vocabulary,
    build_partition,
)
from indexer.core.partition.positions import decode_positions
from indexer.core.partition.postings import PostingListReader
from indexer.core.partition.term_lists import stable_rank_order
from tests.unit.indexer.helpers import make_doc

WHOLE = 10 ** 12  # a chunk size that holds every list: the lists encoded at once


def _active(docs) -> tuple[ActiveDocs, Vocabulary]:
    active, vocab = ActiveDocs(), Vocabulary()
    active.add(prepare_documents(docs, 1).batch, vocab, np.zeros((len(docs), 6), np.int64))
    return active, vocab


def _files(built: BuiltPartition) -> tuple:
    return (built.doc_map, built.positions, built.postings, built.last_entries, built.groups,
            built.terms, built.postings_count, built.positions_count)


def _mixed_docs() -> list:
    """Pages, link documents of some of them (their text is posted under the page, shifted
    past it), links to urls with no page (link-only groups) and duplicate pages (same text
    under another url: merged, posted once)."""
    pages = [make_doc(i) for i in range(120)]
    links = [make_doc(1000 + i, url=pages[i * 7].url, doc_type=DocType.LINK, cached=False)
             for i in range(15)]
    orphans = [make_doc(2000 + i, url=f"https://nowhere.example/{i}", doc_type=DocType.LINK,
                        cached=False) for i in range(5)]
    duplicates = [make_doc(i * 11, url=f"https://copy.example/{i}") for i in range(8)]
    docs = pages + links + orphans + duplicates
    return [docs[i] for i in np.random.default_rng(3).permutation(len(docs)).tolist()]


@pytest.mark.parametrize("chunk", [1, 9, 100, 2000])
def test_chunked_lists_are_the_bytes_of_lists_encoded_at_once(chunk: int) -> None:
    active, vocab = _active(_mixed_docs())
    whole = build_partition(active, vocab, chunk_positions=WHOLE)
    assert whole.groups < len(active.doc_ids)  # links and duplicates were folded
    assert _files(build_partition(active, vocab, chunk_positions=chunk)) == _files(whole)

    def reverse(groups, _ids):
        return list(reversed(groups))

    assert _files(build_partition(active, vocab, order=reverse, chunk_positions=chunk)) == \
        _files(build_partition(active, vocab, order=reverse, chunk_positions=WHOLE))


def _read_lists(built: BuiltPartition, block_size: int
               ) -> dict[bytes, list[tuple[int, list[int]]]]:
    """Every term list of a built partition, read through last_entries, the postings reader
    and the positions decoder: term_id -> [(doc_map index, positions)]."""
    keys, ints, _, _ = unpack_columns(LAST_ENTRIES_TOOL, built.last_entries)
    out = {}
    for key, (ndocs, occurrences, offset, length, last_doc, last_off) in zip(
            keys, ints.tolist(), strict=True):
        reader = PostingListReader(built.postings, offset, length, 0, block_size)
        entries = []
        while (block := reader.next_block()) is not None:
            pos, counts = decode_positions(built.positions, block.pos_offset, block.frequency,
                                           block.pos_length, block.rice_k)
            split = np.split(pos, np.cumsum(counts)[:-1])
            entries += [(d, p.tolist()) for d, p in zip(block.doc_index.tolist(), split,
                                                        strict=True)]
            last = (int(block.doc_index[-1]), int(block.pos_offset[-1]))
        assert (len(entries), sum(len(p) for _, p in entries)) == (ndocs, occurrences)
        assert last == (last_doc, last_off)
        out[key] = entries
    return out


def test_chunked_lists_read_back() -> None:
    docs = [make_doc(i, words=40 + i % 200) for i in range(150)]
    built = build_partition(*_active(docs), block_size=4, chunk_positions=50)
    model: dict[bytes, list[tuple[int, list[int]]]] = {}
    for index, doc in enumerate(docs):  # distinct pages: doc_map order is append order
        for term, positions in doc.terms.items():
            model.setdefault(term_id(term), []).append((index, list(positions)))
        for meta in doc.meta_words:
            model.setdefault(term_id(meta), []).append((index, []))
    assert _read_lists(built, 4) == model


@pytest.mark.parametrize("nranks", [1, 40, 70_000, 300_000])
def test_stable_rank_order_is_a_stable_sort(nranks: int) -> None:
    rng = np.random.default_rng(nranks)
    rank = rng.integers(0, nranks, 200_000).astype(np.int32)
    order = stable_rank_order(rank, nranks)
    assert order.dtype == np.int32
    assert np.array_equal(order, np.argsort(rank, kind="stable"))


def test_vocabulary_numbers_terms_in_order_of_first_sight() -> None:
    """Batch after batch, with repeats inside a batch and terms seen in earlier batches: the
    numbers are those of a first-sight numbering, and ``terms`` lists the terms by number."""
    vocab = Vocabulary()
    batches = [["b", "a", "b", "c", "a"], [], ["a", "d", "d", "e", "b", "f", "e"], ["c"],
               ["g", "a", "h", "g"]]
    seen: dict[str, int] = {}
    for batch in batches:
        numbers = vocab.lookup_many(batch)
        assert numbers.tolist() == [seen.setdefault(t, len(seen)) for t in batch]
        assert vocab.terms == list(seen)
