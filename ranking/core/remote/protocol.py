"""The shard protocol: the typed messages a name server and a shard exchange, and their codecs.

Layer: ``ranking.core`` (no sockets, no Django). The client (:mod:`ranking.core.remote.client`)
builds requests and decodes answers with it; the server side
(:mod:`ranking.core.remote.server`, served by ``ranking/api.py`` and by the test server) parses
requests and encodes answers with it, so both ends agree by construction.

* ``GET /api/shard/search?q=&n=&lang=&safe=&its=[&heads=k][&fmt=bin]`` (:class:`SearchRequest`)
  -> the shard's raw candidates and the summary heads of the representatives of its ``k`` best
  groups (:class:`SearchAnswer`). With ``fmt=bin`` the answer is :func:`encode_search_answer`'s
  binary encoding (content type :data:`BINARY_TYPE`), else ``{"candidates": {...}, "heads":
  {hex doc_id: head}}`` (:meth:`Candidates.to_json`);
* ``GET /api/shard/summaries?ids=<hex doc_id>,...&its=[&heads=1]`` (:class:`SummariesRequest`)
  -> ``{"summaries": [...]}`` (with ``heads=1`` only each summary's url and title: a result
  list without snippets needs no page text, and a stored summary holds the whole text of the
  page). A summary, or a head, whose url the crawl's redirect table gives a representative
  carries it as ``representative_url`` (:meth:`LocalShard.with_representatives
  <ranking.core.shard.local.LocalShard.with_representatives>`), as the candidates carry their
  link scores: the name server needs no scores file of its own.

Every request carries the shared token in the header :data:`indexer.core.shard_token.
TOKEN_HEADER`; without it the answer is 403.
"""

from __future__ import annotations

import json
import struct
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from indexer.core.ids import DOC_ID_LEN
from ranking.core.query.parser import ParsedQuery
from ranking.core.shard.candidates import Candidates

SEARCH_PATH = "/api/shard/search"
SUMMARIES_PATH = "/api/shard/summaries"
MAX_SHARD_RESULTS = 10_000
# summary heads a search answer carries for its best candidates (a result list of ten, and
# some to spare for the groups other shards' candidates outrank or that are dropped)
PREFETCH_HEADS = 16
MAX_PREFETCH_HEADS = 100
BINARY_TYPE = "application/x-yioopy-shard"  # encode_search_answer
JSON_TYPE = "application/json"
_ANSWER_MAGIC = b"YSR1"
_HEADS = struct.Struct("<I")

Head = dict[str, Any] | None
_HEAD_TYPES = {dict, type(None)}  # what JSON gives for a head or a missing document


def _clamped(value: str | None, default: int, low: int, high: int) -> int:
    try:
        got = int(value) if value is not None else default
    except ValueError:
        got = default
    return min(max(got, low), high)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A search request: the query text, how many candidates (``n``), the query's language and
    safe search, how many heads of its best groups the answer carries, and whether it is
    asked for in the binary encoding."""

    query: str
    n: int
    lang: str = "en"
    safe: bool = True
    heads: int = 0
    binary: bool = False

    @staticmethod
    def for_query(query: str, parsed: ParsedQuery, n: int) -> SearchRequest:
        """The request the name server sends every shard for ``parsed`` (binary, with
        PREFETCH_HEADS heads)."""
        safe = not any("safe:all" in d.auto_meta for d in parsed.disjuncts)
        return SearchRequest(query, int(n), parsed.lang, safe, int(PREFETCH_HEADS), True)

    def query_string(self) -> str:
        """The url-encoded parameters (the same for every shard)."""
        return (f"q={urllib.parse.quote_plus(self.query)}&n={int(self.n)}"
                f"&lang={urllib.parse.quote_plus(self.lang)}&safe={'1' if self.safe else '0'}"
                f"&heads={int(self.heads)}" + ("&fmt=bin" if self.binary else ""))

    @staticmethod
    def from_params(params: Mapping[str, str], default_n: int) -> SearchRequest:
        """The request a shard received (its query parameters), ``n`` and ``heads`` clamped to
        what a shard answers."""
        return SearchRequest(
            params.get("q", ""), _clamped(params.get("n"), default_n, 1, MAX_SHARD_RESULTS),
            params.get("lang", "en") or "en", params.get("safe", "1") != "0",
            _clamped(params.get("heads"), 0, 0, MAX_PREFETCH_HEADS), params.get("fmt") == "bin")


@dataclass(frozen=True, slots=True)
class SummariesRequest:
    """A summaries request: the doc_ids (an id that is not DOC_ID_LEN bytes is answered None)
    and whether only their heads (url and title) are wanted."""

    doc_ids: tuple[bytes, ...]
    heads: bool = False

    def query_string(self) -> str:
        ids = ",".join(d.hex() for d in self.doc_ids)
        return f"ids={ids}&heads=1" if self.heads else f"ids={ids}"

    @staticmethod
    def from_params(params: Mapping[str, str]) -> SummariesRequest:
        ids = []
        for part in params.get("ids", "").split(","):
            if part:
                try:
                    raw = bytes.fromhex(part)
                except ValueError:
                    raw = b""
                ids.append(raw)
        return SummariesRequest(tuple(ids), params.get("heads") == "1")


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """A shard's answer to a :class:`SearchRequest`: its candidates and the heads of its best
    groups' representatives (doc_id -> head, None for no such document)."""

    candidates: Candidates
    heads: dict[bytes, Head]

    def to_json(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"candidates": self.candidates.to_json()}
        if self.heads:
            payload["heads"] = {i.hex(): head for i, head in self.heads.items()}
        return payload

    @staticmethod
    def from_json(data: Any, shard: str) -> SearchAnswer:
        """Read :meth:`to_json`'s payload; heads that are not well formed are left out (an
        older shard sends none). Raises KeyError, TypeError or ValueError on malformed
        candidates."""
        found = Candidates.from_json(data["candidates"], shard)
        heads: dict[bytes, Head] = {}
        sent = data.get("heads")
        if isinstance(sent, dict):
            for key, head in sent.items():
                try:
                    doc_id = bytes.fromhex(key)
                except (TypeError, ValueError):
                    continue
                if len(doc_id) == DOC_ID_LEN and type(head) in _HEAD_TYPES:
                    heads[doc_id] = head
        return SearchAnswer(found, heads)


def encode_search_answer(found: Candidates, heads: Mapping[bytes, Head]) -> bytes:
    """The search answer for ``fmt=bin``: ``YSR1``, the length of the candidates' encoding
    (u32, a multiple of 8, so that their arrays stay 8-byte aligned in the answer), that
    encoding (:meth:`Candidates.to_bytes`), then the heads: their number k (u32), their k
    doc_ids (24 bytes each) and a JSON array of the k heads (null: no such document). One
    JSON array of short objects decodes several times faster in Python than strings picked
    out one at a time."""
    block = found.to_bytes()
    return b"".join((_ANSWER_MAGIC, _HEADS.pack(len(block)), block, _HEADS.pack(len(heads)),
                     *heads, json.dumps(list(heads.values())).encode()))


def decode_search_answer(body: bytes, shard: str) -> tuple[Candidates, dict[bytes, Head]]:
    """Read :func:`encode_search_answer`'s encoding (the candidates' arrays are views of
    ``body``). Raises ValueError saying what is wrong with a malformed answer."""
    view = memoryview(body)
    if len(view) < 8:
        raise ValueError(f"an answer of {len(view)} bytes is too short")
    if view[:4] != _ANSWER_MAGIC:
        raise ValueError("not a binary shard search answer (bad magic)")
    (size,) = _HEADS.unpack_from(view, 4)
    at = 8 + size
    if at + 4 > len(view):
        raise ValueError(f"the candidates take {size} bytes, the answer has {len(view) - 8} "
                         "after its header (truncated?)")
    found = Candidates.from_bytes(view[8:at], shard)
    (k,) = _HEADS.unpack_from(view, at)
    at += 4
    ids = bytes(view[at:at + k * DOC_ID_LEN])
    if len(ids) != k * DOC_ID_LEN:
        raise ValueError(f"{k} heads announced, their doc_ids are truncated")
    try:
        heads = json.loads(bytes(view[at + len(ids):]))
    except ValueError as exc:
        raise ValueError(f"heads: {exc}") from exc
    if not isinstance(heads, list) or len(heads) != k or not set(map(type, heads)) <= _HEAD_TYPES:
        raise ValueError(f"heads: expected a list of {k} objects or nulls")
    return found, {ids[i * DOC_ID_LEN:(i + 1) * DOC_ID_LEN]: h for i, h in enumerate(heads)}

