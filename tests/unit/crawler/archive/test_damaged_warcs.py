"""WARC files damaged at random (cut short, bytes changed, inserted, dropped or repeated,
headers made wrong), gzipped per record and plain: listing them and reading every record
listed only ever lists, skips with a reason or counts another record; nothing raises
(crawler.core.archive.listing, .records: issue 21, "bad records ... never fatal")."""

from __future__ import annotations

import gzip
import random

import pytest

from crawler.core.archive.listing import Listed, Other, Skip, WarcListing
from crawler.core.archive.records import RecordReader
from crawler.core.archive.source import ArchiveKind, ArchiveSource
from crawler.core.archive.stored import RecordSkipped
from tests.integration.archive.helpers import numbered_warc

CASES = 60
HEADER_DAMAGE = ((b"Content-Length: ", b"Content-Length: 9"), (b"WARC/1.0", b"WARC/9.9"),
                 (b"HTTP/1.1 200", b"HTTP/1.1 2x0"), (b"\r\n\r\n", b"\r\n"))


def damaged(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data))
    end = min(len(data), at + rng.randrange(1, 500))
    kind = rng.randrange(6)
    if kind == 0:
        return data[:at]
    if kind == 1:
        out = bytearray(data)
        for _ in range(rng.randrange(1, 20)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if kind == 2:
        return data[:at] + rng.randbytes(rng.randrange(1, 200)) + data[at:]
    if kind == 3:
        return data[:at] + data[end:]
    if kind == 4:
        return data[:at] + data[at:end] + data[at:]
    for old, new in HEADER_DAMAGE:
        if rng.random() < 0.5:
            data = data.replace(old, new, 1)
    return data


@pytest.mark.parametrize("compressed", [True, False], ids=["gzip", "plain"])
def test_damaged_files_are_listed_and_read_without_an_error(tmp_path, compressed) -> None:
    numbered_warc(tmp_path / "good.warc.gz", "a", 12, sentences=5)
    good = (tmp_path / "good.warc.gz").read_bytes()
    original = good if compressed else gzip.decompress(good)
    rng = random.Random(21 + compressed)
    outcomes = {"pages": 0, "skipped": 0, "read": 0, "unreadable": 0}
    for case in range(CASES):
        folder = tmp_path / f"case{case}"
        folder.mkdir()
        data = damaged(original, rng)
        if rng.random() < 0.3:
            data = damaged(data, rng)
        (folder / ("x.warc.gz" if compressed else "x.warc")).write_bytes(data)
        source = ArchiveSource(ArchiveKind.WARC, str(folder))
        items = list(WarcListing(source, source.warc_files(), (0, 0, 0)).items())
        assert all(isinstance(item, Listed | Skip | Other) for item in items)
        reader = RecordReader(source, 1_000_000)
        try:
            for item in items:
                if isinstance(item, Skip):
                    outcomes["skipped"] += 1
                    assert item.reason and item.message
                if not isinstance(item, Listed):
                    continue
                outcomes["pages"] += 1
                try:
                    page = reader.read(item.pointer)
                except RecordSkipped as exc:
                    outcomes["unreadable"] += 1
                    assert exc.reason and exc.message
                else:
                    outcomes["read"] += 1
                    assert page.url.startswith("http://")
        finally:
            reader.close()
    # the damage left most records whole, and some records damaged: both paths were taken
    assert outcomes["read"] > CASES * 6, outcomes
    assert outcomes["skipped"] + outcomes["unreadable"] > 0, outcomes
