"""An archive crawl's documents are stored in the archive's order whatever order its
schedules' batches arrive in: a queue server (the real core) hands out three schedules, real
archive workers process them, and their batches reach the inbox last schedule first; the
early ones are held, and the schedules whose last batch is held no longer count against the
schedules kept out, so the fetchers never wait for the order."""

from __future__ import annotations

import json

from warcio.warcwriter import WARCWriter

from crawler.core.archive.worker import ArchiveWorker
from crawler.core.processing.process import PageProcessor
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from indexer.core.bundle.layout import DOCUMENTS
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.documents.store import PartitionDocumentBundle
from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.runtime.workdir import queue_server_dir
from tests.integration.archive.helpers import crawl_config, html, response, warc_source

TS = 1_700_000_800


def test_batches_are_applied_in_schedule_order(tmp_path):
    warc = tmp_path / "order.warc.gz"
    with open(warc, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for i in range(12):
            writer.write_record(response(writer, f"http://order.test/{i}.html",
                                         html(f"Page {i}", f"Text of page number {i}.")))
    crawl = crawl_config(TS, warc_source(warc))
    core = QueueServerCore(QueueServerConfig(0, 1, queue_server_dir(tmp_path, 0), crawl,
                                             refresh_seconds=0.0, max_outstanding=3,
                                             schedule_size=3))
    try:
        schedules = core.take_schedules()
        assert [s.seq for s in schedules] == [1, 2, 3]
        batches = {s.seq: process(crawl, s) for s in schedules}
        for seq in (3, 2):  # the later schedules come in first
            for batch in batches[seq]:
                core.spool.put("batch", json.dumps(batch.to_wire()).encode())
        assert core.ingest(limit=None) == 0  # held: schedule 1 is not done
        assert core.inbox.pending() == len(batches[3]) + len(batches[2])
        assert core.inbox.finished() == 2
        (fourth,) = core.take_schedules()  # only one is out working: the rest may go
        assert fourth.seq == 4 and core.take_schedules() == []  # no record is left
        batches[4] = process(crawl, fourth)
        for batch in batches[1] + batches[4]:
            core.spool.put("batch", json.dumps(batch.to_wire()).encode())
        assert core.ingest(limit=None) == sum(len(b) for b in batches.values())
        assert core.inbox.pending() == 0 and core.queue.outstanding() == []
        assert core.idle()
        core.maybe_refresh(force=True)
    finally:
        core.close(finish=True)
    bundle = queue_server_dir(tmp_path, 0) / f"IndexData{TS}"
    documents = PartitionDocumentBundle(bundle / DOCUMENTS)
    reader = IndexBundleReader(bundle)
    urls = [reader.summary(r.doc_id)["url"] for n in range(len(documents.partitions))
            for r in documents.read_records(n) if r.doc_id[DOC_TYPE] == DocType.PAGE]
    assert urls == [f"http://order.test/{i}.html" for i in range(12)]


def process(crawl, schedule) -> list:
    """The batches a real archive worker ships for ``schedule``: one per page here, the last
    marked done."""
    shipped: list = []
    worker = ArchiveWorker(crawl, PageProcessor(), 1,
                           lambda server, batch: shipped.append(batch), ship_every=1)
    try:
        worker.run(schedule, schedule.pointers, 0)
    finally:
        worker.close()
    assert len(shipped) >= 3 and shipped[-1].done
    return shipped
