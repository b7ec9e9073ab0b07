"""A result's "Inlinks" and keyword "Similar" links leave the page itself out (issue 39, item
10: both listed it: its link to itself, its own keywords). Through the test client over a
bundle the crawler's own page processor built, following the links the page shows."""

from __future__ import annotations

import html
import re

import pytest

from crawler.core.processing.indexing import batch_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import IndexBundleWriter
from ranking.search_service import search_service

HOME = "http://orchard.example.test/"
PAGES = {
    HOME: ("Orchard quinces", '<a href="/">quince orchard home</a> <a href="/b.html">pears</a>'),
    HOME + "b.html": ("Orchard pears", '<a href="/">quince orchard home</a>'),
    HOME + "c.html": ("Orchard quince jelly", '<a href="/">quince orchard home</a>'),
}


@pytest.fixture
def orchard(tmp_path, settings, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    processor = PageProcessor()
    processed = [processor.process(FetchedPage(
        url, (f'<!doctype html><html lang="en"><head><title>{title}</title></head><body>'
              f"<p>{title}: quince orchard notes, quince trees and pear trees.</p>{links}"
              "</body></html>").encode(), 200, {"Content-Type": "text/html; charset=utf-8"},
        fetched_at=1_700_000_000.0)) for url, (title, links) in PAGES.items()]
    with IndexBundleWriter(tmp_path / "qs0" / "IndexData1700000900") as writer:
        writer.append(batch_documents(processed))
    yield
    search_service().pool.close()


def link_of(page: str, url: str, kind: str) -> str:
    """The href of ``kind`` ("Inlinks", "Similar") in the result of ``url``."""
    result = re.search(rf'<article[^>]*>(?:(?!</article>).)*?href="{re.escape(url)}"'
                       r"(?:(?!</article>).)*</article>", page, re.S)
    assert result, f"no result for {url}"
    found = re.search(rf'<a href="([^"]+)" class="[a-z-]+">{kind}</a>', result.group(0))
    assert found, f"no {kind} link"
    return html.unescape(found.group(1))


def result_urls(client, href: str) -> list[str]:
    return [r["url"] for r in client.get(href + "&f=json").json()["results"]]


def test_inlinks_and_similar_leave_the_page_itself_out(client, orchard):
    page = client.get("/", {"q": "quince"}).content.decode()
    inlinks = result_urls(client, link_of(page, HOME, "Inlinks"))
    assert HOME not in inlinks and sorted(inlinks) == [HOME + "b.html", HOME + "c.html"]
    similar = result_urls(client, link_of(page, HOME, "Similar"))
    assert similar and HOME not in similar
