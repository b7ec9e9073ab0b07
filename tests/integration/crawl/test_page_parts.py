"""A page shipped in parts is stored whole: its queue server holds a partial batch until the
rest of the page comes, and a batch of another fetcher that arrives in between is stored
before the page, never inside it (crawler.core.queue_server.page_parts). The real queue server core
and
real documents made by the page processor."""

from __future__ import annotations

import base64
import json

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.processing.indexing import iter_index_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.transport.batch import FetcherBatch
from crawler.core.transport.wire import encoded_document_to_wire
from indexer.core.bundle.layout import DOCUMENTS
from indexer.core.documents.store import PartitionDocumentBundle
from indexer.core.runtime.workdir import queue_server_dir

TS = 1_700_000_900


def documents(url: str, links: int) -> list[dict]:
    anchors = "".join(f'<a href="/target{i}.html">target number {i}</a> ' for i in range(links))
    page = PageProcessor().process(FetchedPage(url, (
        f"<html><title>{url}</title><body><p>Text of {url}.</p>{anchors}</body></html>"
    ).encode(), 200, {"content-type": "text/html"}))
    return [encoded_document_to_wire(d) for d in iter_index_documents(page)]


def put(core: QueueServerCore, batch: FetcherBatch) -> None:
    core.spool.put("batch", json.dumps(batch.to_wire()).encode())


def test_a_page_in_parts_is_stored_whole(tmp_path):
    crawl = CrawlConfig(crawl_id=1, timestamp=TS, name="parts",
                        seeds=(SeedSpec("http://a.test/"), SeedSpec("http://b.test/")))
    core = QueueServerCore(QueueServerConfig(0, 1, queue_server_dir(tmp_path, 0), crawl,
                                             refresh_seconds=0.0, max_outstanding=2,
                                             schedule_size=1))
    try:
        core.add_seeds(s.url for s in crawl.seeds)
        first, second = (s.id for s in core.take_schedules())
        big, small = documents("http://a.test/big.html", 6), documents("http://b.test/q.html", 2)
        put(core, FetcherBatch(TS, 0, first, partial=True, docs=tuple(big[:3])))
        put(core, FetcherBatch(TS, 0, second, docs=tuple(small)))  # another fetcher's
        assert core.ingest(limit=None) == 1 and core.inbox.pending() == 1
        assert not core.idle()
        put(core, FetcherBatch(TS, 0, first, partial=True, docs=tuple(big[3:5])))
        put(core, FetcherBatch(TS, 0, first, docs=tuple(big[5:])))
        assert core.ingest(limit=None) == 3 and core.inbox.pending() == 0
    finally:
        core.close(finish=True)
    stored = PartitionDocumentBundle(
        queue_server_dir(tmp_path, 0) / f"IndexData{TS}" / DOCUMENTS)
    order = [r.doc_id for n in range(len(stored.partitions)) for r in stored.read_records(n)]
    assert order == [base64.b64decode(d["id"]) for d in small + big]


def test_parts_left_waiting_are_applied_when_the_crawl_stops(tmp_path):
    crawl = CrawlConfig(crawl_id=1, timestamp=TS, name="parts",
                        seeds=(SeedSpec("http://a.test/"),))
    core = QueueServerCore(QueueServerConfig(0, 1, queue_server_dir(tmp_path, 0), crawl,
                                             refresh_seconds=0.0, schedule_size=1))
    try:
        core.add_seeds(s.url for s in crawl.seeds)
        (schedule,) = core.take_schedules()
        big = documents("http://a.test/big.html", 4)
        put(core, FetcherBatch(TS, 0, schedule.id, partial=True, docs=tuple(big[:2])))
        assert core.ingest(limit=None) == 0 and core.stats()["inbox"] == 1
    finally:
        core.close(finish=True)  # stopped: nothing that came is lost
    assert core.inbox.pending() == 0
    stored = PartitionDocumentBundle(
        queue_server_dir(tmp_path, 0) / f"IndexData{TS}" / DOCUMENTS)
    assert sum(state.docs for state in stored.partitions) == 2
