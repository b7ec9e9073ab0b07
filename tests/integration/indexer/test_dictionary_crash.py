"""Kill -9 the dictionary's writer in the middle of a streamed compaction or of a streamed
merge of a partition: the dictionary its MANIFEST names stays whole (every term as before, or
every term as after), and the next writer removes the unfinished node file."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from indexer.core.dictionary.tree import BPlusTree, BPlusTreeWriter
from indexer.core.files.packed_columns import pack_columns
from indexer.core.files.storage import atomic_write, frame
from indexer.core.partition.build import LAST_ENTRIES_TOOL

ROOT = Path(__file__).resolve().parents[3]
TERMS = 60_000

CHILD = """
import sys
sys.path.insert(0, {root!r})
from indexer.core.dictionary.tree import BPlusTreeWriter
from indexer.core.dictionary.updater import _merge_term_table
mode, directory, first, second = sys.argv[1:]
print("ready", flush=True)
i = 0
while True:
    writer = BPlusTreeWriter(directory)
    if mode == "compact":
        writer.compact()
    else:
        _merge_term_table(writer, (first, second)[i % 2], 1)
        writer.commit(next_partition=2)
    writer.close()
    i += 1
"""


def _keys() -> list[bytes]:
    rnd = random.Random(11)
    return sorted({rnd.randbytes(16) for _ in range(TERMS)})


def _last_entries(path: Path, keys: list[bytes], docs: int) -> None:
    ints = np.array([[docs, 1, 8 * i, 8, 0, 0] for i in range(len(keys))], dtype=np.int64)
    atomic_write(path, frame("last_entries", pack_columns(LAST_ENTRIES_TOOL, keys, ints)))


def _check(directory: Path, keys: list[bytes], merged: list[bytes]) -> int | None:
    """Every term has its partition-0 record; partition 1's records all come from one of the
    two last_entries (``docs`` 1 or 2), or none was merged yet. Returns that ``docs``."""
    tree = BPlusTree(directory)
    try:
        assert tree.verify() == len(keys)
        seen = set()
        merged_set = set(merged)
        with_partition_one = 0
        for (key, records), want in zip(tree.items(), keys, strict=True):
            assert key == want
            assert records[0] == (0, 5, 5, 0, 4)
            if len(records) == 2:
                assert key in merged_set and records[1][0] == 1
                seen.add(records[1][1])
                with_partition_one += 1
            else:
                assert len(records) == 1
        assert len(seen) <= 1 and with_partition_one in (0, len(merged)), seen
        for key in merged[::997]:
            assert tree.lookup(key)[0] == (0, 5, 5, 0, 4)
        return seen.pop() if seen else None
    finally:
        tree.close()


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["compact", "merge"])
def test_kill_minus_nine_mid_rebuild(tmp_path: Path, mode: str) -> None:
    rnd = random.Random(20260 + len(mode))
    keys = _keys()
    directory = tmp_path / "dictionary"
    writer = BPlusTreeWriter(directory)
    writer.merge([(k, [(0, 5, 5, 0, 4)]) for k in keys])
    writer.commit(next_partition=1)
    writer.close()
    merged = keys[::3]
    first, second = tmp_path / "le_a", tmp_path / "le_b"
    _last_entries(first, merged, 1)
    _last_entries(second, merged, 2)
    script = CHILD.format(root=str(ROOT))
    debris = 0
    versions = set()
    for _ in range(7):
        proc = subprocess.Popen([sys.executable, "-c", script, mode, str(directory),
                                 str(first), str(second)], stdout=subprocess.PIPE, text=True,
                                cwd=ROOT)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rnd.uniform(0.3, 2.5))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        versions.add(_check(directory, keys, merged))
        manifest_file = BPlusTree(directory).manifest["node_file"]
        others = [p.name for p in directory.glob("nodes.*") if p.name != manifest_file]
        debris += bool(others)
        BPlusTreeWriter(directory).close()  # the next writer clears what the kill left
        assert [p.name for p in directory.glob("nodes.*")] == [manifest_file]
    assert debris, "no kill landed inside a rebuild"
    if mode == "merge":
        assert versions & {1, 2}, versions
