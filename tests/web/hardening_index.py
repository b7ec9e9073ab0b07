"""A small index for the issue 18 hardening tests: the fixture site of
:mod:`tests.web.test_search_page` plus extra pages, written by the crawler's own page processor
and the engine's own bundle writer."""

from __future__ import annotations

from pathlib import Path

from crawler.core.processing.indexing import batch_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import IndexBundleWriter
from tests.web.test_search_page import FETCHED_AT, ITS, site_pages


def build_index(work: Path, extra: dict[str, str], its: int = ITS) -> Path:
    """Write ``<work>/qs0/IndexData<its>`` from the fixture site and ``extra`` (url -> HTML)."""
    processor = PageProcessor()
    pages = {**site_pages(), **extra}
    processed = [processor.process(FetchedPage(url, body.encode(), 200,
                                               {"Content-Type": "text/html; charset=utf-8"},
                                               fetched_at=FETCHED_AT))
                 for url, body in pages.items()]
    path = work / "qs0" / f"IndexData{its}"
    with IndexBundleWriter(path) as writer:
        writer.append(batch_documents(processed))
    return path
