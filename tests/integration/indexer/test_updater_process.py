"""The dictionary updater in its own process, while the indexer appends and a reader reads."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from helpers import make_doc

from indexer.core.bundle import BundleConfig, IndexBundleWriter
from indexer.core.reader import IndexBundleReader
from indexer.core.verify import verify_bundle

ROOT = Path(__file__).resolve().parents[3]


def test_updater_runs_beside_writer_and_reader(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    writer = IndexBundleWriter(path, BundleConfig(max_partition_docs=25, refresh_every_docs=5))
    writer.append([make_doc(i) for i in range(10)])
    updater = subprocess.Popen([sys.executable, "-m", "indexer.core.updater", str(path),
                                "--loop", "--poll", "0.05"], cwd=ROOT)
    try:
        reader = IndexBundleReader(path)
        seen = []
        for start in range(10, 200, 10):
            writer.append([make_doc(i) for i in range(start, start + 10)])  # never blocks
            reader.refresh()
            stats = reader.collection_stats()
            seen.append(stats.documents)
            cursor = reader.postings("w1")
            for block in cursor:
                cursor.positions(block)
        writer.close()
        deadline = time.time() + 20
        while time.time() < deadline:
            reader.refresh()
            if reader.dictionary.next_partition == writer.active_partition:
                break
            time.sleep(0.05)
        assert reader.dictionary.next_partition == writer.active_partition == 7
        assert seen == sorted(seen) and seen[-1] > 150
        assert reader.collection_stats().documents == 200
        assert reader.term_stats("site:h3.example").docs == 40
    finally:
        updater.terminate()
        updater.wait(10)
    assert verify_bundle(path).ok
