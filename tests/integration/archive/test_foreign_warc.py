"""An archive crawl of a WARC file another tool wrote (here: warcio itself, the way capture
tools write responses: chunked, gzip-coded, with request, metadata and warcinfo records, a
revisit, a resource record), and then its pages found through the search page."""

from __future__ import annotations

import pytest

from crawler.core.archive.source import ArchiveKind, ArchiveSource
from tests.integration.archive.helpers import (
    crawl_config,
    html,
    response,
    run,
    search,
)

pytestmark = pytest.mark.django_db


def write_foreign(path) -> None:
    from io import BytesIO

    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=True, warc_version="1.0")
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "other"}))
        home = html("Foreign home", "The marmalade archive starts here. "
                    '<a href="http://foreign.test/jam.html">quince preserves</a>')
        first = response(writer, "http://foreign.test/", home, chunked=True)
        request = writer.create_warc_record(
            "http://foreign.test/", "request", payload=BytesIO(b"GET / HTTP/1.1\r\n"
                                                               b"Host: foreign.test\r\n\r\n"))
        writer.write_request_response_pair(request, first)
        writer.write_record(response(writer, "http://foreign.test/jam.html", html(
            "Jam", "Quince and damson conserves are boiled slowly."), gzipped=True))
        same = html("Copied page", "A page about gooseberry fool, captured twice.")
        original = response(writer, "http://foreign.test/fool.html", same)
        writer.write_record(original)
        digest = original.rec_headers.get_header("WARC-Payload-Digest")
        writer.write_record(writer.create_revisit_record(
            "http://foreign.test/fool-again.html", digest, "http://foreign.test/fool.html",
            "2024-05-01T10:00:00Z"))
        writer.write_record(writer.create_warc_record(
            "http://foreign.test/notes.txt", "resource", payload=BytesIO(
                b"Plain notes about elderflower cordial."), warc_content_type="text/plain"))
        writer.write_record(writer.create_warc_record(
            "http://foreign.test/", "metadata", payload=BytesIO(b"via: nowhere\r\n"),
            warc_content_type="application/warc-fields"))


def test_a_foreign_warc_is_crawled_and_its_pages_are_searchable(client, work):
    warc = work / "in" / "foreign.warc.gz"
    warc.parent.mkdir()
    write_foreign(warc)
    source = ArchiveSource(ArchiveKind.WARC, str(warc.parent))  # a folder of WARC files
    result = run(work, crawl_config(1_700_000_100, source))
    assert result.finished
    stats = result.stats[0]
    assert stats["archive_skipped"] == {}
    assert stats["archive_other"] == {"warcinfo": 1, "request": 1, "metadata": 1}
    assert result.pages_fetched == 5
    assert search(client, "marmalade") == ["http://foreign.test/"]  # chunked body
    assert search(client, "damson") == ["http://foreign.test/jam.html"]  # gzip coding
    assert search(client, "elderflower") == ["http://foreign.test/notes.txt"]  # resource
    # the revisit has its original's payload: the same text, so one result of the two urls
    assert set(search(client, "gooseberry")) <= {"http://foreign.test/fool.html",
                                                 "http://foreign.test/fool-again.html"}
    assert search(client, "gooseberry")
    # anchor text of a link in the archive is indexed for its target, as in a web crawl
    assert "http://foreign.test/jam.html" in search(client, "quince")
