"""Blobs decoded as a batch (:func:`decode_doc_batch`) give exactly what decoding them one at a
time gives (:func:`decode_doc_index` then :meth:`DocBatch.concat`), and a batch holding any
malformed blob is refused whole (None), so that its caller's per-blob path names it."""

from __future__ import annotations

import struct
import zlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.documents.doc_batch_decode import decode_doc_batch
from indexer.core.documents.doc_index import (
    DocBatch,
    decode_doc_index,
    encode_doc_index,
    small_doc_index,
)
from indexer.core.documents.document import IndexDocument
from indexer.core.ids import DocType, hash7

terms = st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)),
                max_size=12)
floats = st.floats(allow_nan=False)
documents = st.lists(st.tuples(
    st.dictionaries(terms, st.lists(st.integers(0, 70_000), min_size=1, max_size=5, unique=True)
                    .map(sorted), max_size=8),
    st.lists(terms, max_size=3),
    st.lists(st.tuples(st.integers(-1, 2 ** 31 - 1), floats), max_size=3),
    st.lists(floats, max_size=2),
    st.booleans()), max_size=8)


def _blobs(items) -> tuple[list[bytes], list[bytes]]:
    blobs, ids = [], []
    for i, (t, m, r, c, small) in enumerate(items):
        doc = IndexDocument(url=f"https://h.example/{i}", host="h.example",
                            doc_type=DocType.PAGE, text_hash=hash7(str(i)), summary={},
                            terms=t, length=1 + max((p[-1] for p in t.values()), default=0),
                            meta_words=tuple(m), region_weights=tuple(r),
                            classifier_scores=tuple(c))
        blob = small_doc_index(doc) if small else None
        blobs.append(blob if blob is not None else encode_doc_index(doc)[0])
        ids.append(doc.doc_id)
    return blobs, ids


def _same(a: DocBatch, b: DocBatch) -> None:
    assert a.doc_ids == b.doc_ids and a.lengths == b.lengths
    assert a.regions == b.regions and a.classifier_scores == b.classifier_scores
    assert a.terms == b.terms and a.meta == b.meta
    for name in ("nterms", "counts", "positions", "nmeta"):
        got, want = getattr(a, name), getattr(b, name)
        assert got.dtype == want.dtype == np.int64 and np.array_equal(got, want), name


@given(documents)
@settings(max_examples=150, deadline=None)
def test_a_batch_decodes_as_its_blobs_one_at_a_time(items) -> None:
    blobs, ids = _blobs(items)
    got = decode_doc_batch(blobs, ids)
    assert got is not None
    _same(got, DocBatch.concat([decode_doc_index(b) for b in blobs], ids))


def _raw(blob: bytes) -> bytes:
    return zlib.decompress(blob)


@given(documents.filter(bool), st.data())
@settings(max_examples=150, deadline=None)
def test_a_batch_with_a_malformed_blob_is_refused(items, data) -> None:
    blobs, ids = _blobs(items)
    k = data.draw(st.integers(0, len(blobs) - 1))
    raw = _raw(blobs[k])
    how = data.draw(st.sampled_from(["cut", "extra", "not_zlib", "bad_utf8", "count", "nul"]))
    if how == "cut":
        bad = zlib.compress(raw[:data.draw(st.integers(0, len(raw) - 1))])
    elif how == "extra":
        bad = zlib.compress(raw + b"\x00")
    elif how == "not_zlib":
        bad = b"not a blob"
    elif how == "bad_utf8":  # one term of invalid UTF-8 in place of the term section
        head = raw[:21]
        nterms = struct.unpack(">I", head[4:8])[0]
        size = struct.unpack(">I", raw[21:25])[0]
        if not nterms:
            return
        bad = zlib.compress(head[:4] + struct.pack(">I", 1) + head[8:] + struct.pack(">I", 2)
                            + b"\xff\0" + raw[25 + size:])
    elif how == "count":  # one more term than the sections hold
        nterms = struct.unpack(">I", raw[4:8])[0]
        bad = zlib.compress(raw[:4] + struct.pack(">I", nterms + 1) + raw[8:])
    else:  # the term section's last NUL replaced
        size = struct.unpack(">I", raw[21:25])[0]
        if not size:
            return
        at = 25 + size - 1
        bad = zlib.compress(raw[:at] + b"x" + raw[at + 1:])
    blobs[k] = bad
    try:
        decode_doc_index(bad)
    except Exception:  # any error the one-at-a-time decoder raises
        assert decode_doc_batch(blobs, ids) is None
    else:  # (a change the format cannot see, e.g. a cut inside the zlib stream's padding)
        _same(decode_doc_batch(blobs, ids),
              DocBatch.concat([decode_doc_index(b) for b in blobs], ids))


def test_an_empty_batch() -> None:
    _same(decode_doc_batch([], []), DocBatch.concat([], []))
