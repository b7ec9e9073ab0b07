"""The dictionary updater's memory does not grow with the dictionary (issue 20): compacting a
dictionary, or merging a partition into it, allocates at most a bound that is the same for a
dictionary eight times larger (traced by tracemalloc, numpy's buffers included)."""

from __future__ import annotations

import random
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from indexer.core.dictionary.tree import BPlusTree, BPlusTreeWriter
from indexer.core.dictionary.updater import _merge_term_table
from indexer.core.files.packed_columns import pack_columns
from indexer.core.files.storage import atomic_write, frame
from indexer.core.partition.build import LAST_ENTRIES_TOOL

SMALL, LARGE = 30_000, 240_000
PARTITION = 8_000
BOUND = 48 * 1024 * 1024  # a batch of leaves; 240,000 terms as Python objects take far more


def _keys(count: int, seed: int) -> list[bytes]:
    rnd = random.Random(seed)
    return sorted({(rnd.randbytes(7).hex()[:7] + "_").encode() + rnd.randbytes(8)
                   for _ in range(count)})


@pytest.fixture(scope="module")
def dictionaries(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """A dictionary of SMALL and one of LARGE terms, each term in two partitions."""
    out = {}
    for size in (SMALL, LARGE):
        directory = tmp_path_factory.mktemp(f"dictionary_{size}")
        keys = _keys(size, size)
        writer = BPlusTreeWriter(directory)
        for number in (0, 1):
            writer.merge([(k, [(number, 3, 5, 64 * i, 40)]) for i, k in enumerate(keys)])
            writer.commit(next_partition=number + 1)
        writer.close()
        out[size] = directory
    return out


def _peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_compaction_memory_does_not_grow_with_the_dictionary(
        dictionaries: dict[int, Path], tmp_path: Path) -> None:
    peaks = {}
    for size, source in dictionaries.items():
        directory = tmp_path / str(size)
        shutil.copytree(source, directory)
        writer = BPlusTreeWriter(directory)
        before = writer.manifest["node_file"]
        peaks[size] = _peak(writer.compact)
        assert writer.manifest["node_file"] != before
        writer.close()
        tree = BPlusTree(directory)
        assert tree.verify() == size
        tree.close()
    print(peaks)
    assert peaks[LARGE] < BOUND, peaks
    assert peaks[LARGE] < 1.5 * peaks[SMALL] + 2 * 1024 * 1024, peaks


def test_merging_a_partition_does_not_grow_with_the_dictionary(
        dictionaries: dict[int, Path], tmp_path: Path) -> None:
    """The updater's merge of one partition's last_entries (half its terms already in the
    dictionary, half new): its memory is the partition's, not the dictionary's."""
    peaks = {}
    for size, source in dictionaries.items():
        directory = tmp_path / str(size)
        shutil.copytree(source, directory)
        present = _keys(size, size)
        old = present[::size // (PARTITION // 2)][:PARTITION // 2]
        keys = sorted(set(old) | set(_keys(PARTITION // 2, -size)))
        ints = np.array([[2, 3, 10 * i, 9, i, 0] for i in range(len(keys))], dtype=np.int64)
        path = tmp_path / f"last_entries_{size}"
        atomic_write(path, frame("last_entries", pack_columns(LAST_ENTRIES_TOOL, keys, ints)))
        writer = BPlusTreeWriter(directory)
        peaks[size] = _peak(lambda w=writer, p=path: (_merge_term_table(w, p, 2),
                                                      w.commit(next_partition=3)))
        writer.close()
        tree = BPlusTree(directory)
        assert tree.lookup(keys[0])[-1] == (2, 2, 3, 0, 9)
        assert len(tree) == len(set(present) | set(keys))
        tree.close()
    print(peaks)
    assert peaks[LARGE] < BOUND, peaks
    assert peaks[LARGE] < 1.5 * peaks[SMALL] + 2 * 1024 * 1024, peaks
