"""Re-ordering a live bundle: readers that are open keep working and new ones see the new order
without a restart; a re-order killed (SIGKILL) at random moments leaves a valid, searchable
index; the crawler's glue re-orders by a real score file."""

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

from crawler.core.queue_server.index_order import IndexOrderer, reorder_ended_bundle, scores_tag
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.reorder import partitions_to_reorder, reorder_partition
from indexer.core.bundle.verify import verify_bundle
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater
from indexer.core.ids import hash8
from indexer.core.runtime.workdir import phrases_path
from ranking.core.options import SearchOptions
from ranking.core.search.pipeline import search
from ranking.indexes import BundleLocation, ReaderPool
from tests.unit.indexer.helpers import first_doc_ids
from tests.unit.ranking.helpers import Doc, index_document

ROOT = Path(__file__).resolve().parents[3]
STAR = "https://late.example/star"
PAGES = 400


def _crawl(path: Path, pages: int = PAGES) -> list[str]:
    urls = [f"https://early.example/p{i}" for i in range(pages - 1)] + [STAR]
    docs = [Doc(u, ("common", f"w{i}", "filler", "words", "here")) for i, u in enumerate(urls)]
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=pages)) as writer:
        writer.append([index_document(d) for d in docs])
        writer.close_partition()
    return urls


def _importance(url: str, value: float):
    wanted = int.from_bytes(hash8(url), "big")
    return lambda hashes: np.where(hashes == np.uint64(wanted), value, 0.0)


def _consistent(reader: IndexBundleReader, urls: list[str], sample: list[int]) -> None:
    listed = first_doc_ids(reader, "common", len(urls) + 1)
    assert sorted(listed) == sorted(hash8(u) for u in urls)
    for i in sample:
        assert first_doc_ids(reader, f"w{i}", 3) == [hash8(urls[i])]


def test_open_reader_survives_and_pool_sees_new_order(tmp_path: Path) -> None:
    bundle = tmp_path / "qs0" / "IndexData1"
    urls = _crawl(bundle)
    DictionaryUpdater(bundle).update()
    pool = ReaderPool()
    location = BundleLocation(0, 1, bundle)
    options = SearchOptions(min_results_to_group=5)
    before = [r.url for r in search([pool.shard(location)], "common", options).results]
    assert STAR not in before
    old = IndexBundleReader(bundle)  # its merged partition's postings are not read yet
    reorder_partition(bundle, 0, _importance(STAR, 4.0), "new")
    # the old snapshot's files are gone from the folder, its reads still see them
    assert first_doc_ids(old, "common", 1) == [hash8(urls[0])]
    _consistent(old, urls, [0, 7, PAGES - 1])
    old.close()
    shard = pool.shard(location)  # same process, no restart: the pool reopens the bundle
    after = [r.url for r in search([shard], "common", options).results]
    assert after[0] == STAR
    pool.close()


CHILD = """
import sys
sys.path[:0] = [{root!r}]
import numpy as np
from indexer.core.ids import hash8
from indexer.core.bundle.reorder import reorder_partition
path = sys.argv[1]
urls = [f"https://early.example/p{{i}}" for i in range({pages} - 1)] + ["{star}"]
hashes = np.frombuffer(b"".join(hash8(u) for u in urls), dtype=">u8").astype(np.uint64)
print("ready", flush=True)
k = 0
while True:
    target = hashes[k % len(hashes)]
    reorder_partition(path, 0, lambda h: np.where(h == target, 3.0, 0.0), f"t{{k}}")
    print("done", k, flush=True)
    k += 1
"""


@pytest.mark.long
@pytest.mark.slow
def test_reorders_killed_at_random_moments_leave_a_searchable_index(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    urls = _crawl(bundle)
    DictionaryUpdater(bundle).update()  # merged: each re-order also re-merges the dictionary
    rnd = random.Random(1612)
    script = CHILD.format(root=str(ROOT), pages=PAGES, star=STAR)
    completed = 0
    for _ in range(25):
        proc = subprocess.Popen([sys.executable, "-c", script, str(bundle)],
                                stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + rnd.uniform(0.0, 0.6)
        while time.monotonic() < deadline:  # readers open while the child re-orders
            with IndexBundleReader(bundle) as reader:
                _consistent(reader, urls, [rnd.randrange(PAGES)])
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        completed += sum(1 for line in out.split("\n") if line.startswith("done"))
        report = verify_bundle(bundle)
        assert report.ok, report.problems
        with IndexBundleReader(bundle) as reader:
            _consistent(reader, urls, [0, rnd.randrange(PAGES), PAGES - 1])
    assert completed > 0
    # recovery: the updater finishes a killed re-merge, a new re-order replaces any debris
    DictionaryUpdater(bundle).update()
    assert DictionaryUpdater(bundle).stale() == []
    result = reorder_partition(bundle, 0, _importance(STAR, 5.0), "final")
    g = result.generation  # only the new generation is left (the re-merge dropped its table)
    assert sorted(p.name for p in (bundle / "positions_doc_map" / "0").iterdir()) == \
        ["MANIFEST", f"block_maxima.g{g}", f"doc_map.g{g}", f"positions.g{g}",
         f"postings.g{g}", f"url_columns.g{g}"]
    assert verify_bundle(bundle).ok
    with IndexBundleReader(bundle) as reader:
        assert first_doc_ids(reader, "common", 1) == [hash8(STAR)]
        _consistent(reader, urls, list(range(0, PAGES, 37)))


def _write_scores(path: Path, urls: list[str], relative: list[float]) -> None:
    hashes = np.array([int.from_bytes(hash8(u), "big") for u in urls], dtype=np.uint64)
    order = np.argsort(hashes)
    rel = np.asarray(relative, dtype=np.float64)[order]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("scores.tmp.npz")
    np.savez(tmp, format=np.array("linkscores"), version=np.array(1, dtype=np.int64),
             url_hash=hashes[order], linkrank=rel / len(urls), linkrank_relative=rel,
             trust=np.zeros(len(urls)), inlinks=np.zeros(len(urls), dtype=np.int32),
             outlinks=np.zeros(len(urls), dtype=np.int32), meta=np.array("{}"))
    os.replace(tmp, path)


def test_orderer_follows_each_new_score_file(tmp_path: Path) -> None:
    work = tmp_path / "work"
    bundle = work / "qs0" / "IndexData7"
    scores = work / "linkgraph" / "7" / "scores.npz"
    urls = [f"https://site.example/{i}" for i in range(30)]
    docs = [index_document(Doc(u, ("common", f"w{i}"))) for i, u in enumerate(urls)]
    writer = IndexBundleWriter(bundle, BundleConfig(max_partition_docs=10))
    clock = [0.0]
    orderer = IndexOrderer(bundle, scores, writer=writer, check_seconds=5.0,
                           clock=lambda: clock[0])
    writer.append(docs[:25])  # partitions 0 and 1 finished, 2 active
    assert orderer.step() is None  # no score file yet: normal, nothing to do
    _write_scores(scores, urls, [0.0] * 9 + [50.0] + [0.0] * 10 + [80.0] + [0.0] * 9)
    clock[0] += 1.0
    assert orderer.step() is None  # checked a second ago: not looked at again yet
    clock[0] += 5.0
    done = [orderer.step(), orderer.step()]
    assert [r.partition for r in done if r] == [0, 1] and orderer.step() is None
    with IndexBundleReader(bundle) as reader:
        assert reader.doc_map(0).doc_id(0)[:8] == hash8(urls[9])
        assert reader.doc_map(1).doc_id(0)[:8] == hash8(urls[10])  # no scored page: as crawled
    writer.append(docs[25:])
    writer.close_partition()  # the crawl ended: its last partition is finished
    writer.close()
    offline = IndexOrderer(bundle, scores)  # the queue server after the crawl: takes the lock
    assert [r.partition for r in offline.run()] == [2]
    with IndexBundleReader(bundle) as reader:
        assert reader.doc_map(2).doc_id(0)[:8] == hash8(urls[20])
    tag = scores_tag(scores)
    assert tag is not None and partitions_to_reorder(bundle, tag) == []
    time.sleep(0.01)
    _write_scores(scores, urls, [0.0] * 29 + [90.0])  # a new generation of scores
    assert [r.partition for r in offline.run()] == [0, 1, 2]
    with IndexBundleReader(bundle) as reader:
        assert first_doc_ids(reader, "common", 1) == [hash8(urls[0])]  # partition 0 comes first
        assert reader.doc_map(2).doc_id(0)[:8] == hash8(urls[29])
    assert verify_bundle(bundle).ok


def _ended_bundle(work: Path, urls: list[str]) -> Path:
    bundle = work / "qs0" / "IndexData8"
    docs = [index_document(Doc(u, ("common", f"w{i}"))) for i, u in enumerate(urls)]
    with IndexBundleWriter(bundle, BundleConfig(max_partition_docs=10)) as writer:
        writer.append(docs)
        writer.close_partition()
    DictionaryUpdater(bundle).update()  # partitions merged: the re-order re-merges them
    return bundle


def test_an_ended_bundle_is_reordered_in_worker_processes_as_in_one(tmp_path: Path) -> None:
    urls = [f"https://site.example/{i}" for i in range(40)]
    relative = [0.0] * 40
    relative[7], relative[15], relative[38] = 50.0, 80.0, 90.0
    firsts, lexicons = {}, {}
    for processes in (1, 2):
        work = tmp_path / f"p{processes}"
        bundle = _ended_bundle(work, urls)
        scores = work / "linkgraph" / "8" / "scores.npz"
        _write_scores(scores, urls, relative)
        done = reorder_ended_bundle(bundle, scores, processes)
        assert sorted(r.partition for r in done) == [0, 1, 2, 3]
        assert partitions_to_reorder(bundle, scores_tag(scores)) == []
        assert reorder_ended_bundle(bundle, scores, processes) == []  # nothing left
        with IndexBundleReader(bundle) as reader:
            firsts[processes] = [reader.doc_map(p).doc_id(0)[:8] for p in range(4)]
            assert first_doc_ids(reader, "w38", 2) == [hash8(urls[38])]
        assert verify_bundle(bundle).ok
        # the phrase lexicon, counted while the workers re-order, is current
        lexicons[processes] = phrases_path(bundle).read_bytes()
        assert phrases_path(bundle).stat().st_mtime_ns >= scores.stat().st_mtime_ns
    assert firsts[1] == firsts[2] == [hash8(urls[7]), hash8(urls[15]), hash8(urls[20]),
                                      hash8(urls[38])]
    assert lexicons[1] == lexicons[2]
