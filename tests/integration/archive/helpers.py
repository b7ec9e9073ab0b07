"""Helpers of the archive-crawl tests: WARC files written with warcio as another tool writes
them, crawls run in one process (``LocalCrawl``: the queue server core, the fetcher workers,
the page processors, the indexer), and searches through the search view."""

from __future__ import annotations

import gzip
import threading
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.core.archive.source import ArchiveKind, ArchiveSource
from crawler.core.definition.crawl import CrawlConfig, CrawlTimeOptions, SeedSpec
from crawler.core.http import FetchConfig
from crawler.core.local_crawl import LocalCrawl, LocalCrawlResult
from crawler.core.processing.process import PageProcessor
from indexer.core.runtime.workdir import crawl_bundles
from tests.fixtures.sites import unique_word

FETCH = FetchConfig(allowed_networks=("127.0.0.0/8",), connect_timeout=2.0, read_timeout=2.0,
                    page_deadline=3.0)


def html(title: str, body: str, head: str = "") -> bytes:
    return (f"<!doctype html><html lang=\"en\"><head><title>{title}</title>{head}</head>"
            f"<body><h1>{title}</h1><p>{body}</p></body></html>").encode()


def response(writer: WARCWriter, url: str, body: bytes, *, status: str = "200 OK",
             headers: list[tuple[str, str]] | None = None, date: str = "2024-05-01T10:00:00Z",
             chunked: bool = False, gzipped: bool = False):
    """A response record of ``url`` as a capture tool writes it: the HTTP message as it came
    over the wire (chunked, gzip content coding) with its headers."""
    payload = gzip.compress(body) if gzipped else body
    fields = list(headers or [("Content-Type", "text/html; charset=utf-8")])
    if gzipped:
        fields.append(("Content-Encoding", "gzip"))
    if chunked:
        payload = b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload)
        fields.append(("Transfer-Encoding", "chunked"))
    else:
        fields.append(("Content-Length", str(len(payload))))
    http = StatusAndHeaders(status, fields, protocol="HTTP/1.1")
    return writer.create_warc_record(url, "response", payload=BytesIO(payload),
                                     length=len(payload), http_headers=http,
                                     warc_headers_dict={"WARC-Date": date})


def numbered_warc(path: Path, name: str, pages: int, sentences: int = 40) -> None:
    """A gzipped WARC file of ``pages`` pages ``http://<name>.test/<i>.html``, page ``i``
    holding ``unique_word(name, i)`` among ``sentences`` sentences of ordinary words."""
    filler = " ".join(f"sentence {i} about archived pages and their words."
                      for i in range(sentences))
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        for i in range(pages):
            writer.write_record(response(writer, f"http://{name}.test/{i}.html", html(
                f"Page {i}", f"{unique_word(name, i)} {filler}")))


def record_bytes(record, version: str = "1.0") -> bytes:
    """One record, uncompressed, as warcio writes it."""
    out = BytesIO()
    WARCWriter(out, gzip=False, warc_version=version).write_record(record)
    return out.getvalue()


def builder() -> WARCWriter:
    return WARCWriter(None, gzip=False, warc_version="1.0")


def crawl_config(timestamp: int, archive: ArchiveSource | None = None,
                 seeds: tuple[str, ...] = (), **options) -> CrawlConfig:
    return CrawlConfig(crawl_id=timestamp % 1000, timestamp=timestamp, name=f"t{timestamp}",
                       seeds=tuple(SeedSpec(u) for u in seeds), archive=archive,
                       page_options=CrawlTimeOptions(**options))


def run(work: Path, crawl: CrawlConfig, processor: PageProcessor | None = None,
        stop: threading.Event | None = None, progress=None, fetchers: int = 2,
        schedule_size: int = 5) -> LocalCrawlResult:
    """One crawl (web or archive) in this process, until it ends or ``stop`` is set; its
    queue servers are closed (saved) either way."""
    runner = LocalCrawl(crawl, work, FETCH, processor or PageProcessor(), num_servers=1,
                        fetchers=fetchers, schedule_size=schedule_size, refresh_seconds=0.0)
    try:
        return runner.run(max_seconds=60, progress=progress, stop=stop)
    finally:
        runner.close()


def warc_source(path: Path) -> ArchiveSource:
    return ArchiveSource(ArchiveKind.WARC, str(path))


def crawl_source(work: Path, timestamp: int) -> ArchiveSource:
    return ArchiveSource(ArchiveKind.CRAWL, str(work), timestamp)


def bundle(work: Path, timestamp: int) -> Path:
    (path,) = crawl_bundles(work, timestamp)
    return path


def search(client, query: str) -> list[str]:
    """The urls the search page answers ``query`` with (its JSON form)."""
    data = client.get("/", {"q": query, "f": "json"}).json()
    return [r["url"] for r in data["results"]]
