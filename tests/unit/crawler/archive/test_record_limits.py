"""A fetcher reads a WARC record in bounded memory (crawler.core.archive.records, issue 34
item 3): a pointer to a record larger than the source's cap is refused without being read,
and of a record longer than the reader's prefix only that prefix is inflated (or read, in a
plain ``.warc``), which holds its payload's byte range."""

from __future__ import annotations

import gzip
import tracemalloc

import pytest

from crawler.core.archive import skipped
from crawler.core.archive.listing import Listed, WarcListing
from crawler.core.archive.records import RecordReader
from crawler.core.archive.source import ArchiveKind, ArchiveSource
from crawler.core.archive.stored import RecordSkipped
from tests.integration.archive.helpers import builder, html, record_bytes, response

BODY = 24 << 20  # bytes of the long page: far more than a reader with a small range reads
BYTE_RANGE = 10_000


def write(path, records: list[bytes]) -> None:
    if path.name.endswith(".gz"):
        path.write_bytes(b"".join(gzip.compress(r, 1) for r in records))
    else:
        path.write_bytes(b"".join(records))


def pointers(source: ArchiveSource) -> dict[str, object]:
    items = WarcListing(source, source.warc_files(), (0, 0, 0)).items()
    return {item.url: item.pointer for item in items if isinstance(item, Listed)}


def test_a_pointer_to_a_record_over_the_cap_is_refused_unread(tmp_path) -> None:
    small = record_bytes(response(builder(), "http://cap.test/small", html("S", "small")))
    large = record_bytes(response(builder(), "http://cap.test/large",
                                  html("L", "large " * 2_000)))
    write(tmp_path / "a.warc.gz", [small, large])
    listed = pointers(ArchiveSource(ArchiveKind.WARC, str(tmp_path)))  # no cap to speak of
    capped = ArchiveSource(ArchiveKind.WARC, str(tmp_path), max_record_bytes=len(small) + 10)
    reader = RecordReader(capped, BYTE_RANGE)
    try:
        assert reader.read(listed["http://cap.test/small"]).status == 200
        with pytest.raises(RecordSkipped) as refused:  # a pointer from the wire is not trusted
            reader.read(listed["http://cap.test/large"])
        assert refused.value.reason == skipped.TOO_LARGE
    finally:
        reader.close()
    assert set(pointers(capped)) == {"http://cap.test/small"}  # nor is it listed


@pytest.mark.parametrize("name", ["long.warc.gz", "long.warc"])
def test_a_long_record_is_read_only_as_far_as_its_byte_range_needs(tmp_path, name) -> None:
    body = html("Long", "longword") + b"x" * BODY
    records = [record_bytes(response(builder(), "http://cap.test/long", body)),
               record_bytes(response(builder(), "http://cap.test/after", html("A", "after")))]
    write(tmp_path / name, records)
    source = ArchiveSource(ArchiveKind.WARC, str(tmp_path))
    listed = pointers(source)
    reader = RecordReader(source, BYTE_RANGE)
    tracemalloc.start()
    try:
        page = reader.read(listed["http://cap.test/long"])
        _, peak = tracemalloc.get_traced_memory()
        after = reader.read(listed["http://cap.test/after"])
    finally:
        tracemalloc.stop()
        reader.close()
    assert page.body == body[:BYTE_RANGE]
    assert b"after" in after.body
    assert peak < 4 << 20, peak  # the prefix (1 MiB + 2 byte ranges), not the 24 MB record
