"""Candidates: one shard's raw (ungrouped) scored matches, and the contract of a shard.

Layer: ``ranking.core``. A shard, local (:class:`ranking.core.shard.local.LocalShard`) or remote
(:class:`ranking.core.remote.client.RemoteShard`), answers a query with :class:`Candidates`
(:class:`ShardClient`); :mod:`ranking.core.search.pipeline` groups the candidates of every shard.
Per document: its doc_id, Doc Rank (and its input, the number of documents after it), the DFR
relevance with its per-term inputs, the proximity and the bonus factors, and (``linked``) the
LinkRank and trust of its url from the shard's own copy of the crawl's link scores, so that a
name server without the scores file ranks with them as one machine does; the collection
statistics they used are carried along for explanations. Candidates cross the wire in the
binary encoding of :meth:`Candidates.to_bytes` (or as JSON, :meth:`Candidates.to_json`),
inside :mod:`ranking.core.remote.protocol`'s search answer.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from indexer.core.ids import DOC_ID_LEN
from ranking.core.options import SearchOptions
from ranking.core.query.parser import ParsedQuery
from ranking.core.scoring.formulas import BONUS_NAMES

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


_INT, _FLOAT = np.dtype("<i8"), np.dtype("<f8")
_INT_FIELDS = frozenset({"partition", "index", "docs_after", "doc_length"})
_BINARY_MAGIC = b"YCND"  # Candidates.to_bytes


def _pack(a: np.ndarray, dtype: np.dtype) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


def _unpack(value: Any, dtype: np.dtype) -> np.ndarray:
    """An array sent by :func:`_pack` (or, from an older shard, as a JSON list)."""
    if isinstance(value, str):
        raw = base64.b64decode(value, validate=True)
        if len(raw) % dtype.itemsize:
            raise ValueError("array bytes are not a whole number of values")
        return np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="))
    return np.asarray(value, dtype=dtype.newbyteorder("="))


@dataclass(frozen=True, slots=True)
class Candidates:
    """Raw scored matches of one shard (arrays of length m, terms of length T)."""

    doc_ids: npt.NDArray[np.uint8]   # (m, 24)
    partition: IntArray
    index: IntArray
    docs_after: IntArray
    doc_rank: FloatArray
    relevance: FloatArray
    proximity: FloatArray
    proximity_raw: FloatArray
    doc_length: IntArray
    freq: FloatArray                 # (T, m) region-weighted f_{t,d}
    term_relevance: FloatArray       # (T, m)
    terms: tuple[str, ...]
    occurrences: tuple[int, ...]     # l_t
    documents: int                   # N
    average_length: float            # l_avg
    estimate: int                    # estimated number of matches in the shard
    exhausted: bool
    partial: bool
    shard: str = ""
    messages: tuple[str, ...] = field(default=())
    # (len(BONUS_NAMES), m): the seed's bonus factors of each candidate (url and title)
    bonuses: FloatArray = field(default_factory=lambda: np.zeros((len(BONUS_NAMES), 0)))
    # whether the shard looked its candidates up in the crawl's link scores, and what it found
    # (m values each when linked: LinkRank times the number of nodes, and trust)
    linked: bool = False
    link_relative: FloatArray = field(default_factory=lambda: np.zeros(0))
    link_trust: FloatArray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return int(self.doc_rank.size)

    def with_links(self, relative: FloatArray, trust: FloatArray) -> Candidates:
        """These candidates with their urls' link scores (m values each)."""
        relative = np.asarray(relative, dtype=np.float64)
        trust = np.asarray(trust, dtype=np.float64)
        if relative.shape != (len(self),) or trust.shape != (len(self),):
            raise ValueError(f"link scores: expected {len(self)} values")
        return replace(self, linked=True, link_relative=relative, link_trust=trust)

    @staticmethod
    def empty(shard: str = "", terms: Sequence[str] = (), partial: bool = False) -> Candidates:
        z, f = np.zeros(0, np.int64), np.zeros(0, np.float64)
        t = len(terms)
        return Candidates(np.zeros((0, DOC_ID_LEN), np.uint8), z, z, z, f, f, f, f, z,
                          np.zeros((t, 0)), np.zeros((t, 0)), tuple(terms), (0,) * t, 0, 0.0,
                          0, True, partial, shard)

    def to_json(self) -> dict[str, Any]:
        """A JSON object for the shard search endpoint; numeric arrays travel as base64 of
        their little-endian bytes (exact, and decoded without parsing a number at a time)."""
        return {
            "doc_ids": base64.b64encode(self.doc_ids.tobytes()).decode("ascii"),
            **{k: _pack(getattr(self, k), _INT if k in _INT_FIELDS else _FLOAT) for k in (
                "partition", "index", "docs_after", "doc_rank", "relevance", "proximity",
                "proximity_raw", "doc_length", "freq", "term_relevance", "bonuses")},
            "terms": list(self.terms), "occurrences": list(self.occurrences),
            "documents": self.documents, "average_length": self.average_length,
            "estimate": self.estimate, "exhausted": self.exhausted, "partial": self.partial,
            "shard": self.shard, "messages": list(self.messages),
            **({"link_relative": _pack(self.link_relative, _FLOAT),
                "link_trust": _pack(self.link_trust, _FLOAT)} if self.linked else {}),
        }

    @staticmethod
    def from_json(data: dict[str, Any], shard: str) -> Candidates:
        raw = base64.b64decode(data["doc_ids"])
        ids = np.frombuffer(raw, dtype=np.uint8).reshape(-1, DOC_ID_LEN).copy()
        m = ids.shape[0]
        t = len(data["terms"])

        def arr(name: str, dtype: Any, shape: tuple[int, ...] | None = None) -> Any:
            a = _unpack(data[name], _INT if dtype is np.int64 else _FLOAT)
            return a.reshape(shape) if shape is not None else a

        out = Candidates(
            ids, arr("partition", np.int64), arr("index", np.int64),
            arr("docs_after", np.int64), arr("doc_rank", np.float64),
            arr("relevance", np.float64), arr("proximity", np.float64),
            arr("proximity_raw", np.float64), arr("doc_length", np.int64),
            arr("freq", np.float64, (t, m)), arr("term_relevance", np.float64, (t, m)),
            tuple(data["terms"]), tuple(int(x) for x in data["occurrences"]),
            int(data["documents"]), float(data["average_length"]), int(data["estimate"]),
            bool(data["exhausted"]), bool(data["partial"]), shard,
            tuple(data.get("messages", ())), arr("bonuses", np.float64, (len(BONUS_NAMES), m)))
        for name in ("partition", "index", "docs_after", "doc_rank", "relevance", "proximity",
                     "proximity_raw", "doc_length"):
            if getattr(out, name).shape != (m,):
                raise ValueError(f"{name}: expected {m} values")
        if "link_relative" in data:  # a shard with the crawl's link scores (older ones: none)
            out = out.with_links(arr("link_relative", np.float64),
                                 arr("link_trust", np.float64))
        return out

    # the arrays of the binary encoding, in order: first the integer ones, then the floats
    # (per-term arrays T x m, bonuses len(BONUS_NAMES) x m), so that each dtype is one block
    _BINARY_INTS = ("partition", "index", "docs_after", "doc_length")
    _BINARY_FLOATS = ("doc_rank", "relevance", "proximity", "proximity_raw", "freq",
                      "term_relevance", "bonuses")
    _BINARY_LINKS = ("link_relative", "link_trust")  # after the others, when ``linked``

    def to_bytes(self) -> bytes:
        """The binary encoding the shard search endpoint sends when asked for ``fmt=bin``
        (:meth:`to_json` stays for other clients): the arrays are sent as their raw
        little-endian bytes, so that :meth:`from_bytes` reads them in place.

        Layout: ``YCND``, the length L of the meta (u32), the meta (a JSON object of the
        scalars and term lists, padded with spaces to a multiple of 8 bytes, so that every
        array starts 8-byte aligned), then ``doc_ids`` (m x 24 bytes), the integer arrays of
        :attr:`_BINARY_INTS` (int64, m values each) and the float arrays of
        :attr:`_BINARY_FLOATS` (float64; m values each, T x m for the per-term arrays,
        len(BONUS_NAMES) x m for the bonuses), then, when the meta says ``linked``, the two
        arrays of :attr:`_BINARY_LINKS` (m float64 each), in that order."""
        meta = json.dumps({
            "m": len(self), "terms": list(self.terms), "occurrences": list(self.occurrences),
            "documents": self.documents, "average_length": self.average_length,
            "estimate": self.estimate, "exhausted": self.exhausted, "partial": self.partial,
            "shard": self.shard, "messages": list(self.messages),
            **({"linked": True} if self.linked else {})}).encode()
        meta += b" " * (-len(meta) % 8)
        parts = [_BINARY_MAGIC, struct.pack("<I", len(meta)), meta,
                 np.ascontiguousarray(self.doc_ids, dtype=np.uint8).tobytes()]
        parts.extend(np.ascontiguousarray(getattr(self, name), dtype=_INT).tobytes()
                     for name in self._BINARY_INTS)
        floats = self._BINARY_FLOATS + (self._BINARY_LINKS if self.linked else ())
        parts.extend(np.ascontiguousarray(getattr(self, name), dtype=_FLOAT).tobytes()
                     for name in floats)
        return b"".join(parts)

    @staticmethod
    def from_bytes(data: bytes | memoryview, shard: str) -> Candidates:
        """Read :meth:`to_bytes`'s encoding; the arrays are read-only views of ``data`` (one
        per dtype, no copy). Raises ValueError saying what is wrong with a malformed
        encoding."""
        view = memoryview(data)
        if len(view) < 8 or view[:4] != _BINARY_MAGIC:
            raise ValueError("not a binary candidates encoding (bad magic)")
        (meta_len,) = struct.unpack_from("<I", view, 4)
        if meta_len % 8 or 8 + meta_len > len(view):
            raise ValueError(f"meta length {meta_len} does not fit in {len(view)} bytes")
        try:
            meta = json.loads(bytes(view[8:8 + meta_len]))
            m, t = int(meta["m"]), len(meta["terms"])
            if len(meta["occurrences"]) != t:
                raise ValueError(f"{len(meta['occurrences'])} occurrences for {t} terms")
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"bad meta: {exc}") from exc
        linked = bool(meta.get("linked", False))
        ints, floats = 4, 4 + 2 * t + len(BONUS_NAMES) + 2 * linked  # rows of m values
        at = 8 + meta_len
        want = at + m * (DOC_ID_LEN + 8 * (ints + floats))
        if m < 0 or len(view) != want:
            raise ValueError(f"{m} candidates of {t} terms take {want} bytes, not {len(view)}")
        ids = np.frombuffer(view, np.uint8, m * DOC_ID_LEN, at).reshape(m, DOC_ID_LEN)
        at += m * DOC_ID_LEN
        i = np.frombuffer(view, _INT, ints * m, at).reshape(ints, m)
        f = np.frombuffer(view, _FLOAT, floats * m, at + 8 * ints * m).reshape(floats, m)
        if not _INT.isnative:
            i, f = i.astype(_INT.newbyteorder("=")), f.astype(_FLOAT.newbyteorder("="))
        try:
            return Candidates(
                ids, partition=i[0], index=i[1], docs_after=i[2], doc_length=i[3],
                doc_rank=f[0], relevance=f[1], proximity=f[2], proximity_raw=f[3],
                freq=f[4:4 + t], term_relevance=f[4 + t:4 + 2 * t],
                bonuses=f[4 + 2 * t:4 + 2 * t + len(BONUS_NAMES)], linked=linked,
                link_relative=f[-2] if linked else np.zeros(0),
                link_trust=f[-1] if linked else np.zeros(0),
                terms=tuple(str(x) for x in meta["terms"]),
                occurrences=tuple(int(x) for x in meta["occurrences"]),
                documents=int(meta["documents"]), average_length=float(meta["average_length"]),
                estimate=int(meta["estimate"]), exhausted=bool(meta["exhausted"]),
                partial=bool(meta["partial"]), shard=shard,
                messages=tuple(str(x) for x in meta.get("messages", ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad meta: {exc}") from exc


class ShardClient(Protocol):
    """What the pipeline needs of a shard. Every shard client implements each member:
    :class:`~ranking.core.shard.local.LocalShard` (in-process),
    :class:`~ranking.core.remote.client.RemoteShard` (over HTTP, with the answers a remote
    shard cannot give here: no bundle path, no redirect sources, unknown document
    frequencies) and :class:`~ranking.core.search.mixes.MixedShard` (a crawl mix's wrapper,
    which answers with its inner shard's)."""

    name: str
    # the factor on the final scores of the results this shard represents: a crawl mix's
    # weight of the shard's crawl, 1 for a shard searched on its own
    weight: float

    @property
    def bundle_path(self) -> Path | None:
        """The folder of the bundle this process reads the shard from (the crawl's link
        scores and the bundle's embeddings lie beside it); None for a remote shard."""

    def candidates(self, query: str, parsed: ParsedQuery, n: int,
                   options: SearchOptions) -> Candidates:
        """The first ``n`` matches of the query, scored (raw, not grouped)."""

    def summaries(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Stored summaries of ``doc_ids`` (None where unknown)."""

    def summary_heads(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Only each summary's url and title, where the shard can read just those (else
        whole summaries): for a result page without snippets."""

    def snippet_summaries(self, doc_ids: Sequence[bytes], words: Sequence[str],
                          options: SearchOptions | None) -> list[dict[str, Any] | None]:
        """Summaries for snippets of the query ``words``: with an excerpt of the body of a
        page whose description holds none, where the shard can make one (else the plain
        summaries)."""

    def redirect_sources(self, url: str) -> Sequence[str]:
        """Urls whose redirect documents in this shard point at ``url`` (empty where the
        shard's index is not read in this process)."""

    def document_frequency(self, term: str) -> int | None:
        """The number of documents holding ``term`` in this shard; None where unknown (a
        remote shard)."""

