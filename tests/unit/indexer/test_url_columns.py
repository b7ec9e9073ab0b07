"""Url columns of a partition (indexer.core.partition.url_columns): written by the writer and by a
re-order, one row per doc_map entry holding its representative's url parts as the stored summary
gives them; a partition without them (made before them, or with a damaged file) reads as None."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.bundle.layout import (
    URL_COLUMNS,
    partition_dir,
    read_partition_manifest,
)
from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.reorder import reorder_partition
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.dictionary.updater import DictionaryUpdater
from indexer.core.ids import DocType, hash8
from indexer.core.partition.url_columns import UrlColumns, UrlParts, summary_url, url_parts
from tests.unit.indexer.helpers import make_doc
from tests.unit.ranking.helpers import Doc, index_document

URLS = [
    "https://www.ab-c.test/", "https://de.wikipedia.org/wiki/Gro%C3%9Fe_Stadt",
    "http://127.0.0.7/", "http://127.0.0.7/x/y.html", "https://bücher.example.de/Bücher/",
    "https://x.test/a_b/Running-Dogs.HTML", "https://x.test/index.php?q=1", "https://x.test/?q=2",
    "https://x.test/docs/file.tar.gz", "https://x.test/html", "https://x.test/a.b/c",
    "https://sub.x.co.uk/", "https://x.test/\ufdfa/page.htm", "https://x.test///",
]


def columns_of(reader: IndexBundleReader, number: int) -> UrlColumns:
    """The columns the partition's entries' summary heads give (what the shard read before)."""
    dm = reader.doc_map(number)
    return UrlColumns.of([url_parts(reader.summary_head(number, i)[0]) for i in range(dm.n)])


def assert_same(a: UrlColumns | None, b: UrlColumns) -> None:
    assert a is not None
    assert np.array_equal(a.flags, b.flags) and np.array_equal(a.slashes, b.slashes)
    for start, chunks in (("host_start", "host_chunks"), ("path_start", "path_chunks")):
        got = [[a.vocab[c] for c in getattr(a, chunks)[s:e]]
               for s, e in zip(getattr(a, start)[:-1], getattr(a, start)[1:], strict=True)]
        want = [[b.vocab[c] for c in getattr(b, chunks)[s:e]]
                for s, e in zip(getattr(b, start)[:-1], getattr(b, start)[1:], strict=True)]
        assert got == want


def crawl(path: Path, partition_docs: int = 1000) -> None:
    docs = [Doc(u, ("w", f"x{i}")) for i, u in enumerate(URLS)]
    docs.append(Doc(URLS[5], ("anchor",), doc_type=DocType.LINK, text_key="l"))
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=partition_docs)) as writer:
        writer.append([index_document(d) for d in docs])


def test_writer_writes_the_summaries_url_parts(tmp_path: Path) -> None:
    crawl(tmp_path / "b", partition_docs=6)
    with IndexBundleReader(tmp_path / "b") as reader:
        assert len(reader.partitions) == 3
        for part in reader.partitions:
            assert_same(reader.url_columns(part.number), columns_of(reader, part.number))
        first = reader.url_columns(0)
        assert first is not None and bool(first.flags[0] & 1)  # the root of www.ab-c.test


def test_merge_keeps_and_reorder_rebuilds_the_columns(tmp_path: Path) -> None:
    """Merged into the dictionary, then re-ordered (and merged again): the columns follow the
    new doc_map order."""
    crawl(tmp_path / "b")
    with IndexBundleWriter(tmp_path / "b") as writer:
        writer.close_partition()
    assert DictionaryUpdater(tmp_path / "b").update() == [0]
    with IndexBundleReader(tmp_path / "b") as reader:
        assert_same(reader.url_columns(0), columns_of(reader, 0))
    last = hash8(URLS[-1])

    def importance(hashes: np.ndarray) -> np.ndarray:
        return np.array([5.0 if int(h) == int.from_bytes(last, "big") else 0.0
                         for h in hashes.tolist()])

    assert reorder_partition(tmp_path / "b", 0, importance, "t").moved
    manifest = read_partition_manifest(tmp_path / "b", 0)
    assert URL_COLUMNS in manifest["files"] and "merged" not in manifest
    with IndexBundleReader(tmp_path / "b") as reader:
        assert reader.summary_head(0, 0)[0] == URLS[-1]
        assert_same(reader.url_columns(0), columns_of(reader, 0))


def test_a_partition_without_columns_reads_none(tmp_path: Path) -> None:
    """A MANIFEST that names no url columns (a partition made before them), or columns that
    do not decode: None, and the reader still serves the partition."""
    crawl(tmp_path / "b")
    manifest = read_partition_manifest(tmp_path / "b", 0)
    name = manifest["files"][URL_COLUMNS]
    (partition_dir(tmp_path / "b", 0) / name).write_bytes(b"garbage")
    with IndexBundleReader(tmp_path / "b") as reader:
        assert reader.url_columns(0) is None
        assert reader.summary_head(0, 0)[0] == URLS[0]


@pytest.mark.parametrize("summary,url", [
    ({"url": "https://a.test/x", "title": "t"}, "https://a.test/x"),
    ({"title": "t", "url": "https://b.test/"}, "https://b.test/"),  # not first: whole summary
    ({"title": "t"}, ""),
])
def test_summary_url(summary: dict, url: str) -> None:
    assert summary_url(gzip.compress(json.dumps(summary, separators=(",", ":")).encode())) \
        == url
    assert summary_url(b"not gzip") == ""


def test_columns_round_trip_and_refuse_bad_bytes() -> None:
    cols = UrlColumns.of([url_parts(u) for u in URLS])
    assert_same(UrlColumns.decode(cols.encode()), cols)
    assert len(UrlColumns.decode(UrlColumns.of([]).encode())) == 0
    with pytest.raises(ValueError):
        UrlColumns.decode(b"garbage")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_url_parts_never_raise(text: str) -> None:
    """Whatever a stored document names as its url (an archive record may name any), the
    writer makes its url parts: a url urlsplit refuses has none."""
    for url in (text, f"http://{text}/", f"http://[{text}/x"):
        parts = url_parts(url)
        assert isinstance(parts, UrlParts)


def test_a_document_whose_url_urlsplit_refuses_is_stored(tmp_path) -> None:
    bad = "http://[::1/unclosed"
    with IndexBundleWriter(tmp_path / "b") as writer:
        writer.append([make_doc(1, url=bad), make_doc(2)])
        writer.close_partition()
    assert url_parts(bad) == UrlParts("", False, False, 0, (), (), False)
