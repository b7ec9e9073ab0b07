"""Needy queries (seed 001, after Olston): crawl first the urls that could answer the queries the
index answers badly.

Layer: ``crawler.core`` (pure Python + numpy). The search side logs every query with its top-K
scores (``querylog.models.QueryLog``); the glue (``crawler.machines.needy``) turns the log into
:class:`NeedyQuery` values: a query is *needy* when the mean of its top-K relevance scores
(missing results count 0) is below the crawl's threshold, and ``frequency`` is how often it was
asked. The queue server hands them to its crawl queue, which scores every uncrawled url with
:class:`NeedyIndex`:

* an uncrawled url is described by the tokens of the url and of the anchor texts that led to it
  (:func:`describe`): lower-cased runs of letters, digits-only runs and url noise (``http``,
  ``www``, ``com``, ``html``...) dropped, consecutive repeats folded;
* a query's shingles are its ``w``-grams (the whole token tuple when it has fewer than ``w``
  tokens); a page's shingles are all its 1- to ``w``-grams, so a one-word query can match a page;
* ``I(p, q)`` is 1 when at least ``rho`` of the query's shingles are among the page's, else 0;
* the need score is ``P(p) = sum over needy q of f(q) * I(p, q)``.

Shingles are hashed to 64 bits (blake2b, stable across processes); matching a batch of urls is a
sorted-array join in numpy (no per-query loop). The crawl priority combining this with
query-independent importance is :func:`combined_priority`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_SHINGLE = 2
DEFAULT_RHO = 0.5

# url and html noise (seed 001: "removing common html words (http, www, com, etc.)")
NOISE_TOKENS = frozenset({
    "http", "https", "www", "com", "org", "net", "edu", "gov", "io", "html", "htm", "php",
    "asp", "aspx", "jsp", "cgi", "index", "default", "en", "us", "the", "of", "and", "a",
    "to", "in", "for", "on", "is", "de",
})
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


class NeedyQueryError(ValueError):
    """A needy query or a matching parameter that cannot be used (empty text, bad frequency)."""


@dataclass(frozen=True, slots=True)
class NeedyQuery:
    """A logged query whose results are poor: ``frequency`` f(q) (how often it was asked in the
    window) and ``relevance`` (the mean of its top-K scores, kept for display)."""

    text: str
    frequency: float
    relevance: float = 0.0


def tokens(text: str) -> list[str]:
    """Seed 001's tokenizer: split on anything not a letter or digit, lower-case, drop
    digits-only tokens and url noise, fold consecutive repeats (``fcntl.fcntl`` -> fcntl)."""
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if token.isdigit() or token in NOISE_TOKENS:
            continue
        if out and out[-1] == token:
            continue
        out.append(token)
    return out


def describe(url: str, anchors: Iterable[str] = ()) -> list[list[str]]:
    """An uncrawled page as token sequences: its url's, then each anchor text's. Shingles never
    span two sequences."""
    sequences = [tokens(url)]
    sequences.extend(tokens(text) for text in anchors if text)
    return [seq for seq in sequences if seq]


def _hash(shingle: Sequence[str]) -> int:
    digest = hashlib.blake2b(" ".join(shingle).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def query_shingles(words: Sequence[str], w: int) -> set[int]:
    if len(words) < w:
        return {_hash(words)} if words else set()
    return {_hash(words[i:i + w]) for i in range(len(words) - w + 1)}


def page_shingles(sequences: Iterable[Sequence[str]], w: int) -> set[int]:
    found: set[int] = set()
    for seq in sequences:
        for n in range(1, w + 1):
            for i in range(len(seq) - n + 1):
                found.add(_hash(seq[i:i + n]))
    return found


class NeedyIndex:
    """The needy queries, indexed by shingle for matching many uncrawled urls at once.

    Immutable after construction. ``scores(descriptions)`` returns P(p) for each description
    (see :func:`describe`); ``matches(description)`` names the queries a url matched."""

    def __init__(self, queries: Iterable[NeedyQuery], w: int = DEFAULT_SHINGLE,
                 rho: float = DEFAULT_RHO) -> None:
        if w < 1:
            raise NeedyQueryError(f"the shingle width must be at least 1, not {w}")
        if not 0.0 < rho <= 1.0:
            raise NeedyQueryError(f"rho must be in (0, 1], not {rho}")
        self.w, self.rho = int(w), float(rho)
        merged: dict[tuple[str, ...], list[float]] = {}
        texts: dict[tuple[str, ...], str] = {}
        for query in queries:
            if not math.isfinite(query.frequency) or query.frequency < 0:
                raise NeedyQueryError(f"bad frequency {query.frequency!r} for {query.text!r}")
            words = tuple(tokens(query.text))
            if not words or query.frequency == 0:
                continue  # nothing a url could match, or never asked
            entry = merged.setdefault(words, [0.0, query.relevance])
            entry[0] += query.frequency
            texts.setdefault(words, query.text)
        self.queries: tuple[NeedyQuery, ...] = tuple(
            NeedyQuery(texts[words], freq, rel) for words, (freq, rel) in merged.items())
        self.frequency = np.array([q.frequency for q in self.queries], dtype=np.float64)
        keys: list[int] = []
        owners: list[int] = []
        required = []
        for qid, words in enumerate(merged):
            shingles = query_shingles(words, self.w)
            required.append(max(1, math.ceil(self.rho * len(shingles) - 1e-9)))
            keys.extend(shingles)
            owners.extend([qid] * len(shingles))
        self.required = np.array(required, dtype=np.int64)
        key_arr = np.array(keys, dtype=np.int64)
        owner_arr = np.array(owners, dtype=np.int64)
        order = np.lexsort((owner_arr, key_arr))
        self._keys = key_arr[order]
        self._owners = owner_arr[order]

    def __len__(self) -> int:
        return len(self.queries)

    def _pairs(self, descriptions: Sequence[Sequence[Sequence[str]]]
               ) -> tuple[np.ndarray, np.ndarray]:
        """(page index, query id) of every (page, query) with I(p, q) = 1."""
        empty = np.zeros(0, np.int64)
        if not len(self.queries) or not descriptions:
            return empty, empty
        hashes: list[int] = []
        pages: list[int] = []
        for index, description in enumerate(descriptions):
            shingles = page_shingles(description, self.w)
            hashes.extend(shingles)
            pages.extend([index] * len(shingles))
        if not hashes:
            return empty, empty
        h = np.array(hashes, dtype=np.int64)
        p = np.array(pages, dtype=np.int64)
        lo = np.searchsorted(self._keys, h, side="left")
        hi = np.searchsorted(self._keys, h, side="right")
        counts = hi - lo
        hit = counts > 0
        if not hit.any():
            return empty, empty
        lo, counts, p = lo[hit], counts[hit], p[hit]
        # expand each hit shingle to every query holding it
        total = int(counts.sum())
        starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
        positions = starts + np.arange(total)
        qids = self._owners[positions]
        page_of = np.repeat(p, counts)
        nq = len(self.queries)
        pair, matched = np.unique(page_of * nq + qids, return_counts=True)
        page_ids, query_ids = pair // nq, pair % nq
        ok = matched >= self.required[query_ids]
        return page_ids[ok], query_ids[ok]

    def scores(self, descriptions: Sequence[Sequence[Sequence[str]]]) -> np.ndarray:
        """P(p) = sum of f(q) * I(p, q) over the needy queries, one per description."""
        pages, queries = self._pairs(descriptions)
        return np.bincount(pages, weights=self.frequency[queries],
                           minlength=len(descriptions)).astype(np.float64)

    def matches(self, description: Sequence[Sequence[str]]) -> list[str]:
        """The needy queries one description matches, most frequent first."""
        _, queries = self._pairs([description])
        ranked = sorted(queries.tolist(), key=lambda q: (-self.frequency[q], q))
        return [self.queries[q].text for q in ranked]


def importance(trust: float, link_index: int) -> float:
    """Query-independent importance in [0, 1]: the mean of the url's trust (from its crawl
    policy, see :mod:`crawler.core.definition.policy`) and its link weight
    (``1 / (1 + log5(1 + i))`` for the ``i``-th link of its page after the fetcher ranked them
    by link score). The OPIC cash of the page-importance order is not part of it: a url
    filed in the needy lane has none yet (it is counted when the url is fetched)."""
    link = 1.0 / (1.0 + math.log(1.0 + max(0, link_index)) / math.log(5.0))
    return (min(1.0, max(0.0, trust)) + link) / 2.0


def combined_priority(importance_value: float, need: float, importance_weight: float,
                      need_weight: float) -> float:
    """The crawl priority: ``importance_weight * importance + need_weight * log(1 + need)``
    (the need score is a sum of query frequencies; its log keeps one very frequent query from
    swamping importance)."""
    return importance_weight * importance_value + need_weight * math.log1p(max(0.0, need))
