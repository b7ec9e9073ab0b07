"""Kill -9 a writer (and its in-process dictionary updater) at random moments, reopen each
time: nothing corrupt is served, nothing acknowledged is lost."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import make_doc

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.verify import verify_bundle
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater

ROOT = Path(__file__).resolve().parents[3]
HELPERS = Path(__file__).resolve().parents[2] / "unit" / "indexer"
CONFIG = BundleConfig(max_partition_docs=40, refresh_every_docs=9)

CHILD = """
import sys
sys.path[:0] = [{root!r}, {helpers!r}]
from helpers import make_doc
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater
path, start = sys.argv[1], int(sys.argv[2])
writer = IndexBundleWriter(path, BundleConfig(max_partition_docs=40, refresh_every_docs=9))
print("ready", flush=True)
i = start
while True:
    batch = [make_doc(n, words=(n * 7) % 40 + 1) for n in range(i, i + 5)]
    writer.append(batch)
    print("ack", i, i + 5, flush=True)
    i += 5
    if i % 15 == 0:
        DictionaryUpdater(path, leaf_capacity=8, fanout=4).update()
"""


def _run_and_kill(path: Path, start: int, rnd: random.Random) -> list[int]:
    script = CHILD.format(root=str(ROOT), helpers=str(HELPERS))
    proc = subprocess.Popen([sys.executable, "-c", script, str(path), str(start)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(rnd.uniform(0.0, 0.12))
    os.kill(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate()
    acked: list[int] = []
    for line in out.split("\n")[:-1]:  # complete lines only: the kill may cut the last one
        if line.startswith("ack"):
            _, a, b = line.split()
            acked.extend(range(int(a), int(b)))
    return acked


@pytest.mark.long
@pytest.mark.slow
def test_kill_minus_nine_at_random_moments(tmp_path: Path) -> None:
    rnd = random.Random(20261122)
    path = tmp_path / "bundle"
    acknowledged: list[int] = []
    kills = 0
    for round_ in range(55):
        acknowledged += _run_and_kill(path, round_ * 10_000, rnd)
        kills += 1
        # a reader opens the crashed bundle as it is: consistent, or it says exactly why
        reader = IndexBundleReader(path)
        stats = reader.collection_stats()
        assert stats.documents <= stats.stored_documents
        for block in (cursor := reader.postings("w1")):
            cursor.positions(block)
        reader.close()
        # the writer recovers: every acknowledged document is kept and becomes searchable
        IndexBundleWriter(path, CONFIG).close()
        if round_ % 11 == 10:
            DictionaryUpdater(path, leaf_capacity=8, fanout=4).update()
            report = verify_bundle(path)
            assert report.ok, report.problems
            reader = IndexBundleReader(path)
            for n in rnd.sample(acknowledged, min(60, len(acknowledged))):
                doc = make_doc(n, words=(n * 7) % 40 + 1)
                assert reader.summary(doc.doc_id) == dict(doc.summary), n
            reader.close()
    assert kills >= 50
    reader = IndexBundleReader(path)
    missing = [n for n in acknowledged
               if reader.summary(make_doc(n, words=(n * 7) % 40 + 1).doc_id) is None]
    assert not missing
    assert reader.collection_stats().stored_documents >= len(acknowledged)
    assert verify_bundle(path).ok
