"""Documents encoded by fetchers (``encode_document``) are stored exactly as the indexer's own
encoding, are checked before anything is stored, and can have their region weights scaled."""

from __future__ import annotations

import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from indexer.core.bundle.reader import IndexBundleReader
from indexer.core.bundle.writer import IndexBundleWriter
from indexer.core.documents.doc_index import decode_doc_index, encode_doc_index, small_doc_index
from indexer.core.documents.encoding import EncodedDocument, encode_document
from indexer.core.ids import DocType
from tests.unit.indexer.helpers import make_doc


def files_of(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file() and p.name not in ("LOCK", "archive_info.txt")}


def test_encoded_documents_store_the_same_bytes(tmp_path: Path) -> None:
    docs = [make_doc(i) for i in range(60)] + [make_doc(99, doc_type=DocType.LINK)]
    with IndexBundleWriter(tmp_path / "plain") as writer:
        writer.append(docs[:30])
        writer.append(docs[30:])
    with IndexBundleWriter(tmp_path / "encoded") as writer:
        writer.append_encoded([encode_document(d) for d in docs[:30]])
        writer.append_encoded([encode_document(d) for d in docs[30:]])
    plain, encoded = files_of(tmp_path / "plain"), files_of(tmp_path / "encoded")
    assert plain.keys() == encoded.keys()
    assert plain == encoded
    reader = IndexBundleReader(tmp_path / "encoded")
    assert reader.summary(docs[5].doc_id)["title"] == "title 5"


@pytest.mark.parametrize("damage", ["doc_id", "summary", "blob", "positions"])
def test_a_malformed_encoded_document_rejects_the_batch(tmp_path: Path, damage: str) -> None:
    good = [encode_document(make_doc(i)) for i in range(3)]
    item = good[1]
    if damage == "doc_id":
        bad = EncodedDocument(item.doc_id[:10], item.summary, item.cache, item.index_blob)
    elif damage == "summary":
        bad = EncodedDocument(item.doc_id, b"{not gzip}", item.cache, item.index_blob)
    elif damage == "blob":
        bad = EncodedDocument(item.doc_id, item.summary, item.cache, b"junk" * 5)
    else:  # a well-formed blob whose positions go backwards
        doc = make_doc(1)
        term = next(t for t, p in doc.terms.items() if len(p) > 1)
        terms = dict(doc.terms)
        terms[term] = list(reversed(terms[term]))
        from dataclasses import replace

        bad = encode_document(replace(doc, terms=terms))
    with IndexBundleWriter(tmp_path) as writer:
        with pytest.raises(ValueError):
            writer.append_encoded([good[0], bad, good[2]])
        assert writer.active_documents == 0
        assert writer.append_encoded(good) == 3


@pytest.mark.parametrize("i", range(40))
def test_the_fast_small_document_encoding_is_byte_identical(i: int) -> None:

    doc = make_doc(i, words=[0, 1, 5, 40, 200][i % 5])
    if i % 7 == 3:  # positions past 65535 switch the blob to 4-byte numbers
        doc = replace(doc, terms={t: [p + 70_000 for p in ps] for t, ps in doc.terms.items()},
                      length=doc.length + 70_000)
    if i % 11 == 4:
        doc = replace(doc, region_weights=(), classifier_scores=(), meta_words=())
    assert small_doc_index(doc) == encode_doc_index(doc)[0]
    bad = replace(doc, terms={"x\0y": [1]}) if i % 2 else replace(doc, terms={"x": [-1]})
    assert small_doc_index(bad) is None  # left to encode_doc_index, which decides


def _postings_of(reader: IndexBundleReader, term: str) -> list[tuple[list, list, list]]:
    out = []
    cursor = reader.postings(term)
    while (block := cursor.next_block()) is not None:
        positions, counts = cursor.positions(block)
        out.append((block.doc_index.tolist(), positions.tolist(), counts.tolist()))
    return out


def test_members_deflated_by_zlib_read_as_those_deflated_by_isal(tmp_path: Path) -> None:
    """Summaries, cached pages and index blobs are deflated with ISA-L; bundles (and fetchers)
    that deflated them with zlib, as before, hold the same formats: a writer takes documents
    of both kinds, and the reader returns the same summaries, cached pages and postings for
    them. The zlib module reads what ISA-L writes."""
    import gzip

    docs = [make_doc(i) for i in range(40)]
    isal_items = [encode_document(d) for d in docs]
    zlib_items = [EncodedDocument(item.doc_id, zlib.compress(gzip.decompress(item.summary), 4, 31),
                                  zlib.compress(gzip.decompress(item.cache), 4, 31)
                                  if item.cache else b"",
                                  zlib.compress(zlib.decompress(item.index_blob), 1), item.url)
                  for item in isal_items]
    for item in isal_items:
        decode_doc_index(item.index_blob)
        assert item.summary[:2] == b"\x1f\x8b"
    for name, items in (("isal", isal_items), ("zlib", zlib_items)):
        with IndexBundleWriter(tmp_path / name) as writer:
            writer.append_encoded(items[:25])
            writer.append_encoded(items[25:])
            writer.close_partition()
    with IndexBundleReader(tmp_path / "isal") as new, IndexBundleReader(tmp_path / "zlib") as old:
        for doc in docs:
            assert new.summary(doc.doc_id) == old.summary(doc.doc_id) is not None
            assert new.cached_page(doc.doc_id) == old.cached_page(doc.doc_id)
        for term in ("w1", "w2", "w10", "site:h1.example"):
            assert _postings_of(new, term) == _postings_of(old, term) != []
