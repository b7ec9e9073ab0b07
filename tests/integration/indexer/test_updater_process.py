"""The dictionary updater in its own process, while the indexer appends and a reader reads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
from helpers import make_doc

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.verify import verify_bundle
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter

ROOT = Path(__file__).resolve().parents[3]


def test_updater_runs_beside_writer_and_reader(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    writer = IndexBundleWriter(path, BundleConfig(max_partition_docs=25, refresh_every_docs=5))
    writer.append([make_doc(i) for i in range(10)])
    updater = subprocess.Popen([sys.executable, "-m", "indexer.core.dictionary.updater", str(path),
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


# A process that starts the updater as the queue server does, with --parent, but without the
# parent-death signal (operations.process_death): the updater's own check alone must end it.
PARENT = """
import os, subprocess, sys, time
updater = subprocess.Popen([sys.executable, "-m", "indexer.core.dictionary.updater", sys.argv[1], "--loop",
                            "--poll", "0.05", "--parent", str(os.getpid())])
print(updater.pid, flush=True)
time.sleep(60)
"""


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_updater_stops_when_its_parent_dies(tmp_path: Path) -> None:
    path = tmp_path / "bundle"
    writer = IndexBundleWriter(path, BundleConfig(max_partition_docs=25, refresh_every_docs=5))
    writer.append([make_doc(i) for i in range(60)])
    writer.close()
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(path)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    try:
        reader = IndexBundleReader(path)
        deadline = time.time() + 20
        while reader.dictionary.next_partition < writer.active_partition:
            assert time.time() < deadline, "the updater merged nothing"
            time.sleep(0.05)
            reader.refresh()
        assert _running(pid)  # it keeps polling while its parent lives
        parent.kill()
        parent.wait(timeout=10)
        deadline = time.time() + 10
        while _running(pid):
            assert time.time() < deadline, "the updater outlived its parent"
            time.sleep(0.05)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
