"""indexer.core.bundle.member_scan: every stored summary of a bundle read partition by
partition gives exactly what the one-document reader gives, damaged documents included."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from indexer.core.bundle.member_scan import iter_member_summaries
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.errors import CorruptIndexError
from indexer.core.ids import DOC_TYPE, DocType
from tests.unit.indexer.helpers import make_doc


def _bundle(path: Path) -> None:
    """Three partitions of pages and link documents; one page stored again two partitions
    later with a new summary; summaries the json module must read (an integer past 64 bits,
    which orjson reads as a float) and one with text outside ASCII."""
    docs = []
    for i in range(40):
        kind = DocType.LINK if i % 3 == 0 else DocType.PAGE
        doc = make_doc(i, doc_type=kind)
        if i == 7:
            doc = dataclasses.replace(doc, summary={**doc.summary, "big": 2 ** 70})
        if i == 8:
            doc = dataclasses.replace(doc, summary={**doc.summary, "title": "Grüße, 東京 ☃"})
        docs.append(doc)
    again = dataclasses.replace(make_doc(4), summary={"title": "newer", "url": docs[4].url})
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=16)) as writer:
        writer.append(docs[:16])
        writer.append(docs[16:32])
        writer.append(docs[32:] + [again])
        writer.close_partition()


def _one_by_one(reader: IndexBundleReader) -> list[tuple[int, bytes, object]]:
    """The reference: newest partition first, each doc id once, read by ``summary``."""
    out, seen = [], set()
    for part in reversed(reader.partitions):
        dm = reader.doc_map(part.number)
        for row in range(dm.m):
            doc_type = int(dm.member_ids[row, DOC_TYPE])
            doc_id = dm.member_ids[row].tobytes()
            if doc_type <= DocType.LOCATION and doc_id not in seen:
                seen.add(doc_id)
                out.append((doc_type, doc_id, reader.summary(doc_id)))
    return out


def test_every_summary_as_the_one_document_reader_gives_it(tmp_path: Path) -> None:
    _bundle(tmp_path / "b")
    with IndexBundleReader(tmp_path / "b") as reader:
        assert len(reader.partitions) >= 3
        expected = _one_by_one(reader)
        got = list(iter_member_summaries(reader))
    assert got == expected
    assert repr(got) == repr(expected)  # the same types too (an int is not a float)
    titles = [s["title"] for _, _, s in got]
    assert "newer" in titles and "title 4" not in titles  # the newest copy only
    assert [s["big"] for _, _, s in got if "big" in s] == [2 ** 70]
    assert all(type(s["big"]) is int for _, _, s in got if "big" in s)
    assert "Grüße, 東京 ☃" in titles


def test_a_damaged_document_is_reported_as_the_reader_reports_it(tmp_path: Path) -> None:
    _bundle(tmp_path / "b")
    with IndexBundleReader(tmp_path / "b") as reader:
        part = reader.partitions[0]
        dm = reader.doc_map(part.number)
        path = reader.blob(part.number).path
        offset = int(dm.summary_offset[3]) + 5
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x55
    path.write_bytes(bytes(data))
    with IndexBundleReader(tmp_path / "b") as reader:
        with pytest.raises(CorruptIndexError, match="checksum"):
            _one_by_one(reader)
        with pytest.raises(CorruptIndexError, match="checksum"):
            list(iter_member_summaries(reader))
