"""An archive crawl through the engine's real processes and the admin's lifecycle: a queue
server (``manage.py run_queue_server``) with its inbox worker, Celery fetcher workers on a real
Redis; the crawl is made, started, stopped, resumed and followed through the services and the
crawl's row, as the admin's buttons and status page do. The records are read by the fetchers
from schedules of pointers; a bad record is counted on the crawl's row."""

from __future__ import annotations

import gzip
import sqlite3
import time

import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.runtime.workdir import crawl_paths
from indexer.core.text import TextAnalyzer
from tests.fixtures.sites import unique_word
from tests.integration.archive.helpers import numbered_warc
from tests.integration.crawl.test_processes import Engine

pytestmark = [pytest.mark.redis, pytest.mark.slow]
PAGES = 1500


def write_warc(path) -> None:
    numbered_warc(path, "proc", PAGES, sentences=60)
    with open(path, "ab") as handle:
        handle.write(gzip.compress(b"WARC/1.0\r\nnot a header\r\n\r\n"))  # a bad record


def row(engine) -> dict:
    con = sqlite3.connect(f"file:{engine.tmp / 'db.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        con.row_factory = sqlite3.Row
        return dict(con.execute("select * from crawler_crawl").fetchone() or {})
    finally:
        con.close()


def wait(engine, test, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = row(engine)
        if test(current):
            return current
        time.sleep(0.2)
    pytest.fail(f"crawl still {row(engine)} after {timeout}s")


@pytest.mark.long
def test_archive_crawl_lifecycle_through_real_processes(tmp_path, redis_url):
    write_warc(tmp_path / "in.warc.gz")
    engine = Engine(tmp_path, redis_url)
    # small schedules, one out at a time: the crawl is still running when it is stopped
    engine.env.update({"DOWNLOAD_SIZE_INTERVAL": "10", "QUEUE_SERVER_MAX_SCHEDULES": "1",
                       "ARCHIVE_ROOTS": str(tmp_path)})
    try:
        engine.celery("inbox", "qs.0")
        engine.celery("fetch-a", "fetch", concurrency=2)
        engine.queue_server()
        engine.django(f"""
            import time
            from crawler import services
            from crawler.models import Crawl
            crawl = Crawl.objects.create(name="arc", source="warc",
                                         archive_path="{tmp_path / 'in.warc.gz'}",
                                         page_options=services.page_options_default_get())
            services.crawl_start(crawl.pk)
            deadline = time.monotonic() + 120
            while crawl.pages_fetched < 20 and time.monotonic() < deadline:
                time.sleep(0.05)
                crawl.refresh_from_db()
            services.crawl_stop(crawl.pk)  # the admin's Stop, while it runs
        """)
        stopped = wait(engine, lambda r: r["status"] == "resumable")
        assert 0 < stopped["pages_fetched"] < PAGES
        engine.django("from crawler import services; from crawler.models import Crawl; "
                      "services.crawl_resume(Crawl.objects.get().pk)")
        done = wait(engine, lambda r: r["status"] == "stopped")
    finally:
        engine.stop_all()
    assert PAGES <= done["pages_fetched"] <= PAGES + 2 * 10
    assert '"malformed"' in done["archive_skipped"] and '"count": 1' in done["archive_skipped"]
    assert done["documents_indexed"] >= PAGES and done["urls_seen"] == PAGES
    reader = IndexBundleReader(crawl_paths(tmp_path / "var" / "work" / "qs0",
                                           done["timestamp"])["index"])
    analyzer = TextAnalyzer()
    for i in range(PAGES):
        (term,) = analyzer.query_terms(unique_word("proc", i), "en")
        assert reader.term_stats(term).docs >= 1, i
