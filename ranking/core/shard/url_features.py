"""Url features of a shard's doc_map entries and the url and title bonuses computed from them.

Layer: ``ranking.core``. The url inputs of the seed's bonuses (host root, company-level domain,
wiki host, slashes, host and path words) are query-independent: :class:`UrlFeatures` keeps them
per partition as arrays, filled from the head of each entry's stored summary on first use
(:meth:`ranking.core.shard.local.LocalShard.bonuses`), or all at once from the partition's url
columns when it has them (:meth:`UrlFeatures.of_columns`), so that :func:`candidate_bonuses` computes
every candidate's bonuses with numpy (:mod:`ranking.core.scoring.formulas` has the formulas) from
the per-query inputs of :class:`BonusInputs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from indexer.core.partition.url_columns import CLD, DOTTED, ROOT, WIKI, UrlColumns
from indexer.core.text import TextAnalyzer
from ranking.core.options import SearchOptions
from ranking.core.scoring.formulas import (
    BONUS_NAMES,
    EXTENSIONS,
    UrlItems,
    title_keyword_bonus,
    url_terms,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class UrlFeatures:
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
        """Entry ``entry`` from its url items (:func:`~ranking.core.scoring.formulas.
        url_items`)."""
        self._put(entry, items.is_root, items.is_cld, "wikipedia" in items.host, items.slashes,
                  items.host_words, items.path_words, word_ids)

    def _put(self, entry: int, root: bool, cld: bool, wiki: bool, slashes: int,
             host_words: Sequence[str], path_words: Sequence[str],
             word_ids: dict[str, int]) -> None:
        ids = [word_ids.setdefault(w, len(word_ids)) for w in (*host_words, *path_words)]
        if self.used + len(ids) > self.words.size:
            self.words = np.resize(self.words, max(2 * self.words.size, self.used + len(ids)))
        self.words[self.used:self.used + len(ids)] = ids
        self.host_at[entry] = self.used
        self.host_len[entry] = len(host_words)
        self.path_at[entry] = self.used + len(host_words)
        self.path_len[entry] = len(path_words)
        self.used += len(ids)
        self.root[entry] = root
        self.cld[entry] = cld
        self.wiki[entry] = wiki
        self.slashes[entry] = slashes
        self.known[entry] = True

    def add_columns(self, entries: IntArray, columns: UrlColumns, analyzer: TextAnalyzer,
                    lang: str, word_ids: dict[str, int]) -> None:
        """Entries ``entries`` from the partition's url columns one by one, as
        :meth:`of_columns` gives them: for a few entries, where analysing every chunk of the
        partition would cost more."""
        vocab = columns.vocab
        for i in entries.tolist():
            words = []
            for start, chunks in ((columns.host_start, columns.host_chunks),
                                  (columns.path_start, columns.path_chunks)):
                own = chunks[start[i]:start[i + 1]].tolist()
                words.append(url_terms([vocab[c] for c in own], analyzer, lang))
            host, path = words
            flags = int(columns.flags[i])
            if path and path[-1] in EXTENSIONS and flags & DOTTED:
                path = path[:-1]
            self._put(i, bool(flags & ROOT), bool(flags & CLD), bool(flags & WIKI),
                      int(columns.slashes[i]), host, path, word_ids)

    @staticmethod
    def of_columns(columns: UrlColumns, analyzer: TextAnalyzer, lang: str,
                   word_ids: dict[str, int]) -> UrlFeatures:
        """Every entry's features from a partition's url columns, with no summary read: the
        same arrays as :meth:`add` of each entry's
        :func:`~ranking.core.scoring.formulas.url_items` (each distinct chunk is analysed
        once; an entry's words are its chunks' terms in order, as the analyzer gives them
        for the whole url part)."""
        n = len(columns)
        out = UrlFeatures(n)
        out.known[:] = True
        out.root[:] = (columns.flags & ROOT) > 0
        out.cld[:] = (columns.flags & CLD) > 0
        out.wiki[:] = (columns.flags & WIKI) > 0
        out.slashes[:] = columns.slashes
        # every chunk analysed in one call (the analyzer remembers each chunk's terms), then
        # looked up one by one
        analyzer.terms(" ".join(columns.vocab), lang)
        terms = [url_terms((chunk,), analyzer, lang) for chunk in columns.vocab]
        count = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
        first = np.cumsum(count) - count
        ids = np.fromiter((word_ids.setdefault(t, len(word_ids)) for x in terms for t in x),
                          dtype=np.int64, count=int(count.sum()))
        ext = np.fromiter((t in EXTENSIONS for x in terms for t in x), dtype=bool,
                          count=ids.size)
        words, exts = [], []
        used = 0
        for at, length, start, chunks in ((out.host_at, out.host_len, columns.host_start,
                                          columns.host_chunks),
                                         (out.path_at, out.path_len, columns.path_start,
                                          columns.path_chunks)):
            per_chunk = count[chunks]  # terms of every chunk occurrence
            flat = np.repeat(first[chunks] - (np.cumsum(per_chunk) - per_chunk), per_chunk)
            flat += np.arange(flat.size)
            entry = np.repeat(np.arange(n), np.diff(start))
            length[:] = np.bincount(entry, weights=per_chunk, minlength=n).astype(np.int64)
            at[:] = used + np.cumsum(length) - length
            words.append(ids[flat])
            exts.append(ext[flat])
            used += flat.size
        # a file extension ending a path whose last segment holds a "." is not a path word
        last = out.path_at + out.path_len - 1
        has = (out.path_len > 0) & ((columns.flags & DOTTED) > 0)
        has[has] = np.concatenate(exts)[last[has]]
        out.path_len -= has
        out.words = np.concatenate([*words, np.zeros(1, np.int64)])
        out.used = used
        return out

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



@dataclass(frozen=True, slots=True)
class BonusInputs:
    """The per-query inputs of the url and title bonuses of a shard's candidates: each
    candidate's partition ``parts`` and doc_map entry ``index``, the query's ``terms``, its
    title hits (query term occurrences in the title region), title length and distinct query
    terms in the title, the query's language and the options holding the bonus values."""

    parts: IntArray
    index: IntArray
    terms: Sequence[str]
    title_hits: FloatArray
    title_length: FloatArray
    title_terms: FloatArray
    lang: str
    options: SearchOptions


def candidate_bonuses(features: Callable[[int, IntArray], UrlFeatures], word_ids: dict[str, int],
                      inputs: BonusInputs) -> FloatArray:
    """The bonus factors of every candidate (``inputs``), rows in BONUS_NAMES order: the url
    bonuses from its url features (``features(partition, entries)``, which fills ``word_ids``
    with the words of the urls it reads), the title keyword bonus from its positions in the
    title region (title words that are query terms / title words, times the distinct query
    terms in the title / distinct query terms)."""
    parts, index, terms, options = inputs.parts, inputs.index, inputs.terms, inputs.options
    m = parts.size
    out = np.zeros((len(BONUS_NAMES), m))
    for p in np.unique(parts).tolist():
        sel = np.flatnonzero(parts == p)
        rows = index[sel]
        f = features(p, rows)
        query_ids = np.array([word_ids[t] for t in set(terms) if t in word_ids],
                             dtype=np.int64)
        out[0, sel] = np.where(f.root[rows], options.host_url_bonus, 0.0)
        out[1, sel] = np.where(f.cld[rows], options.cld_url_bonus, 0.0)
        out[2, sel] = np.where(f.wiki[rows], options.wiki_bonus, 0.0)
        out[3, sel] = options.num_slashes_bonus / (1 + f.slashes[rows])
        for row, bonus, at, length in ((4, options.host_keyword_bonus, f.host_at, f.host_len),
                                       (6, options.path_bonus, f.path_at, f.path_len)):
            n = length[rows]
            hits = f.hits(at[rows], n, query_ids)
            out[row, sel] = np.divide(bonus * hits, n, out=np.zeros(sel.size), where=n > 0)
    out[5] = title_keyword_bonus(options.title_bonus, inputs.title_hits, inputs.title_length,
                                 inputs.title_terms, len(terms))
    return out
