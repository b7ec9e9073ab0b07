"""One shard's side of a query: iterate, take the first n matches, score them (no grouping).

"First" is the seed's posting order (partition, then doc_map index) while the bundle is in
crawl order; once link analysis has re-ordered partitions by importance
(:mod:`indexer.core.reorder`), it is the global importance order: the first n by key across
every partition (:mod:`ranking.core.collect`), and Doc Rank counts the documents after a match in
that order (:meth:`LocalShard.importance_ranks`, :class:`indexer.core.grouping.ImportanceRanks`).

Layer: ``ranking.core``. :class:`LocalShard` reads one IndexDocumentBundle in-process; the shard
search endpoint (``ranking/api.py``) serves it to a name server's network iterator
(:mod:`ranking.core.network`), whose :class:`~ranking.core.network.HttpShard` has the same
:class:`ShardClient` contract. :mod:`ranking.core.pipeline` groups the candidates of every
shard, reads summaries for the top ones, and adds the url and title bonuses.

:class:`Candidates` are raw (ungrouped) scored matches: per document its doc_id, Doc Rank (and
its input, the number of documents after it), the DFR relevance with its per-term inputs, and
the proximity; the collection statistics they used are carried along for explanations.
"""

from __future__ import annotations

import base64
import json
import logging
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from indexer.core.errors import CorruptIndexError
from indexer.core.grouping import (
    ImportanceRanks,
    crawl_order_keys,
    documents_after,
    is_key_ordered,
)
from indexer.core.ids import DOC_ID_LEN, DOC_TYPE, DocType
from indexer.core.phrases import CachedPhraseLexicon
from indexer.core.reader import CollectionStats, IndexBundleReader, TermStats
from indexer.core.text import TextAnalyzer
from indexer.core.workdir import phrases_path

from .blocks import Column, decode_column_positions, key_index, key_partition, make_keys
from .doc_cache import DocumentCache
from .iterators import Budget, DecodedList, DecodedWordIterator
from .options import SearchOptions
from .query import ParsedQuery
from .scoring import (
    BONUS_NAMES,
    DESCRIPTION,
    LINK,
    TITLE,
    UrlItems,
    common_phrase_bonus,
    dfr_relevance,
    in_order_counts,
    proximity,
    record_relevance,
    title_keyword_bonus,
    url_items,
)
from .snippets import has_match, query_words, stored_body_windows
from .summary import INFLATE_ERRORS, StoredSummary
from .tiers import candidate_block

logger = logging.getLogger(__name__)
# a summary kept parsed: (the summary up to its body or None, whether a body follows, the id
# of the document whose member holds that body)
_KeptSummary = tuple[dict[str, Any] | None, bool, bytes | None]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def query_word_terms(parsed: ParsedQuery) -> tuple[list[str], list[int]]:
    """Distinct non-meta query terms (all disjuncts) and the largest count of each in one
    disjunct (a repeated term counts twice)."""
    mult: dict[str, int] = {}
    for d in parsed.disjuncts:
        counts: dict[str, int] = {}
        for t in d.all_terms:
            counts[t] = counts.get(t, 0) + 1
        for t, c in counts.items():
            mult[t] = max(mult.get(t, 0), c)
    return list(mult), list(mult.values())


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

    def __len__(self) -> int:
        return int(self.doc_rank.size)

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
        return out

    # the arrays of the binary encoding, in order: first the integer ones, then the floats
    # (per-term arrays T x m, bonuses len(BONUS_NAMES) x m), so that each dtype is one block
    _BINARY_INTS = ("partition", "index", "docs_after", "doc_length")
    _BINARY_FLOATS = ("doc_rank", "relevance", "proximity", "proximity_raw", "freq",
                      "term_relevance", "bonuses")

    def to_bytes(self) -> bytes:
        """The binary encoding the shard search endpoint sends when asked for ``fmt=bin``
        (:meth:`to_json` stays for other clients): the arrays are sent as their raw
        little-endian bytes, so that :meth:`from_bytes` reads them in place.

        Layout: ``YCND``, the length L of the meta (u32), the meta (a JSON object of the
        scalars and term lists, padded with spaces to a multiple of 8 bytes, so that every
        array starts 8-byte aligned), then ``doc_ids`` (m x 24 bytes), the integer arrays of
        :attr:`_BINARY_INTS` (int64, m values each) and the float arrays of
        :attr:`_BINARY_FLOATS` (float64; m values each, T x m for the per-term arrays,
        len(BONUS_NAMES) x m for the bonuses), in that order."""
        meta = json.dumps({
            "m": len(self), "terms": list(self.terms), "occurrences": list(self.occurrences),
            "documents": self.documents, "average_length": self.average_length,
            "estimate": self.estimate, "exhausted": self.exhausted, "partial": self.partial,
            "shard": self.shard, "messages": list(self.messages)}).encode()
        meta += b" " * (-len(meta) % 8)
        parts = [_BINARY_MAGIC, struct.pack("<I", len(meta)), meta,
                 np.ascontiguousarray(self.doc_ids, dtype=np.uint8).tobytes()]
        parts.extend(np.ascontiguousarray(getattr(self, name), dtype=_INT).tobytes()
                     for name in self._BINARY_INTS)
        parts.extend(np.ascontiguousarray(getattr(self, name), dtype=_FLOAT).tobytes()
                     for name in self._BINARY_FLOATS)
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
        ints, floats = 4, 4 + 2 * t + len(BONUS_NAMES)  # rows of m values
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
                freq=f[4:4 + t], term_relevance=f[4 + t:4 + 2 * t], bonuses=f[4 + 2 * t:],
                terms=tuple(str(x) for x in meta["terms"]),
                occurrences=tuple(int(x) for x in meta["occurrences"]),
                documents=int(meta["documents"]), average_length=float(meta["average_length"]),
                estimate=int(meta["estimate"]), exhausted=bool(meta["exhausted"]),
                partial=bool(meta["partial"]), shard=shard,
                messages=tuple(str(x) for x in meta.get("messages", ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad meta: {exc}") from exc


class ShardClient(Protocol):
    """What the pipeline needs of a shard, local or remote."""

    name: str

    def candidates(self, query: str, parsed: ParsedQuery, n: int,
                   options: SearchOptions) -> Candidates:
        """The first ``n`` matches of the query, scored (raw, not grouped)."""

    def summaries(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Stored summaries of ``doc_ids`` (None where unknown)."""


class _PartitionRegions:
    """Region weights of one partition's doc_map entries, decoded once on first use into flat
    arrays (CSR: ``start[i]:start[i+1]`` are entry i's regions), each region classified as
    title, description or link text.

    The doc_map's position_score_list of a group lists the representative's regions (a page:
    the title first, then one per summary sentence) followed by one region per link document
    folded into the group (anchor text); link-only groups have only link regions.

    Description weights are the summarizer's sentence scores, whose scale varies from page to
    page (one sentence may score hundreds); they are rescaled so that each entry's description
    positions weigh 1 on average (length-weighted): sentence scores then rank positions within
    a page while the title, description and link weights of Page Options set the balance
    between the regions, as ../shared/yioop-notes.md §7.1 describes.
    """

    __slots__ = ("start", "ends", "firsts", "weights", "kinds", "page_length", "entry", "codes",
                 "lengths", "title_length")

    def __init__(self, reader: IndexBundleReader, partition: int) -> None:
        dm = reader.doc_map(partition)
        member_link = dm.member_ids[:, DOC_TYPE] == DocType.LINK
        links = np.bincount(dm.member_group[member_link], minlength=dm.n).astype(np.int64)
        rep_is_link = dm.doc_ids[:, DOC_TYPE] == DocType.LINK
        lists = [dm.region_weights(i) for i in range(dm.n)]
        counts = np.array([len(x) for x in lists], dtype=np.int64)
        self.start = np.zeros(dm.n + 1, dtype=np.int64)
        np.cumsum(counts, out=self.start[1:])
        flat = [pair for x in lists for pair in x]
        self.ends = np.array([p for p, _ in flat], dtype=np.int64)
        weights = np.array([w for _, w in flat], dtype=np.float64)
        entry = np.repeat(np.arange(dm.n), counts)
        rank = np.arange(self.ends.size) - self.start[entry]
        kinds = np.full(self.ends.size, DESCRIPTION, dtype=np.int64)
        kinds[rank == 0] = TITLE
        kinds[rank >= counts[entry] - links[entry]] = LINK
        kinds[rep_is_link[entry]] = LINK
        self.kinds = kinds
        firsts = np.zeros(self.ends.size, dtype=np.int64)
        if self.ends.size:
            firsts[1:] = self.ends[:-1] + 1
            firsts[rank == 0] = 0
        self.firsts = firsts
        length = np.maximum(self.ends - firsts + 1, 0)
        desc = kinds == DESCRIPTION
        mass = np.bincount(entry[desc], weights=weights[desc] * length[desc], minlength=dm.n)
        size = np.bincount(entry[desc], weights=length[desc], minlength=dm.n)
        scale = np.divide(size, mass, out=np.ones(dm.n), where=mass > 0)
        weights[desc] *= scale[entry[desc]]
        self.weights = weights
        link = kinds == LINK
        self.entry = entry.astype(np.int64)
        self.codes = (self.entry << 32) + self.ends  # ascending: entries, then positions
        self.lengths = length
        self.title_length = np.bincount(entry[kinds == TITLE], weights=length[kinds == TITLE],
                                        minlength=dm.n)
        self.page_length = np.maximum(
            dm.length - np.bincount(entry[link], weights=length[link],
                                    minlength=dm.n).astype(np.int64), 0)


class _UrlFeatures:
    """Query-independent url inputs of the bonuses of one partition's doc_map entries (for
    one language), as arrays filled on first use of each entry from the head of its stored
    summary: whether the url is a host root, a company-level domain, on a wiki host, its
    number of slashes, and its host and path words as word ids (one flat array; each entry's
    start and count), so that the bonuses of every candidate are computed with numpy."""

    __slots__ = ("known", "root", "cld", "wiki", "slashes", "host_at", "host_len", "path_at",
                 "path_len", "words", "used")

    def __init__(self, n: int) -> None:
        self.known = np.zeros(n, dtype=bool)
        self.root = np.zeros(n, dtype=bool)
        self.cld = np.zeros(n, dtype=bool)
        self.wiki = np.zeros(n, dtype=bool)
        self.slashes = np.zeros(n, dtype=np.int64)
        self.host_at = np.zeros(n, dtype=np.int64)
        self.host_len = np.zeros(n, dtype=np.int64)
        self.path_at = np.zeros(n, dtype=np.int64)
        self.path_len = np.zeros(n, dtype=np.int64)
        self.words = np.zeros(1024, dtype=np.int64)
        self.used = 0

    def add(self, entry: int, items: UrlItems, word_ids: dict[str, int]) -> None:
        ids = [word_ids.setdefault(w, len(word_ids))
               for w in (*items.host_words, *items.path_words)]
        if self.used + len(ids) > self.words.size:
            self.words = np.resize(self.words, max(2 * self.words.size, self.used + len(ids)))
        self.words[self.used:self.used + len(ids)] = ids
        self.host_at[entry] = self.used
        self.host_len[entry] = len(items.host_words)
        self.path_at[entry] = self.used + len(items.host_words)
        self.path_len[entry] = len(items.path_words)
        self.used += len(ids)
        self.root[entry] = items.is_root
        self.cld[entry] = items.is_cld
        self.wiki[entry] = "wikipedia" in items.host
        self.slashes[entry] = items.slashes
        self.known[entry] = True

    def hits(self, at: IntArray, length: IntArray, query_ids: IntArray) -> IntArray:
        """For each entry (its words ``at[i]:at[i] + length[i]``), how many of its words are
        among ``query_ids`` (a repeated word counts each time)."""
        if not query_ids.size or not length.sum():
            return np.zeros(at.size, dtype=np.int64)
        before = np.cumsum(length) - length
        flat = np.repeat(at - before, length) + np.arange(int(length.sum()))
        words = self.words[flat]
        hit = words == query_ids[0]  # a query has a few words: compares beat np.isin's sort
        for word in query_ids[1:].tolist():
            hit |= words == word
        return np.bincount(np.repeat(np.arange(at.size), length), weights=hit,
                           minlength=at.size).astype(np.int64)


class LocalShard:
    """A shard read in-process from an :class:`IndexBundleReader`.

    Owns the reader's decoded per-partition data (region weights) for its lifetime.
    """

    def __init__(self, reader: IndexBundleReader, name: str = "local") -> None:
        self.reader = reader
        self.name = name
        self._regions: dict[int, _PartitionRegions] = {}
        self._url_features: dict[tuple[int, str], _UrlFeatures] = {}
        self._word_ids: dict[str, int] = {}
        self.analyzer = TextAnalyzer()
        self._filters: dict[str, IntArray] = {}
        self._decoded: dict[tuple[str, bool], DecodedList] = {}
        self._decoded_size = 0
        self._decoded_sizes: dict[tuple[str, bool], int] = {}
        self._heads: DocumentCache[bytes, tuple[dict[str, Any] | None]] = \
            DocumentCache(self.HEAD_CACHE)
        # (doc id, read to the links) -> (summary to the body or None, whether a body follows,
        # the id of the member it was read from: the page's own, or for a link the page's)
        self._documents: DocumentCache[tuple[bytes, bool], _KeptSummary] = \
            DocumentCache(self.DOCUMENT_CACHE)
        self._redirects: DocumentCache[str, tuple[str, ...]] = DocumentCache(self.DOCUMENT_CACHE)
        self._term_stats: DocumentCache[str, TermStats] = DocumentCache(self.DOCUMENT_CACHE)
        self._stats: tuple[object, CollectionStats] | None = None
        self._ranks: tuple[object, ImportanceRanks | None] | None = None
        # the bundle's common phrases (phrases.npz), reloaded when the file changes
        path = getattr(reader, "path", None)
        self.phrases = CachedPhraseLexicon(phrases_path(path)) if path is not None else None
        # a reader loads files lazily and shares file handles: one query at a time
        self.lock = threading.RLock()

    def collection_stats(self) -> CollectionStats:
        """The reader's collection statistics, summed once per snapshot of the bundle (the
        reader sums every partition's document lengths each time it is asked; a refreshed
        reader has a new partition list)."""
        kept = self._stats
        if kept is None or kept[0] is not self.reader.partitions:
            kept = self._stats = (self.reader.partitions, self.reader.collection_stats())
        return kept[1]

    def importance_ranks(self) -> ImportanceRanks | None:
        """The global key order of this snapshot's doc_map entries
        (:class:`indexer.core.grouping.ImportanceRanks`), built once per snapshot like
        :meth:`collection_stats`, or None when no partition is importance-ordered (the seed's
        crawl order then holds, and candidates and Doc Rank are as the seed computes them).

        A partition is ordered when its MANIFEST carries the tag of the importance it was
        re-ordered by (:meth:`IndexBundleReader.order_tag`) and its doc_map's score column
        (the key) does not increase; any other partition of the snapshot (the active one,
        one finished since the last link analysis) takes its crawl-order key
        ``log10(G - j)``, the key it would have with importance 0, so that a mixed snapshot
        has one order."""
        kept = self._ranks
        if kept is None or kept[0] is not self.reader.partitions:
            parts = []
            ordered = False
            for part in self.reader.partitions:
                dm = self.reader.doc_map(part.number)
                if self.reader.order_tag(part.number) is not None and is_key_ordered(dm.score):
                    parts.append((part.number, dm.score))
                    ordered = True
                else:
                    parts.append((part.number, crawl_order_keys(dm.n)))
            kept = self._ranks = (self.reader.partitions,
                                  ImportanceRanks.of(parts) if ordered else None)
        return kept[1]

    def _features(self, partition: int, index: IntArray, lang: str) -> _UrlFeatures:
        """The url features of ``partition``'s entries, with entries ``index`` filled (their
        urls read from the heads of their summaries the first time; query-independent, kept
        for the reader's lifetime like a document cache)."""
        features = self._url_features.get((partition, lang))
        if features is None:
            features = self._url_features[(partition, lang)] = _UrlFeatures(
                self.reader.doc_map(partition).n)
        for i in np.unique(index[~features.known[index]]).tolist():
            url, _ = self.reader.summary_head(partition, i)
            features.add(i, url_items(url, "", self.analyzer, lang), self._word_ids)
        return features

    def _bonuses(self, parts: IntArray, index: IntArray, terms: Sequence[str],
                 title_hits: FloatArray, title_len: FloatArray, lang: str,
                 options: SearchOptions, title_terms: FloatArray) -> FloatArray:
        """The bonus factors of every candidate, rows in BONUS_NAMES order: the url bonuses
        from its url (read from the head of its summary), the title keyword bonus from its
        positions in the title region (title words that are query terms / title words, times
        the distinct query terms in the title / distinct query terms)."""
        m = parts.size
        out = np.zeros((len(BONUS_NAMES), m))
        for p in np.unique(parts).tolist():
            sel = np.flatnonzero(parts == p)
            rows = index[sel]
            f = self._features(p, rows, lang)
            query_ids = np.array([self._word_ids[t] for t in set(terms) if t in self._word_ids],
                                 dtype=np.int64)
            out[0, sel] = np.where(f.root[rows], options.host_url_bonus, 0.0)
            out[1, sel] = np.where(f.cld[rows], options.cld_url_bonus, 0.0)
            out[2, sel] = np.where(f.wiki[rows], options.wiki_bonus, 0.0)
            out[3, sel] = options.num_slashes_bonus / (1 + f.slashes[rows])
            for row, bonus, at, length in ((4, options.host_keyword_bonus, f.host_at,
                                            f.host_len),
                                           (6, options.path_bonus, f.path_at, f.path_len)):
                n = length[rows]
                hits = f.hits(at[rows], n, query_ids)
                out[row, sel] = np.divide(bonus * hits, n, out=np.zeros(sel.size),
                                          where=n > 0)
        out[5] = title_keyword_bonus(options.title_bonus, title_hits, title_len, title_terms,
                                     len(terms))
        return out

    def _phrase_bonus(self, parsed: ParsedQuery, terms: Sequence[str],
                      positions: Sequence[tuple[IntArray, IntArray]], m: int,
                      options: SearchOptions) -> FloatArray:
        """The common phrase bonus of every candidate: the query's runs of adjacent words
        that the bundle's lexicon knows as common phrases, found in order in the positions
        decoded for scoring (:mod:`indexer.core.phrases`)."""
        lexicon = self.phrases.get() if self.phrases is not None and \
            options.common_phrase_bonus else None
        runs = [run for d in parsed.disjuncts for run in d.runs]
        if lexicon is None or not runs or not m:
            return np.zeros(m)
        found = lexicon.phrases_in(runs)
        at = {t: j for j, t in enumerate(terms)}
        counts = [in_order_counts([positions[at[t]] for t in phrase], m)
                  for phrase in found if all(t in at for t in phrase)]
        return common_phrase_bonus(options.common_phrase_bonus, counts, m)

    @staticmethod
    def _record_lengths(loaded: list[_PartitionRegions], records: IntArray) -> IntArray:
        out = np.zeros(records.size, dtype=np.int64)
        part = records >> 40
        for k, regions in enumerate(loaded):
            sel = part == k
            out[sel] = regions.lengths[records[sel] & ((1 << 40) - 1)]
        return out

    def _partition_regions(self, partition: int) -> _PartitionRegions:
        regions = self._regions.get(partition)
        if regions is None:
            regions = self._regions[partition] = _PartitionRegions(self.reader, partition)
        return regions

    def _list_regions(self, decoded: DecodedList, decoder: Any) -> dict[str, np.ndarray]:
        """The region of every position of a decoded list (query-independent, kept in the
        list's memo): its partition, its index in the partition's region codes (-1 after the
        last region), its kind (DESCRIPTION there) and its region weight (1 there)."""
        memo = decoded.memo
        if "region_at" in memo:
            return memo
        pos, starts = decoded.all_positions(decoder)
        counts = np.diff(starts)
        keys = np.repeat(decoded.keys, counts)
        part = key_partition(keys)
        entry = key_index(keys)
        at_all = np.full(pos.size, -1, dtype=np.int64)
        kind = np.full(pos.size, DESCRIPTION, dtype=np.int64)
        weight = np.ones(pos.size)
        for p in np.unique(part).tolist():
            regions = self._partition_regions(p)
            sel = np.flatnonzero(part == p)
            if not sel.size or not regions.codes.size:
                continue
            e = entry[sel]
            at = np.searchsorted(regions.codes, (e << 32) + pos[sel])
            ok = at < regions.codes.size
            ok[ok] = regions.entry[at[ok]] == e[ok]
            sel, at = sel[ok], at[ok]
            at_all[sel] = at
            kind[sel] = regions.kinds[at]
            weight[sel] = regions.weights[at]
        memo.update(region_part=part, region_at=at_all, region_kind=kind,
                    region_weight=weight)
        return memo

    FILTER_PREFIXES = ("safe:", "lang:", "media:", "filetype:", "site:all", "code:")

    DECODED_POSTINGS = 8_000_000  # postings and positions kept decoded (8-40 bytes each)

    def decoded_list(self, term: str, positional: bool) -> DecodedList | None:
        """A term's whole posting list, decoded once and kept (least recently used out, at
        most DECODED_POSTINGS postings and positions; a list's positions are decoded on first
        use): the bit-level decoding in Python is the most expensive step of a query, and the
        same terms come back query after query. Lists longer than a tenth of the budget are
        decoded block by block each time."""
        key = (term, positional)
        got = self._decoded.pop(key, None)
        if got is None:
            cursor = self.reader.postings(term)
            if cursor.docs > self.DECODED_POSTINGS // 10:
                return None
            got = DecodedList.of(cursor, positional)
        # sizes grow when a list's positions are decoded: recount this one on every use
        self._decoded_size += got.size - self._decoded_sizes.pop(key, 0)
        self._decoded_sizes[key] = got.size
        while self._decoded_size > self.DECODED_POSTINGS and self._decoded:
            old = next(iter(self._decoded))
            self._decoded.pop(old)
            self._decoded_size -= self._decoded_sizes.pop(old)
        self._decoded[key] = got
        return got

    def filter_keys(self, term: str) -> IntArray | None:
        """Decoded keys of a filter meta word (the parser's automatic ``lang:``/``safe:`` and
        similar broad words), kept for the reader's lifetime like Lucene's filter cache: every
        query intersects with them, and skipping through their long lists block by block would
        dominate the query time."""
        if not term.startswith(self.FILTER_PREFIXES):
            return None
        keys = self._filters.get(term)
        if keys is None:
            cursor = self.reader.postings(term)
            parts = [make_keys(b.partition, b.doc_index) for b in cursor]
            keys = np.concatenate(parts) if parts else np.zeros(0, np.int64)
            self._filters[term] = keys
        return keys

    def summaries(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Summaries of ``doc_ids``. For a link document (a group with no page among the
        candidates) the target page's summary is looked up through its ``info:`` meta word, as
        Yioop does; when the page was never indexed the summary says ``page_indexed: False``.
        A page's summary also says whether a cached copy is kept (``has_cache``)."""
        return self.snippet_summaries(doc_ids, (), None)

    def snippet_summaries(self, doc_ids: Sequence[bytes], words: Sequence[str],
                          options: SearchOptions | None) -> list[dict[str, Any] | None]:
        """:meth:`summaries` for snippets: never the page's whole text (``"body"``), which a
        summary read stops before (:class:`ranking.core.summary.StoredSummary`), but, for a
        page whose description holds none of the query ``words``, a ``"body_excerpt"``: the
        snippet windows of its body (:func:`ranking.core.snippets.stored_body_windows`), the
        body inflated only up to them. With ``options`` (a search making snippets) a page's
        summary is read only up to its outlinks (``"links"`` and the keys after them are not
        in it): the search shows none of them. Those summaries are kept parsed
        (:class:`ranking.core.doc_cache.DocumentCache`, DOCUMENT_CACHE of them); a body
        excerpt is made for each query."""
        query = query_words(words) if options is not None else None
        until_links = options is not None
        with self.lock:
            out = []
            for doc_id in doc_ids:
                key = (doc_id, until_links)
                kept = self._documents.get(key)
                stored = None
                if kept is None:
                    stored, source = self._resolved(doc_id, until_links)
                    kept = (stored.summary, stored.has_body, source) if stored is not None \
                        else (None, False, None)
                    if until_links:  # never a summary with its outlinks (they can be long)
                        self._documents.put(key, kept)
                summary_kept, has_body, source = kept
                if summary_kept is None:
                    out.append(None)
                    continue
                summary = dict(summary_kept)
                if has_body and source is not None and query is not None and \
                        options is not None and \
                        not has_match(str(summary.get("description", "")), query):
                    try:  # the body of the page shown, read again from its own member
                        stored = stored or self._stored(source, until_links)
                        if stored is not None:
                            summary["body_excerpt"] = stored_body_windows(stored, words,
                                                                          options)
                    except (ValueError, *INFLATE_ERRORS) as exc:  # damaged: show the description
                        logger.warning("body of %s unreadable: %s", source.hex(), exc)
                out.append(summary)
            return out

    DOCUMENT_CACHE = 4096  # documents' summaries (to their bodies) kept parsed, least used out
    MAX_REDIRECT_SOURCES = 8  # redirect sources compared with a shown result's url

    def redirect_sources(self, url: str) -> tuple[str, ...]:
        """Urls whose redirect documents point at ``url`` (their ``location:`` meta word), at
        most MAX_REDIRECT_SOURCES, kept per url like summaries."""
        if not url:
            return ()
        with self.lock:
            return self._redirects.load(url, self._read_redirect_sources)

    def _read_redirect_sources(self, url: str) -> tuple[str, ...]:
        found: list[str] = []
        for block in self.reader.postings(f"location:{url}"):
            for index in block.doc_index.tolist():
                source, _ = self.reader.summary_head(block.partition, int(index))
                if source and source != url and source not in found:
                    found.append(source)
                if len(found) >= self.MAX_REDIRECT_SOURCES:
                    return tuple(found)
        return tuple(found)

    def _resolved(self, doc_id: bytes,
                  until_links: bool) -> tuple[StoredSummary | None, bytes | None]:
        """What a result shows of ``doc_id``: its stored summary (with ``has_cache``), or for a
        link document the summary of the page it points at; and the id of the document whose
        member that summary was read from (None when it is no document's: a link to a page
        never indexed). (None, None) when ``doc_id`` is not in the bundle."""
        stored = self._stored(doc_id, until_links)
        if stored is None:
            return None, None
        if doc_id[DOC_TYPE] == DocType.LINK:
            return self._page_for_link(stored.summary, until_links)
        stored.summary["has_cache"] = self._has_cache(doc_id)
        return stored, doc_id

    def _stored(self, doc_id: bytes, until_links: bool = False) -> StoredSummary | None:
        """``doc_id``'s stored summary read up to its body (or its links), None when it is not
        in the bundle."""
        found = self.reader.summary_gzip(doc_id)
        if found is None:
            return None
        path, member = found
        try:
            return StoredSummary.of(member, until_links)
        except (ValueError, *INFLATE_ERRORS) as exc:
            raise CorruptIndexError(path, f"summary of {doc_id.hex()}: {exc}") from exc

    def _has_cache(self, doc_id: bytes) -> bool:
        """Whether the bundle keeps a cached copy of ``doc_id`` (its newest doc_map member
        has a cache length): the search page's "cached" link, told with the summary so that
        the page need not look the document up again."""
        for part in reversed(self.reader.partitions):
            row = part.doc_map.find_member(doc_id)
            if row is not None:
                return int(part.doc_map.cache_length[row]) > 0
        return False

    def summary_heads(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Like :meth:`summaries` but only each summary's url and title, read from the head
        of the stored summary (enough for a result list without snippets). Pages whose robot
        metas forbid indexing are never stored (the page processor drops them), so nothing is
        lost by not reading the metas. Heads are kept (at most HEAD_CACHE, least used out) for the
        shard's lifetime, a snapshot of the index: the same pages head the result lists query
        after query, and each head is otherwise a gzip member to inflate."""
        with self.lock:
            out: list[dict[str, Any] | None] = []
            for doc_id in doc_ids:
                cached = self._heads.load(doc_id, self._summary_head)
                out.append(dict(cached[0]) if cached[0] is not None else None)
            return out

    HEAD_CACHE = 100_000  # (url, title) heads kept decompressed, least used out

    def _summary_head(self, doc_id: bytes) -> tuple[dict[str, Any] | None]:
        """The head summary of one document (see :meth:`summary_heads`), in a 1-tuple so
        that a missing document is cached too."""
        head = self.reader.summary_head_of(doc_id)
        if head is None:
            return (None,)
        summary: dict[str, Any] = {"url": head[0], "title": head[1]}
        if doc_id[DOC_TYPE] == DocType.LINK:
            summary["kind"] = "link"
            block = self.reader.postings(f"info:{head[0]}").next_block()
            if block is None:
                summary["page_indexed"] = False
            else:
                url, title = self.reader.summary_head(block.partition, int(block.doc_index[0]))
                summary = {"url": url, "title": title, "page_indexed": True}
        return (summary,)

    def _page_for_link(self, link: dict[str, Any],
                       until_links: bool = False) -> tuple[StoredSummary, bytes | None]:
        """The stored summary of the page a link document points at (its ``info:`` meta
        word) and that page's id, or the link's own marked ``page_indexed: False`` and
        None."""
        not_indexed = StoredSummary({**link, "page_indexed": False}, False, None, b"")
        cursor = self.reader.postings(f"info:{link.get('url', '')}")
        block = cursor.next_block()
        if block is None:
            return not_indexed, None
        page_id = self.reader.doc_id(block.partition, int(block.doc_index[0]))
        page = self._stored(page_id, until_links)
        if page is None or not page.summary:
            return not_indexed, None
        page.summary.update(page_indexed=True, has_cache=self._has_cache(page_id))
        return page, page_id

    def candidates(self, query: str, parsed: ParsedQuery, n: int,
                   options: SearchOptions) -> Candidates:
        with self.lock:
            return self._candidates(parsed, n, options)

    def _candidates(self, parsed: ParsedQuery, n: int, options: SearchOptions) -> Candidates:
        reader = self.reader
        terms, mult = query_word_terms(parsed)
        stats = self.collection_stats()
        if stats.documents == 0 or parsed.is_empty:
            return Candidates.empty(self.name, terms)
        budget = Budget(options.intersect_time_budget)
        ranks = self.importance_ranks()
        # the first n matches (in global importance order once partitions are ordered) and
        # the first n anchor-text matches (ranking.core.tiers)
        block, exhausted, plan = candidate_block(reader, parsed, n, budget, ranks,
                                                 self.filter_keys, self.decoded_list)
        m = len(block)
        keys = block.keys
        parts = key_partition(keys)
        index = key_index(keys)
        dr = np.zeros(m)
        after = np.zeros(m, dtype=np.int64)
        ld = np.zeros(m, dtype=np.int64)
        page_len = np.zeros(m, dtype=np.int64)
        ids = np.zeros((m, DOC_ID_LEN), dtype=np.uint8)
        entry_part = np.zeros(m, dtype=np.int64)  # which loaded partition each row is in
        title_len = np.zeros(m)
        kind_weight = np.array([options.title_weight, options.description_weight,
                                options.link_weight])
        sizes = list(stats.partition_sizes)
        numbers = [p.number for p in reader.partitions]
        loaded: list[_PartitionRegions] = []
        for p in np.unique(parts):
            rows = np.flatnonzero(parts == p)
            idx = index[rows]
            dm = reader.doc_map(int(p))
            if ranks is None:
                dr[rows] = reader.doc_rank(int(p), idx)
                after[rows] = documents_after(sizes, numbers.index(int(p)), idx)
            else:  # Doc Rank from the documents after it in global importance order
                after[rows] = ranks.after[int(p)][idx]
                dr[rows] = ranks.doc_rank(int(p), idx)
            ld[rows] = dm.length[idx]
            ids[rows] = dm.doc_ids[idx]
            regions = self._partition_regions(int(p))
            page_len[rows] = regions.page_length[idx]
            title_len[rows] = regions.title_length[idx]
            entry_part[rows] = len(loaded)
            loaded.append(regions)
        T = len(terms)
        freq = np.zeros((T, m))
        title_hits = np.zeros(m)
        title_terms = np.zeros(m)  # distinct query terms in the title
        positions = []
        link_hits: list[tuple[IntArray, IntArray, IntArray, FloatArray]] = []
        loaded_at = np.zeros(max(numbers, default=0) + 1, dtype=np.int64)
        for k, p in enumerate(np.unique(parts).tolist()):
            loaded_at[p] = k
        for j, term in enumerate(terms):
            col = block.columns.get(term) or Column.empty(m)
            word = plan.words.get(term)
            decoded = word.decoded if isinstance(word, DecodedWordIterator) and \
                (col.freq > 0).all() else None
            if decoded is not None:
                flat, counts = decoded.position_rows(plan.decoder, keys)
                pos = decoded.all_positions(plan.decoder)[0][flat]
            else:
                pos, counts = decode_column_positions(plan.decoder, keys, col)
            positions.append((pos, counts))
            prow = np.repeat(np.arange(m, dtype=np.int64), counts)
            # each position's region, looked up in its partition's (entry, last position)
            # codes: title positions weigh the title weight, description positions their
            # (rescaled) sentence score times the description weight, anchor text its weight
            # times the link weight; positions after the last region the description weight
            if decoded is not None:  # looked up once for the whole list, kept with it
                memo = self._list_regions(decoded, plan.decoder)
                kind = memo["region_kind"][flat]
                at = memo["region_at"][flat]
                w = np.where(kind == TITLE, kind_weight[TITLE],
                             memo["region_weight"][flat] * kind_weight[kind])
                region = np.where(at >= 0, (loaded_at[memo["region_part"][flat]] << 40) | at,
                                  -1)
                loaded_now: list[_PartitionRegions] = []
            else:
                w = np.full(pos.size, float(options.description_weight))
                kind = np.full(pos.size, DESCRIPTION, dtype=np.int64)
                region = np.full(pos.size, -1, dtype=np.int64)
                loaded_now = loaded
            for k, regions in enumerate(loaded_now):
                sel = np.flatnonzero(entry_part[prow] == k) if len(loaded) > 1 else \
                    np.arange(pos.size)
                if not sel.size or not regions.codes.size:
                    continue
                entry = index[prow[sel]]
                at = np.searchsorted(regions.codes, (entry << 32) + pos[sel])
                ok = at < regions.codes.size
                ok[ok] = regions.entry[at[ok]] == entry[ok]
                sel, at = sel[ok], at[ok]
                rk = regions.kinds[at]
                kind[sel] = rk
                w[sel] = np.where(rk == TITLE, kind_weight[TITLE],
                                  regions.weights[at] * kind_weight[rk])
                region[sel] = (k << 40) | at
            page = kind != LINK
            freq[j] = np.bincount(prow[page], weights=w[page], minlength=m)
            in_title = np.bincount(prow[kind == TITLE], minlength=m)
            title_hits += in_title
            title_terms += in_title > 0
            lk = ~page
            if lk.any():
                link_hits.append((np.full(int(lk.sum()), j), region[lk], prow[lk], w[lk]))
        occurrences = tuple(self._term_stats.load(t, reader.term_stats).occurrences
                            for t in terms)
        rel, parts_rel = dfr_relevance(freq, occurrences, stats.documents,
                                       stats.average_length, page_len)
        has_page = page_len > 0
        rel = np.where(has_page, rel, 0.0)
        parts_rel = np.where(has_page[None, :], parts_rel, 0.0)
        if link_hits:
            term_of, rec, rec_prow, rec_w = (np.concatenate(x) for x in zip(*link_hits,
                                                                             strict=True))
            records, first, rec_id = np.unique(rec, return_index=True, return_inverse=True)
            link_freq = np.zeros((T, records.size))
            np.add.at(link_freq, (term_of, rec_id.ravel()), rec_w)
            link_len = self._record_lengths(loaded, records)
            link_rel, link_parts = record_relevance(rec_prow[first], link_freq, link_len,
                                                    occurrences, stats.documents,
                                                    stats.average_length, m)
            rel = rel + link_rel
            parts_rel = parts_rel + link_parts
        if parsed.word_count >= 2 and T:
            prox, prox_raw = proximity(positions, mult, ld, m)
            prox = prox * options.proximity_bonus
        else:
            prox = prox_raw = np.zeros(m)
        est = plan.root.estimate
        if exhausted:
            est = m
        elif m:
            drivers = [w for w in plan.words.values() if w.consumed]
            if drivers:
                smallest = min(drivers, key=lambda w: w.estimate)
                est = max(m, min(est, int(m * smallest.estimate / max(smallest.consumed, 1))))
        messages = ("search stopped at the time budget; results are partial",) \
            if budget.partial else ()
        bonuses = self._bonuses(parts, index, terms, title_hits, title_len, parsed.lang,
                                options, title_terms)
        bonuses[BONUS_NAMES.index("common_phrase")] = self._phrase_bonus(
            parsed, terms, positions, m, options)
        return Candidates(ids, parts, index, after, dr, rel, prox, prox_raw, ld, freq,
                          parts_rel if T else np.zeros((0, m)), tuple(terms), occurrences,
                          stats.documents, stats.average_length, int(est), exhausted,
                          budget.partial, self.name, messages, bonuses)
