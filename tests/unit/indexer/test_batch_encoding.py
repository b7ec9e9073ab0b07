"""Column-wise encoders write exactly the bytes of their one-record-at-a-time references:
position_score_lists (``pack_psl`` vs the record codec), document index blobs
(``encode_blobs`` vs ``encode_doc_index``), term_ids, ``.ix`` records; summaries' JSON (``summary_json``, orjson)
as the json module writes it."""

from __future__ import annotations

import json
import math
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.documents.doc_index import encode_blobs, encode_doc_index
from indexer.core.documents.document import IndexDocument
from indexer.core.documents.encoding import (
    SUMMARY_COMPRESSION_LEVEL,
    prepare_documents,
    summary_json,
)
from indexer.core.ids import DocType, hash7, term_id, term_ids
from indexer.core.partition.doc_map import PSL_TOOL, pack_psl

ints = st.one_of(st.integers(0, 300), st.integers(-(2 ** 40), 2 ** 40),
                 st.sampled_from([0xFE, 0xFF, 0xFEFF, 0xFFFF, 0xFFFE, 2 ** 31, -1]))
floats = st.floats(allow_nan=False)
entries = st.lists(st.tuples(st.integers(0, 5), st.lists(st.tuples(ints, floats), min_size=1,
                                                         max_size=6)), min_size=1, max_size=12)


def _psl_columns(items: list[tuple[int, list[tuple[int, float]]]]):
    nregions = np.array([k for k, _ in items], dtype=np.int64)
    nrows = np.array([len(rows) for _, rows in items], dtype=np.int64)
    pos = np.array([p for _, rows in items for p, _ in rows], dtype=np.int64)
    score = np.array([w for _, rows in items for _, w in rows], dtype=np.float64)
    return nregions, nrows, pos, score


@given(entries)
@settings(max_examples=150, deadline=None)
def test_pack_psl_matches_the_record_codec(items) -> None:
    data, ends = pack_psl(*_psl_columns(items))
    records = [PSL_TOOL.pack((k,), rows) for k, rows in items]
    assert data == b"".join(records)
    assert ends.tolist() == np.cumsum([len(r) for r in records]).tolist()


def test_pack_psl_long_lists_have_multi_byte_row_counts() -> None:
    """Whole pages have hundreds of regions: row counts of two and three varint bytes are
    packed column-wise too, the same bytes as the record codec."""
    items = [(1, [(i, 0.5) for i in range(n)]) for n in (127, 128, 130, 16383, 16384)]
    items += [(0, [(7, 1.0)]), (3, [(-(2 ** 40), -2.5), (0xFEFF, 1e300)] * 200)]
    data, ends = pack_psl(*_psl_columns(items))
    records = [PSL_TOOL.pack((k,), rows) for k, rows in items]
    assert data == b"".join(records)
    assert ends.tolist() == np.cumsum([len(r) for r in records]).tolist()


terms = st.text(alphabet=st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)),
                min_size=1, max_size=12)
documents = st.lists(st.tuples(
    st.dictionaries(terms, st.lists(st.integers(0, 70_000), min_size=1, max_size=5, unique=True)
                    .map(sorted), max_size=8),
    st.lists(terms, max_size=3),
    st.lists(st.tuples(st.integers(-1, 2 ** 31 - 1), floats), max_size=3),
    st.lists(floats, max_size=2)), min_size=1, max_size=6)


@given(documents)
@settings(max_examples=100, deadline=None)
def test_batch_blobs_match_encode_doc_index(items) -> None:
    docs = [IndexDocument(url=f"https://h.example/{i}", host="h.example",
                          doc_type=DocType.PAGE, text_hash=hash7(str(i)), summary={"i": i},
                          terms=t, length=1 + max((p[-1] for p in t.values()), default=0),
                          meta_words=tuple(m), region_weights=tuple(r),
                          classifier_scores=tuple(c))
            for i, (t, m, r, c) in enumerate(items)]
    pending = prepare_documents(docs, SUMMARY_COMPRESSION_LEVEL)
    assert pending.blobs == [encode_doc_index(d)[0] for d in docs]
    assert encode_blobs(pending.batch) == pending.blobs


def test_term_ids_of_non_ascii_and_short_terms() -> None:
    words = ["a", "abcdefg", "abcdefgh", "héllo", "日本語テキストです", "x_y", "ñññ", "abc\x7f",
             "abcdefgé", "\x80"]
    assert term_ids(words) == [term_id(w) for w in words]


@given(st.lists(terms, max_size=20))
@settings(max_examples=100, deadline=None)
def test_term_ids_in_a_batch(words: list[str]) -> None:
    assert term_ids(words) == [term_id(w) for w in words]


def _page(i: int, terms: dict[str, list[int]], length: int = 10) -> IndexDocument:
    return IndexDocument(url=f"https://h.example/{i}", host="h.example", doc_type=DocType.PAGE,
                         text_hash=hash7(str(i)), summary={"i": i}, terms=terms, length=length)


@pytest.mark.parametrize("terms", [{"a": [3, 3]}, {"a": [5, 2]}, {"a": [-1]}, {"a": [2 ** 31]},
                                   {"a": [0], "b": [1, 1]}])
def test_a_bad_document_is_named_by_its_url(terms) -> None:
    """Positions repeated, decreasing, negative or from 2**31 on refuse the batch, naming the
    document that holds them (not its neighbours)."""
    docs = [_page(0, {"a": [0, 4]}), _page(1, terms), _page(2, {"c": [1]})]
    with pytest.raises(ValueError, match="h.example/1:"):
        prepare_documents(docs, SUMMARY_COMPRESSION_LEVEL)


def test_each_term_may_start_anywhere() -> None:
    """Positions increase within a term only: a term's first position may be below the
    previous term's last."""
    docs = [_page(0, {"a": [7, 9], "b": [0], "c": [2 ** 31 - 1]}), _page(1, {"a": [0]})]
    assert len(prepare_documents(docs, SUMMARY_COMPRESSION_LEVEL)) == 2


def _json_values(scalars: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20)


_NO_FLOATS = st.none() | st.booleans() | st.integers(-(2 ** 63), 2 ** 63 - 1) | st.text()
_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


@given(st.dictionaries(st.text(), _json_values(_NO_FLOATS), max_size=6))
@settings(max_examples=200, deadline=None)
def test_summary_json_writes_the_json_modules_bytes(summary) -> None:
    assert summary_json(summary) == json.dumps(
        summary, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@given(st.dictionaries(st.text(), _json_values(_NO_FLOATS | _FLOATS), max_size=6))
@settings(max_examples=200, deadline=None)
def test_summary_json_reads_back_as_written(summary) -> None:
    """Floats may be spelt otherwise (0.0001 for 1e-04) but read back the same."""
    assert json.loads(summary_json(summary)) == summary


def test_summary_json_takes_what_summaries_hold_and_refuses_the_rest() -> None:
    summary = MappingProxyType({"fields": MappingProxyType({"n": 1}), "tags": {"b", "a"},
                                3: "key", "big": 2 ** 70, "line": "a\u2028b é"})
    assert json.loads(summary_json(summary)) == {
        "fields": {"n": 1}, "tags": ["a", "b"], "3": "key", "big": 2 ** 70,
        "line": "a\u2028b é"}
    assert summary_json({"x": math.nan, "y": math.inf}) == b'{"x":null,"y":null}'
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        summary_json({"x": object()})
