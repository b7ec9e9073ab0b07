"""When a queue server says it is done: settled means idle and every applied document
searchable, so the link analysis that starts when the crawl ends reads them all."""

from __future__ import annotations

from crawler.core.definition.crawl import CrawlConfig, SeedSpec
from crawler.core.processing.indexing import to_index_documents
from crawler.core.queue_server.config import QueueServerConfig
from crawler.core.queue_server.server import QueueServerCore
from crawler.core.transport.wire import document_to_wire
from indexer.core.bundle.reader import IndexBundleReader

from .helpers import html
from .test_queue_server_stalls import FAST, put


def test_a_settled_queue_server_has_made_every_applied_document_searchable(tmp_path) -> None:
    """The crawl ends when its queue servers have settled, and link analysis reads their
    indexes at once: a document applied but not yet refreshed would be missing from the web
    graph (refreshes are spaced out on a busy machine)."""
    crawl = CrawlConfig(crawl_id=1, timestamp=1700000000, name="t", seeds=(SeedSpec(FAST + "/"),))
    core = QueueServerCore(QueueServerConfig(0, 1, tmp_path, crawl, schedule_size=50,
                                             refresh_seconds=3600.0))
    try:
        core.add_seeds([FAST + "/"])
        put(core, robots=[{"origin": FAST, "status": 404, "body": None}])
        (schedule,) = core.take_schedules()
        core.maybe_refresh(force=True)
        docs = [document_to_wire(d) for d in to_index_documents(html("<title>Last</title>"))]
        put(core, schedule=schedule.id, done=True, docs=docs)
        assert not core.maybe_refresh()  # an hour between refreshes: not searchable yet
        index = core.paths["index"]
        assert IndexBundleReader(index).collection_stats().documents == 0
        assert core.settled()
        assert IndexBundleReader(index).collection_stats().documents == len(docs)
    finally:
        core.close()
