"""A small index whose pages were fetched at two times: today and in November 2023, for the
search settings' time period (``date:`` words, ranking.core.query.periods). Built with the
crawler's own page processor and index writer, as tests/web/test_search_page.py's site."""

from __future__ import annotations

import time
from pathlib import Path

from crawler.core.processing.indexing import batch_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import IndexBundleWriter

ITS = 1_700_000_100
OLD_FETCH = 1_700_000_000.0  # 2023-11-14


def _html(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><title>{title}</title></head>'
            f"<body><h1>{title}</h1><p>{body}</p></body></html>")


def dated_pages(now: float) -> list[tuple[str, str, float]]:
    """(url, HTML, fetch time): 12 lighthouse pages fetched ``now``, 3 fetched in 2023."""
    pages = [(f"http://new.example.test/keeper/{i}.html",
              _html(f"Lighthouse keeper diary {i}",
                    f"The lighthouse keeper writes about the lamp and the fog, entry {i}."), now)
             for i in range(12)]
    pages += [(f"http://old.example.test/history/{i}.html",
               _html(f"Lighthouse history {i}",
                     f"An old lighthouse history of the coast and its lamp, chapter {i}."),
               OLD_FETCH) for i in range(3)]
    return pages


def build_dated_index(work: Path, now: float | None = None) -> Path:
    processor = PageProcessor()
    processed = [processor.process(FetchedPage(url, body.encode(), 200,
                                               {"Content-Type": "text/html; charset=utf-8"},
                                               fetched_at=fetched))
                 for url, body, fetched in dated_pages(time.time() if now is None else now)]
    path = work / "qs0" / f"IndexData{ITS}"
    with IndexBundleWriter(path) as writer:
        writer.append(batch_documents(processed))
    return path
