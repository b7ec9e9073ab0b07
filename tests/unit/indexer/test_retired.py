"""The retired set of a bundle (issue 21, item 3): a published list of doc_ids and url hashes
that every posting cursor of a reader leaves out, checked against a brute-force scan of the
doc_map; the file is checked like every index file."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.retired import RETIRED_FILE, read_retired, write_retired
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter
from indexer.core.errors import CorruptIndexError
from indexer.core.ids import DocType, hash8

from .helpers import make_doc


def bundle(path, docs, partition_docs: int = 40) -> None:
    with IndexBundleWriter(path, BundleConfig(max_partition_docs=partition_docs)) as writer:
        writer.append(docs)


def postings(reader: IndexBundleReader, term: str) -> list[bytes]:
    """Representative doc_ids of the term's postings, as the cursor hands them out."""
    out = []
    for block in reader.postings(term):
        out.extend(reader.doc_id(block.partition, int(i)) for i in block.doc_index)
    return out


def test_round_trip_and_damage(tmp_path) -> None:
    assert read_retired(tmp_path) is None
    docs = [bytes([i]) * 24 for i in (3, 1, 2)]
    write_retired(tmp_path, docs, [5, 2**64 - 1])
    retired = read_retired(tmp_path)
    assert [bytes(x) for x in retired.doc_ids] == sorted(docs)
    assert retired.urls.tolist() == [5, 2**64 - 1]
    raw = bytearray((tmp_path / RETIRED_FILE).read_bytes())
    raw[-1] ^= 1
    (tmp_path / RETIRED_FILE).write_bytes(bytes(raw))
    with pytest.raises(CorruptIndexError):
        read_retired(tmp_path)
    with pytest.raises(ValueError):
        write_retired(tmp_path, [b"short"], [])


def test_cursors_leave_out_retired_documents_and_removed_urls(tmp_path) -> None:
    docs = [make_doc(i, words=30) for i in range(200)]
    # link documents filed under a page's url: they leave with a removed url
    target = docs[7].url
    links = [make_doc(1000 + i, url=target, doc_type=DocType.LINK, words=5) for i in range(3)]
    bundle(tmp_path, docs + links)
    retired_docs = {docs[i].doc_id for i in (0, 41, 42, 150, 199)}
    write_retired(tmp_path, retired_docs, [int.from_bytes(hash8(target), "big")])
    by_url: dict[bytes, list] = {}
    for d in docs + links:
        by_url.setdefault(d.doc_id[:8], []).append(d)
    with IndexBundleReader(tmp_path) as reader:
        entries = [reader.doc_id(part.number, i) for part in reader.partitions
                   for i in range(reader.doc_map(part.number).n)]
        terms = {t for d in docs[:60] for t in d.terms}
        for term in sorted(terms)[:40]:
            # brute force: every doc_map entry holding the term, minus the retired ones
            expected = [doc_id for doc_id in entries
                        if doc_id not in retired_docs and doc_id[:8] != hash8(target)
                        and any(term in d.terms for d in by_url[doc_id[:8]])]
            assert postings(reader, term) == expected, term
        assert all(d not in retired_docs for t in terms for d in postings(reader, t))


def test_skip_to_lands_past_retired_postings(tmp_path) -> None:
    docs = [make_doc(i, words=4, text=f"common t{i}") for i in range(300)]
    for doc in docs:
        doc.terms.setdefault("common", (0,))
    bundle(tmp_path, docs, partition_docs=1000)
    with IndexBundleReader(tmp_path) as reader:
        dm = reader.doc_map(reader.partitions[0].number)
        order = [dm.doc_id(i) for i in range(dm.n)]
    write_retired(tmp_path, order[100:260], [])
    with IndexBundleReader(tmp_path) as reader:
        cursor = reader.postings("common")
        block = cursor.skip_to(reader.partitions[0].number, 120)
        assert block is not None and int(block.doc_index[0]) == 260
        rest = np.concatenate([block.doc_index, *[b.doc_index for b in cursor]])
        assert rest.tolist() == list(range(260, 300))
