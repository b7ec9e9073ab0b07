"""The production shard endpoint (ranking/api.py) speaks both answers: JSON by default, the
binary encoding for ``fmt=bin``, with a Content-Length either way."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.core.shard_token import shard_bearer
from ranking.core.remote.protocol import BINARY_TYPE, decode_search_answer
from ranking.core.shard.candidates import Candidates
from tests.unit.ranking.helpers import text_doc
from tests.web.test_search_api import TOKEN, make_index
from tests.web.test_search_api import work as work  # the fixture, re-exported for pytest


@pytest.fixture
def pages(work):
    make_index(work, pages=[text_doc(f"https://docs.python.org/3/library/{name}.html", name,
                                     f"{name} threading interfaces for threaded programming")
                            for name in ("threading", "queue", "asyncio")])


def test_binary_answer_equals_the_json_one(client, pages):
    params = {"q": "threading", "n": "5", "heads": "2"}
    plain = client.get("/api/shard/search", params, HTTP_X_SHARD_TOKEN=shard_bearer(TOKEN))
    binary = client.get("/api/shard/search", {**params, "fmt": "bin"},
                        HTTP_X_SHARD_TOKEN=shard_bearer(TOKEN))
    assert plain["Content-Type"] == "application/json"
    assert binary.status_code == 200 and binary["Content-Type"] == BINARY_TYPE
    assert int(binary["Content-Length"]) == len(binary.content)
    found, heads = decode_search_answer(binary.content, "s")
    want = Candidates.from_json(plain.json()["candidates"], "s")
    assert len(found) == 3 and found.terms == want.terms
    for name in ("doc_ids", "doc_rank", "relevance", "freq", "bonuses"):
        assert np.array_equal(getattr(found, name), getattr(want, name)), name
    assert {i.hex(): h for i, h in heads.items()} == plain.json()["heads"]


def test_binary_answer_needs_the_token(client, work):
    assert client.get("/api/shard/search", {"q": "threading", "fmt": "bin"}).status_code == 403
