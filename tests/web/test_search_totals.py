"""Result totals that count what can be shown (issue 39, item 5): a query whose matches are
mostly links to pages never crawled (anchor text only) no longer promises pages of results
that are empty, in the page's count, its page links, and the JSON ``total``; the index line
counts pages, not the link documents beside them. Through the test client over a bundle the
crawler's own page processor built."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crawler.core.processing.indexing import batch_documents
from crawler.core.processing.page import FetchedPage
from crawler.core.processing.process import PageProcessor
from indexer.core.bundle.writer import IndexBundleWriter
from ranking.search_service import search_service

ITS = 1_700_000_500
PAGES = 7
OUT_LINKS = 4


def zephyr_site() -> dict[str, str]:
    """7 pages about zephyrs, each linking (anchor text "zephyr notes") to 4 pages on hosts
    that were never crawled: 28 link-only matches beside the 7 pages."""
    pages = {}
    for i in range(PAGES):
        links = "".join(f'<a href="http://far{i}-{j}.example.test/z.html">zephyr notes {j}</a> '
                        for j in range(OUT_LINKS))
        pages[f"http://wind.example.test/{i}.html"] = (
            f'<!doctype html><html lang="en"><head><title>Zephyr winds {i}</title></head>'
            f"<body><h1>Zephyr winds {i}</h1><p>A zephyr is a light west wind, part {i}."
            f"</p><p>{links}</p></body></html>")
    return pages


def build_index(work: Path) -> None:
    processor = PageProcessor()
    processed = [processor.process(FetchedPage(url, body.encode(), 200,
                                               {"Content-Type": "text/html; charset=utf-8"},
                                               fetched_at=1_700_000_000.0))
                 for url, body in zephyr_site().items()]
    with IndexBundleWriter(work / "qs0" / f"IndexData{ITS}") as writer:
        writer.append(batch_documents(processed))


@pytest.fixture
def zephyr(tmp_path, settings, db):
    settings.WORK_DIRECTORY = tmp_path
    settings.SEARCH_REMOTE_QUEUE_SERVERS = ()
    build_index(tmp_path)
    yield tmp_path
    search_service().pool.close()


def page_links(html: str) -> list[str]:
    nav = re.search(r'<nav class="pages".*?</nav>', html, re.S)
    return re.findall(r'href="([^"]+)"', nav.group(0).replace("&amp;", "&")) if nav else []


def test_short_first_page_says_exactly_how_many_and_links_no_other_page(client, zephyr):
    html = client.get("/", {"q": "zephyr"}).content.decode()
    assert html.count('class="result"') == PAGES
    assert f"Results 1–{PAGES} of {PAGES} (" in html
    assert page_links(html) == []
    data = client.get("/", {"q": "zephyr", "f": "json"}).json()
    assert len(data["results"]) == PAGES and data["total"] == PAGES


@pytest.mark.parametrize("num", [2, 3, 5])
def test_every_page_linked_has_results(client, zephyr, num):
    """Page through every page the numbered links and Next reach: none is empty, and the
    JSON total is the number of results seen on them."""
    seen: list[str] = []
    todo = [f"/?q=zephyr&num={num}"]
    visited: set[str] = set()
    while todo:
        url = todo.pop()
        if url in visited:
            continue
        visited.add(url)
        response = client.get(url)
        assert response.status_code == 200
        html = response.content.decode()
        shown = html.count('class="result"')
        assert shown, f"{url} links to an empty page"
        seen.extend(re.findall(r'<a class="url" href="([^"]+)"', html) or [url] * shown)
        todo.extend(link for link in page_links(html) if link not in visited)
        total = client.get(url + "&f=json").json()["total"]
        assert total == PAGES, (url, total)
    assert len(visited) == -(-PAGES // num)


def test_index_line_counts_pages_not_link_documents(client, zephyr):
    html = client.get("/", {"q": "zephyr"}).content.decode()
    line = re.search(r'id="index-line">([^<]*)<', html).group(1)
    assert line.endswith(f"· {PAGES} pages"), line
    assert client.get("/", {"q": "zephyr", "f": "json"}).json()["index"]["pages"] == PAGES


def test_a_page_past_the_end_links_back_only_to_pages_with_results(client, zephyr):
    html = client.get("/", {"q": "zephyr", "num": "5", "limit": "20"}).content.decode()
    assert "No results on this page" in html
    back = re.search(r'<a href="([^"]+)" rel="prev" id="prev-page">', html)
    assert back, "no way back to the results"
    last = client.get(back.group(1).replace("&amp;", "&")).content.decode()
    assert last.count('class="result"') == PAGES % 5 and "Results 6–7 of 7 (" in last
    assert client.get("/?q=zephyr&num=5&limit=20&f=json").json()["total"] == PAGES
