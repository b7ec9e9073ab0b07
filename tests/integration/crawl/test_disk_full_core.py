"""A full disk, for real (a small tmpfs filled by a filler file), under the parts that write:
a write that fails leaves no temporary file, the inbox keeps nothing half-written, a queue
server keeps the batch it could not apply and applies it once space returns, and the
dictionary updater waits for space instead of dying."""

from __future__ import annotations

import errno
import json
import logging
import threading
import time

import pytest

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.processing.indexing import to_index_documents
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.scheduler.durable.storage import write_blob
from crawler.core.transport.spool import Spool
from crawler.core.transport.wire import document_to_wire
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.verify import verify_bundle
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater
from indexer.core.files.storage import atomic_write, atomic_write_many
from indexer.core.text import TextAnalyzer
from tests.fixtures.sites import unique_word
from tests.fixtures.small_fs import Filler, leftover_temporaries, small_filesystem
from tests.unit.crawler.helpers import html

SITE = "https://disk.example"
BIG = b"x" * 200_000  # more than any slack a filled filesystem has left in its last pages


@pytest.fixture
def full_disk(tmp_path):
    """(root of a 40 MB filesystem, its filler): the test decides when to fill it."""
    with small_filesystem(tmp_path / "small", 40) as root:
        yield root, Filler(root / "filler")


def out_of_space(excinfo) -> bool:
    return excinfo.value.errno in (errno.ENOSPC, errno.EDQUOT)


@pytest.mark.parametrize("write", [
    lambda d: atomic_write(d / "file", BIG),
    lambda d: atomic_write_many(d, {"a": b"small", "b": BIG}),
    lambda d: write_blob(d / "state.1.bin", b"YPYQSTAT", 1, BIG),
])
def test_an_atomic_write_that_finds_the_disk_full_leaves_nothing(full_disk, write) -> None:
    root, filler = full_disk
    folder = root / "files"
    folder.mkdir()
    filler.fill()
    with pytest.raises(OSError) as excinfo:
        write(folder)
    assert out_of_space(excinfo)
    assert sorted(p.name for p in folder.iterdir()) == []


def test_the_inbox_stores_all_or_nothing(full_disk) -> None:
    root, filler = full_disk
    spool = Spool(root / "inbox")
    spool.put("batch", b"before")
    filler.fill()
    with pytest.raises(OSError) as excinfo:
        spool.put("batch", BIG)
    assert out_of_space(excinfo)
    assert leftover_temporaries(root) == []
    assert [item.payload for item in spool.take("batch")] == [b"before"]
    filler.remove()
    spool.put("batch", BIG)
    assert [item.payload for item in spool.take("batch")] == [b"before", BIG]


def crawl_config() -> CrawlConfig:
    return CrawlConfig(crawl_id=1, timestamp=1700000000, name="t", seeds=(SeedSpec(SITE + "/"),))


def open_core(directory) -> QueueServerCore:
    return QueueServerCore(QueueServerConfig(0, 1, directory, crawl_config(), schedule_size=50,
                                             refresh_seconds=0.0))


def batch(**fields) -> bytes:
    data = {"crawl": 1700000000, "server": 0, "schedule": None, "done": False, "docs": [],
            "discovered": [], "robots": [], "host_errors": {}, "fetched": [], "counters": {}}
    data.update(fields)
    return json.dumps(data).encode()


def page_docs(words: list[str]) -> list[dict]:
    docs = []
    for i, word in enumerate(words):
        page = html(f"<title>Page {i}</title><p>{word} {'filler text ' * 4000}</p>",
                    url=f"{SITE}/{i}.html")
        docs += [document_to_wire(d) for d in to_index_documents(page)]
    return docs


def docs_with(index_dir, word: str) -> int:
    (term,) = TextAnalyzer().query_terms(word, "en")
    with IndexBundleReader(index_dir) as reader:
        return reader.term_stats(term).docs


def test_a_queue_server_keeps_the_batch_it_cannot_apply(full_disk) -> None:
    root, filler = full_disk
    directory = root / "qs0"
    core = open_core(directory)
    core.add_seeds([SITE + "/"])
    core.spool.put("batch", batch(robots=[{"origin": SITE, "status": 404, "body": None}]))
    assert core.ingest() == 1
    (schedule,) = core.take_schedules()
    words = [unique_word("disk", i) for i in range(3)]
    core.spool.put("batch", batch(schedule=schedule.id, done=True, docs=page_docs(words),
                                  counters={"pages_fetched": 3}))
    filler.fill()
    before = dict(core.counters)
    with pytest.raises(OSError) as excinfo:
        core.ingest()
    assert out_of_space(excinfo)
    assert core.counters == before  # the failed batch counts for nothing
    assert core.spool.pending("batch") == 1  # and is still in the inbox
    core.abandon()
    assert leftover_temporaries(root) == []
    filler.remove()
    core = open_core(directory)  # recovers from disk, as after a kill -9
    try:
        assert core.ingest() == 1 and core.spool.pending("batch") == 0
        assert core.counters["pages_fetched"] == 3
        assert core.queue.outstanding() == []  # the schedule's acknowledgement came through
    finally:
        core.close()
    index = directory / "IndexData1700000000"
    assert all(docs_with(index, word) == 1 for word in words)
    assert verify_bundle(index).ok
    assert leftover_temporaries(root) == []


def closed_partition_bundle(path, words) -> None:
    writer = IndexBundleWriter(path, BundleConfig(max_partition_docs=1000, refresh_every_docs=0))
    try:
        docs = []
        for i, word in enumerate(words):
            docs += to_index_documents(html(f"<title>T{i}</title><p>{word}</p>",
                                            url=f"{SITE}/{i}.html"))
        writer.append(docs)
        writer.close_partition()
    finally:
        writer.close()


def test_the_dictionary_updater_waits_for_space(full_disk, caplog) -> None:
    root, filler = full_disk
    bundle = root / "IndexData1"
    words = [unique_word("dictionary", i) for i in range(5)]
    closed_partition_bundle(bundle, words)
    updater = DictionaryUpdater(bundle)
    assert updater.pending() == [0]
    filler.fill()
    with pytest.raises(OSError) as excinfo:
        updater.update()
    assert out_of_space(excinfo)
    assert updater.pending() == [0]
    assert sorted(p.name for p in (bundle / "dictionary").iterdir()) == ["LOCK"]
    assert leftover_temporaries(root) == []
    # the running updater: it logs the failure, keeps going, and merges once space returns
    stop = threading.Event()
    failures = []
    caplog.set_level(logging.WARNING, logger="indexer.core.dictionary.updater")
    thread = threading.Thread(target=lambda: _run(updater, stop, failures), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not any("out of space" in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline and thread.is_alive(), failures
            time.sleep(0.02)
        filler.remove()
        while updater.pending():
            assert time.monotonic() < deadline and thread.is_alive(), failures
            time.sleep(0.02)
    finally:
        stop.set()
        thread.join(timeout=10)
    assert failures == []
    assert all(docs_with(bundle, word) == 1 for word in words)
    assert verify_bundle(bundle).ok
    assert leftover_temporaries(root) == []


def _run(updater: DictionaryUpdater, stop: threading.Event, failures: list) -> None:
    try:
        updater.run_forever(poll_seconds=0.05, stop=stop)
    except BaseException as exc:  # reported by the test: the updater must not die
        failures.append(repr(exc))
