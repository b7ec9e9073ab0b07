"""Shared helpers for the page-processing tests."""

from __future__ import annotations

import os

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.page import FetchedPage, ProcessedPage
from crawler.core.processing.process import PageProcessor

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "pages")


def fixture(name: str) -> bytes:
    with open(os.path.join(FIXTURES, name), "rb") as handle:
        return handle.read()


def html(body: str | bytes, url: str = "https://example.com/page.html",
         config: PageProcessingConfig | None = None, **headers: str) -> ProcessedPage:
    data = body.encode("utf-8") if isinstance(body, str) else body
    all_headers = {"Content-Type": "text/html"}
    all_headers.update({k.replace("_", "-"): v for k, v in headers.items()})
    return PageProcessor(config).process(
        FetchedPage(url, data, 200, all_headers, fetched_at=1_700_000_000.0))
