"""The binary shard search answer (``fmt=bin``): it carries the candidates and heads exactly,
and a malformed one is refused with a reason, never misread."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from indexer.core.ids import DOC_ID_LEN, DocType
from ranking.core.errors import ShardError
from ranking.core.remote.client import RemoteShard
from ranking.core.remote.protocol import (
    BINARY_TYPE,
    JSON_TYPE,
    decode_search_answer,
    encode_search_answer,
)
from ranking.core.remote.server import shard_search, shard_search_answer
from ranking.core.search.pipeline import Searcher
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.local import LocalShard

from .helpers import Doc, build, text_doc

ARRAYS = ("doc_ids", "partition", "index", "docs_after", "doc_rank", "relevance", "proximity",
          "proximity_raw", "doc_length", "freq", "term_relevance", "bonuses")


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    docs = [text_doc(f"https://b.test/{i}", f"alpha page {i}",
                     "alpha beta gamma " * (i + 1) + "délta " * 9) for i in range(7)]
    docs.append(Doc("https://b.test/0", ("alpha", "anchor"), doc_type=DocType.LINK,
                    summary={"url": "https://b.test/0", "title": "https://b.test/0",
                             "description": "alpha anchor", "source": "https://x.test/",
                             "kind": "a"}))
    return LocalShard(build(tmp_path_factory.mktemp("bin") / "b", docs, 3), "b")


def answer(shard, q="alpha beta", heads="4"):
    searcher = Searcher([shard])
    params = {"q": q, "n": "50", "heads": heads, "fmt": "bin"}
    return shard_search(shard, params, searcher.parser, searcher.options)


def test_round_trip_is_exact(shard):
    found, heads = answer(shard)
    assert len(found) > 1 and len(found.terms) == 2 and heads
    heads[b"\1" * DOC_ID_LEN] = None  # a document the shard does not have
    back, got = decode_search_answer(encode_search_answer(found, heads), "b")
    for name in ARRAYS:
        mine, theirs = getattr(found, name), getattr(back, name)
        assert theirs.dtype == mine.dtype and np.array_equal(theirs, mine), name
    for name in ("terms", "occurrences", "documents", "average_length", "estimate",
                 "exhausted", "partial", "messages"):
        assert getattr(back, name) == getattr(found, name), name
    assert back.shard == "b" and got == heads


def test_empty_answer_round_trips():
    empty = Candidates.empty("e", ["a", "b"])
    back, heads = decode_search_answer(encode_search_answer(empty, {}), "e")
    assert len(back) == 0 and back.freq.shape == (2, 0) and heads == {}


def test_arrays_are_aligned_views(shard):
    body = encode_search_answer(*answer(shard))
    back, _ = decode_search_answer(body, "b")
    assert all(getattr(back, name).flags.aligned for name in ARRAYS)
    assert not back.doc_rank.flags.owndata  # read in place, not copied


def test_json_unless_asked_for_binary(shard):
    searcher = Searcher([shard])
    body, kind = shard_search_answer(shard, {"q": "alpha"}, searcher.parser, searcher.options)
    assert kind == JSON_TYPE and "candidates" in json.loads(body)
    body, kind = shard_search_answer(shard, {"q": "alpha", "fmt": "bin"}, searcher.parser,
                                     searcher.options)
    assert kind == BINARY_TYPE and body.startswith(b"YSR1")


def malformed(body: bytes) -> list[tuple[str, bytes]]:
    """(what is wrong, the answer) for each way of breaking a well-formed ``body``."""
    (size,) = struct.unpack_from("<I", body, 4)
    block = body[8:8 + size]
    (meta_len,) = struct.unpack_from("<I", block, 4)
    meta = json.loads(block[8:8 + meta_len])
    more = json.dumps({**meta, "m": meta["m"] + 1}).encode()
    more += b" " * (-len(more) % 8)
    wrong_m = block[:4] + struct.pack("<I", len(more)) + more + block[8 + meta_len:]
    return [
        ("empty", b""),
        ("bad magic", b"JSON" + body[4:]),
        ("truncated in the arrays", body[:8 + size // 2]),
        ("truncated in the heads", body[:-3]),
        ("a byte too many", body + b"x"),
        ("candidates length past the end", body[:4] + struct.pack("<I", len(body)) + body[8:]),
        ("candidates length not on the arrays", body[:4] + struct.pack("<I", size - 8) +
         body[8:]),
        ("bad candidates magic", body[:8] + b"XXXX" + body[12:]),
        ("wrong number of candidates", body[:4] + struct.pack("<I", len(wrong_m)) + wrong_m +
         body[8 + size:]),
        ("meta not JSON", body[:16] + b"{" * (meta_len) + body[16 + meta_len:]),
        ("heads not a list", body[:8 + size] + struct.pack("<I", 0) + b'{"a": 1}'),
        ("too few heads", body[:8 + size] + struct.pack("<I", 2) + b"\0" * 48 + b"[null]"),
    ]


@pytest.mark.parametrize("case", range(12))
def test_malformed_answers_are_refused(shard, case):
    what, body = malformed(encode_search_answer(*answer(shard)))[case]
    with pytest.raises(ValueError):
        decode_search_answer(body, "b")
    client = RemoteShard("http://127.0.0.1:9", "t", name="b")
    with pytest.raises(ShardError, match="malformed answer"):
        client.read_candidates((200, BINARY_TYPE, body))
