from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.dictionary.tree import BPlusTree, BPlusTreeWriter
from indexer.core.ids import term_id


def test_insert_lookup_splits_and_reopen(tmp_path: Path) -> None:
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=4, fanout=4)
    keys = [term_id(f"t{i}") for i in range(200)]
    for i, key in enumerate(keys):
        writer.insert(key, [(0, i, i + 1, i * 10, 5)])
    writer.commit(next_partition=1)
    assert writer.height >= 3  # 200 keys, 4 per leaf, fanout 4: several levels of splits
    writer.close()
    tree = BPlusTree(tmp_path)
    assert len(tree) == 200 and tree.next_partition == 1
    for i, key in enumerate(keys):
        assert tree.lookup(key) == ((0, i, i + 1, i * 10, 5),)
    assert tree.lookup(term_id("absent")) is None
    assert [k for k, _ in tree.items()] == sorted(keys)
    assert tree.verify() == 200
    tree.close()


def test_range_scan(tmp_path: Path) -> None:
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=8, fanout=5)
    rnd = random.Random(3)
    keys = sorted(rnd.randbytes(16) for _ in range(500))
    writer.merge([(k, [(0, 1, 1, 0, 1)]) for k in keys])
    writer.commit()
    tree = BPlusTree(tmp_path)
    for a, b in [(10, 20), (0, 500), (499, 500), (100, 101), (250, 250)]:
        stop = keys[b] if b < len(keys) else None
        assert [k for k, _ in tree.items(keys[a], stop)] == keys[a:b]
    assert [k for k, _ in tree.items(b"\x00", keys[0])] == []


def test_tens_of_thousands_of_terms_over_partitions(tmp_path: Path) -> None:
    writer = BPlusTreeWriter(tmp_path)
    terms = [term_id(f"term{i}") for i in range(30000)]
    model: dict[bytes, list] = {}
    for part in range(3):
        batch = sorted(set(random.Random(part).sample(terms, 15000)))
        items = [(k, [(part, 2, 3, len(k) * part, 7)]) for k in batch]
        writer.merge(items)
        writer.commit(next_partition=part + 1)
        for k, recs in items:
            model.setdefault(k, []).extend(recs)
    writer.close()
    tree = BPlusTree(tmp_path)
    assert len(tree) == len(model)
    sample = random.Random(9).sample(sorted(model), 500)
    for key in sample:
        assert list(tree.lookup(key)) == model[key]
    assert tree.verify() == len(model)


def test_uncommitted_merge_is_invisible_and_discarded(tmp_path: Path) -> None:
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=4)
    writer.merge([(b"a" * 16, [(0, 1, 1, 1, 1)])])
    writer.commit(1)
    writer.merge([(b"b" * 16, [(1, 1, 1, 1, 1)])])
    writer.close()  # no commit: a crash here
    tree = BPlusTree(tmp_path)
    assert len(tree) == 1 and tree.lookup(b"b" * 16) is None
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=4)  # truncates the debris
    writer.merge([(b"c" * 16, [(1, 1, 1, 1, 1)])])
    writer.commit(2)
    assert [k for k, _ in BPlusTree(tmp_path).items()] == [b"a" * 16, b"c" * 16]


def test_compaction_keeps_contents(tmp_path: Path) -> None:
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=4, fanout=4)
    keys = [bytes([i]) * 16 for i in range(1, 60)]
    for round_ in range(3):
        writer.merge([(k, [(round_, 1, 1, 1, 1)]) for k in keys])
        writer.commit(round_ + 1)
    writer.compact()
    writer.close()
    tree = BPlusTree(tmp_path)
    assert tree.manifest["node_file"] != "nodes.0.btr"
    assert not (tmp_path / "nodes.0.btr").exists()
    assert all(len(tree.lookup(k)) == 3 for k in keys)


@given(st.lists(st.lists(st.binary(min_size=1, max_size=6), max_size=40), min_size=1,
                max_size=5))
@settings(max_examples=30, deadline=None)
def test_matches_a_dict_model(batches: list[list[bytes]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        writer = BPlusTreeWriter(d, leaf_capacity=3, fanout=3)
        model: dict[bytes, list] = {}
        for part, batch in enumerate(batches):
            keys = sorted(set(batch))
            writer.merge([(k, [(part, len(k), 1, 0, 1)]) for k in keys])
            writer.commit(part + 1)
            for k in keys:
                model.setdefault(k, []).append((part, len(k), 1, 0, 1))
        tree = BPlusTree(d)
        assert [(k, list(v)) for k, v in tree.items()] == sorted(model.items())
        writer.close()
        tree.close()


def test_reader_reads_manifest_again_when_its_node_file_was_replaced(tmp_path: Path) -> None:
    """A compaction publishes a new node file and deletes the old one between a reader's read
    of MANIFEST and its open of the node file: the reader reads MANIFEST again."""
    writer = BPlusTreeWriter(tmp_path, leaf_capacity=4)
    keys = [term_id(f"t{i}") for i in range(100)]
    writer.merge([(k, [(0, i, 1, 1, 1)]) for i, k in enumerate(sorted(keys))])
    writer.commit(next_partition=1)
    first = writer.manifest["node_file"]
    reads = []

    class RacingTree(BPlusTree):
        def _read_manifest(self) -> dict:
            manifest = super()._read_manifest()
            reads.append(manifest["node_file"])
            if len(reads) == 1:
                writer.compact()  # the file this manifest names is deleted now
            return manifest

    tree = RacingTree(tmp_path)
    assert reads[0] == first and not (tmp_path / first).exists()
    assert tree.manifest["node_file"] == writer.manifest["node_file"] != first
    assert tree.verify() == 100
    tree.close()
    writer.close()
