"""The dictionary's streaming merge (indexer.core.dictionary.stream) and its use by the writer:
every term reads back as a dict model says, overlapping terms keep the right records, the tree
written bottom up has the B+-tree's shape, and a streamed merge leaves no dead nodes."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.dictionary.node_format import INTERNAL, LEAF
from indexer.core.dictionary.stream import TermBlock, combine, merge_streams
from indexer.core.dictionary.tree import BPlusTree, BPlusTreeWriter
from indexer.core.dictionary.updater import _merge_term_table, term_blocks
from indexer.core.files.packed_columns import pack_columns
from indexer.core.files.storage import HEADER_SIZE, atomic_write, frame
from indexer.core.partition.build import LAST_ENTRIES_TOOL

Model = dict[bytes, dict[int, tuple[int, ...]]]


def block_of(model_part: dict[bytes, list[tuple[int, ...]]]) -> TermBlock:
    return TermBlock.of_items(sorted(model_part.items()))


def apply(model: Model, part: dict[bytes, list[tuple[int, ...]]]) -> None:
    for key, records in part.items():
        for record in records:
            model.setdefault(key, {})[record[0]] = tuple(record)


def expected(model: Model) -> list[tuple[bytes, list[tuple[int, ...]]]]:
    return [(k, [v[p] for p in sorted(v)]) for k, v in sorted(model.items())]


def check_every_term(directory: Path | str, model: Model, lookups: bool = True) -> None:
    """The tree holds exactly the model: by a scan, and (``lookups``) term by term."""
    tree = BPlusTree(directory)
    try:
        assert [(k, list(v)) for k, v in tree.items()] == expected(model)
        assert len(tree) == len(model)
        if lookups:
            for key, records in expected(model):
                assert list(tree.lookup(key)) == records
    finally:
        tree.close()


def partition_terms(rnd: random.Random, vocabulary: list[bytes], number: int, count: int
                    ) -> dict[bytes, list[tuple[int, ...]]]:
    keys = rnd.sample(vocabulary, count)
    return {k: [(number, rnd.randint(1, 9), rnd.randint(1, 99), rnd.randint(0, 1 << 40),
                 rnd.randint(1, 5000))] for k in keys}


def test_streamed_merges_read_back_every_term(tmp_path: Path) -> None:
    """Partitions with overlapping terms, merged as the updater merges them (streamed), then
    small batches (copy-on-write), then a partition merged again with new records (a
    re-order): every term has exactly the model's records, in partition order."""
    rnd = random.Random(7)
    vocabulary = sorted({rnd.randbytes(rnd.randint(3, 20)) for _ in range(6000)})
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=16, fanout=6)
    model: Model = {}
    for number in (0, 1, 2):
        part = partition_terms(rnd, vocabulary, number, 2500)
        generation = writer._pending["node_file"]
        writer.merge_blocks([block_of(part)])
        if number:  # a big batch rebuilds into a new node file
            assert writer._pending["node_file"] != generation
        writer.commit(next_partition=number + 1)
        apply(model, part)
        check_every_term(tmp_path, model, lookups=False)
        assert writer.manifest["live_bytes"] == writer.manifest["committed"] - HEADER_SIZE
    small = partition_terms(rnd, vocabulary, 3, 40)
    node_file = writer.manifest["node_file"]
    writer.merge_blocks([block_of(small)])  # copy-on-write: appended to the same file
    writer.commit(next_partition=4)
    assert writer.manifest["node_file"] == node_file
    apply(model, small)
    # partition 1 merged again with new records (a re-order): a term's record of partition 1
    # is replaced where the batch has one, kept where it has none
    again = partition_terms(rnd, vocabulary, 1, 3000)
    writer.merge_blocks([block_of(again)])
    writer.commit()
    apply(model, again)
    check_every_term(tmp_path, model, lookups=False)
    writer.compact()
    check_every_term(tmp_path, model)
    assert sorted(p.name for p in tmp_path.glob("nodes.*")) == [writer.manifest["node_file"]]
    writer.close()


def test_overlapping_terms_keep_records_in_partition_order(tmp_path: Path) -> None:
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=4, fanout=3)
    keys = [bytes([i]) * 8 for i in range(1, 40)]
    for number in (2, 5, 9):
        writer.merge_blocks([TermBlock.of_items([(k, [(number, 1, 1, number, 1)])
                                                 for k in keys])])
        writer.commit()
    # partition 5 merged again, partition 0 new, for every other key: replaced, not added
    again = [(k, [(0, 7, 7, 7, 7), (5, 2, 2, 2, 2)]) for k in keys[::2]]
    writer.merge_blocks([TermBlock.of_items(again)])
    writer.commit()
    tree = BPlusTree(tmp_path)
    for i, key in enumerate(keys):
        if i % 2 == 0:
            assert tree.lookup(key) == ((0, 7, 7, 7, 7), (2, 1, 1, 2, 1), (5, 2, 2, 2, 2),
                                        (9, 1, 1, 9, 1))
        else:
            assert tree.lookup(key) == ((2, 1, 1, 2, 1), (5, 1, 1, 5, 1), (9, 1, 1, 9, 1))
    tree.close()
    writer.close()


@given(st.lists(st.dictionaries(st.binary(min_size=1, max_size=5),
                                st.lists(st.integers(0, 6), min_size=1, max_size=3,
                                         unique=True), max_size=30),
                min_size=1, max_size=5),
       st.integers(1, 7), st.integers(1, 7))
@settings(max_examples=60, deadline=None)
def test_merge_streams_matches_a_dict_model(batches: list[dict[bytes, list[int]]],
                                            old_cut: int, new_cut: int) -> None:
    """Two sorted streams cut into blocks anywhere merge into the model's union."""
    old_model: Model = {}
    for part, batch in enumerate(batches[:-1]):
        for key, partitions in batch.items():
            for p in partitions:
                old_model.setdefault(key, {})[p] = (p, part, len(key), 0, 1)
    new_part = {k: [(p, 99, 1, 2, 3) for p in sorted(ps)] for k, ps in batches[-1].items()}
    old_items = expected(old_model)
    new_items = sorted(new_part.items())
    old_blocks = [TermBlock.of_items(old_items[i:i + old_cut])
                  for i in range(0, len(old_items), old_cut)]
    new_blocks = [TermBlock.of_items(new_items[i:i + new_cut])
                  for i in range(0, len(new_items), new_cut)]
    merged = TermBlock.concat(list(merge_streams(old_blocks, new_blocks)))
    apply(old_model, new_part)
    assert [(k, list(v)) for k, v in merged.items()] == expected(old_model)


def test_combine_replaces_only_the_partitions_it_brings() -> None:
    old = TermBlock.of_items([(b"a", [(0, 1, 1, 1, 1), (3, 1, 1, 1, 1)]),
                              (b"c", [(1, 1, 1, 1, 1)])])
    new = TermBlock.of_items([(b"a", [(1, 2, 2, 2, 2), (3, 9, 9, 9, 9)]),
                              (b"b", [(3, 5, 5, 5, 5)])])
    assert combine(old, new).items() == [
        (b"a", ((0, 1, 1, 1, 1), (1, 2, 2, 2, 2), (3, 9, 9, 9, 9))),
        (b"b", ((3, 5, 5, 5, 5),)), (b"c", ((1, 1, 1, 1, 1),))]


def _node_shapes(tree: BPlusTree) -> dict[int, list[int]]:
    """Sizes of the nodes at each height, by walking from the root."""
    shapes: dict[int, list[int]] = {}
    stack = [(tree.manifest["root"], tree.height)]
    while stack:
        offset, height = stack.pop()
        node = tree.read_node(offset)
        assert node.kind == (LEAF if height == 0 else INTERNAL)
        shapes.setdefault(height, []).append(len(node.keys))
        if height:
            stack.extend((child, height - 1) for child in node.values)
    return shapes


def test_builder_writes_a_balanced_tree() -> None:
    """A tree written bottom up (a streamed merge into an empty tree, then a compaction):
    leaves of at most ``leaf_capacity`` terms and internal nodes of at most ``fanout``
    children, none under half full but a lone root, and every term found."""
    for count in (1, 2, 5, 6, 11, 12, 13, 35, 36, 37, 500, 4321):
        with tempfile.TemporaryDirectory() as d:
            keys = [i.to_bytes(4, "big") for i in range(count)]
            block = TermBlock(keys, np.ones(count, np.int64),
                              np.arange(count * 5, dtype=np.int64).reshape(-1, 5))
            writer = BPlusTreeWriter(d, leaf_capacity=6, fanout=3)
            writer.merge_blocks([block.cut(a, min(a + 17, count))  # uneven blocks
                                 for a in range(0, count, 17)])
            writer.commit()
            for compacted in (False, True):
                if compacted:
                    writer.compact()
                tree = BPlusTree(d)
                shapes = _node_shapes(tree)
                height = tree.height
                assert sum(shapes[0]) == count
                assert all(3 <= n <= 6 for n in shapes[0]) or shapes[0] == [count]
                for h in range(1, height + 1):
                    assert all(2 <= n <= 3 for n in shapes[h])
                assert len(shapes[height]) == 1  # one root
                for i in range(0, count, max(1, count // 700)):
                    assert tree.lookup(keys[i]) == tuple(
                        (5 * i, 5 * i + 1, 5 * i + 2, 5 * i + 3, 5 * i + 4) for _ in [0])
                assert tree.verify() == count
                tree.close()
            writer.close()


def test_last_entries_decoded_in_chunks_like_whole(tmp_path: Path) -> None:
    """Keys holding the record codec's separator and escape bytes (0xFF, 0xFE): the table
    cut at separators every few records decodes to the same blocks as in one piece."""
    rnd = random.Random(5)
    keys = sorted({bytes([0xFF, 0xFE]) + rnd.randbytes(6) for _ in range(300)}
                  | {rnd.randbytes(9) for _ in range(300)})
    ints = np.array([[i + 1, 2 * i + 1, 10 * i, 7, i, 3 * i] for i in range(len(keys))],
                    dtype=np.int64)
    payload = pack_columns(LAST_ENTRIES_TOOL, keys, ints)
    whole = TermBlock.concat(list(term_blocks(tmp_path, payload, 4, chunk=10**6)))
    pieces = list(term_blocks(tmp_path, payload, 4, chunk=7))
    assert len(pieces) == -(-len(keys) // 7)
    cut = TermBlock.concat(pieces)
    assert cut.keys == whole.keys == keys
    assert cut.rep.tolist() == whole.rep.tolist() == [[4, *row[:4]] for row in ints.tolist()]
    path = tmp_path / "last_entries"
    atomic_write(path, frame("last_entries", payload))
    writer = BPlusTreeWriter(tmp_path / "dictionary")
    assert _merge_term_table(writer, path, 4) == len(keys)
    writer.commit(next_partition=5)
    writer.close()
    check_every_term(tmp_path / "dictionary",
                     {k: {4: (4, *row[:4])} for k, row in zip(keys, ints.tolist(),
                                                               strict=True)})
