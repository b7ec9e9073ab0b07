"""An archive crawl stopped in the middle and resumed: its queue (where the listing of the
archive stopped, the schedules handed out) and counters are saved with it, and the resumed
crawl indexes every page, each record listed once."""

from __future__ import annotations

import json
import threading

from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.runtime.workdir import crawl_paths, queue_server_dir
from indexer.core.text import TextAnalyzer
from tests.fixtures.sites import unique_word
from tests.integration.archive.helpers import (
    bundle,
    crawl_config,
    numbered_warc,
    run,
    warc_source,
)

TS = 1_700_000_600
PAGES = 240


def test_a_stopped_archive_crawl_resumes_where_it_stopped(tmp_path):
    warc = tmp_path / "many.warc.gz"
    numbered_warc(warc, "many", PAGES)
    crawl = crawl_config(TS, warc_source(warc))
    stop = threading.Event()

    class StopAfterFivePages(PageProcessor):
        """Sets ``stop`` as the fifth record is processed, so the crawl is stopped in the middle
        however fast the machine is (a progress callback may come only after the end)."""

        processed = 0

        def process(self, page):
            StopAfterFivePages.processed += 1
            if StopAfterFivePages.processed >= 5:
                stop.set()
            return super().process(page)

    first = run(tmp_path, crawl, StopAfterFivePages(), stop=stop, schedule_size=10)
    assert not first.finished and 0 < first.pages_fetched < PAGES
    state = json.loads((crawl_paths(queue_server_dir(tmp_path, 0), TS)["queue"]
                        / "archive.json").read_text())
    assert state["listed"] < PAGES or state["outstanding"] or state["pending"]
    second = run(tmp_path, crawl, schedule_size=10)
    assert second.finished
    stats = second.stats[0]
    assert stats["archive_listed"] == PAGES and stats["archive_listing_done"]
    assert stats["archive_skipped"] == {}
    # counters carry on: every record read at least once over both runs
    assert PAGES <= stats["pages_fetched"] <= PAGES + 2 * 10
    reader = IndexBundleReader(bundle(tmp_path, TS))
    analyzer = TextAnalyzer()
    for i in range(PAGES):
        (term,) = analyzer.query_terms(unique_word("many", i), "en")
        assert reader.term_stats(term).docs >= 1, i
