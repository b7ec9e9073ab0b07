"""One shard's side of a query, in-process: :class:`LocalShard` over one IndexDocumentBundle.

By default a shard answers with its exact best groups by score (:mod:`ranking.core.shard.exact`,
dynamic pruning with score upper bounds); ``exact=False`` gives the seed's bounded search of the
first n matches described here (:func:`ranking.core.shard.matching.score_matches`).

"First" is the seed's posting order (partition, then doc_map index) while the bundle is in
crawl order; once link analysis has re-ordered partitions by importance
(:mod:`indexer.core.bundle.reorder`), it is the global importance order: the first n by key across
every partition (:mod:`ranking.core.postings.collect`), and Doc Rank counts the documents after a match in
that order (:meth:`LocalShard.importance_ranks`, :class:`indexer.core.partition.grouping.ImportanceRanks`).

Layer: ``ranking.core``. The shard search endpoint (``ranking/api.py``, through
:mod:`ranking.core.remote.server`) serves it to a name server, whose
:class:`~ranking.core.remote.client.RemoteShard` has the same
:class:`~ranking.core.shard.candidates.ShardClient` contract. :mod:`ranking.core.search.pipeline` groups the
candidates of every shard and reads summaries for the top ones.

:class:`LocalShard` owns what it keeps between queries and orchestrates the steps, each in its
own module: matching and scoring (:mod:`ranking.core.shard.matching`), the regions of the doc_map
entries (:mod:`ranking.core.shard.regions`), the url features of the bonuses
(:mod:`ranking.core.shard.url_features`) and the summaries shown (:mod:`ranking.core.shard.summaries`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.core.bundle.reader import CollectionStats, IndexBundleReader, TermStats
from indexer.core.errors import CorruptIndexError
from indexer.core.partition.grouping import ImportanceRanks, crawl_order_keys, is_key_ordered
from indexer.core.runtime.workdir import bundle_scores_path, phrases_path
from indexer.core.signals.link_scores import CachedLinkScores, cached_link_scores
from indexer.core.signals.phrases import CachedPhraseLexicon
from indexer.core.text import TextAnalyzer
from ranking.core.options import SearchOptions
from ranking.core.postings.blocks import make_keys
from ranking.core.postings.iterators import DecodedList
from ranking.core.postings.limits import SAFETY_VALVE, ReadLimits
from ranking.core.query.parser import ParsedQuery
from ranking.core.scoring.formulas import url_items
from ranking.core.shard.block_max import GROUPED, MIN_DOCS, BoundCache, block_max_matches
from ranking.core.shard.candidates import Candidates
from ranking.core.shard.doc_cache import DocumentCache
from ranking.core.shard.exact import exact_matches
from ranking.core.shard.matching import score_matches
from ranking.core.shard.regions import PartitionRegions, list_regions
from ranking.core.shard.summaries import ShardSummaries
from ranking.core.shard.url_features import BonusInputs, UrlFeatures, candidate_bonuses

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class LocalShard:
    """A shard read in-process from an :class:`IndexBundleReader`.

    Owns the reader's decoded per-partition data (region weights, url features), decoded
    posting lists, term statistics and summaries kept for its lifetime.
    """

    DOCUMENT_CACHE = 4096  # documents' summaries (to their bodies) kept parsed, least used out
    HEAD_CACHE = 100_000  # (url, title) heads kept decompressed, least used out
    # a partition's url features are built whole from its url columns when a query needs
    # more of its entries than this, else filled entry by entry from them
    URL_ENTRIES_ONE_BY_ONE = 256
    # bounds of a query's reads (ranking.core.postings.limits) and the clock of its time budget
    limits: ReadLimits = SAFETY_VALVE
    # exact best matches by dynamic pruning (ranking.core.shard.exact); False: the first n
    # matches in index order within ``limits`` (ranking.core.shard.matching.score_matches)
    exact: bool = True
    clock: Callable[[], float] = staticmethod(time.monotonic)
    weight = 1.0  # a shard searched on its own: its results' scores as they are (ShardClient)

    def __init__(self, reader: IndexBundleReader, name: str = "local",
                 limits: ReadLimits | None = None, exact: bool | None = None) -> None:
        """A shard over ``reader``; ``limits`` replaces the class's read bounds for this shard
        and ``exact`` its matching (False with ``ranking.core.postings.limits.UNBOUNDED``:
        every match of a query is a candidate, the exhaustive search ``bench/exactness.py``
        compares the default one with)."""
        self.reader = reader
        self.name = name
        if limits is not None:
            self.limits = limits
        if exact is not None:
            self.exact = exact
        self._regions: dict[int, PartitionRegions] = {}
        self._url_features: dict[tuple[int, str], UrlFeatures] = {}
        self.block_bounds = BoundCache()  # what the block-max pruning keeps per snapshot
        self.block_max_min_docs = MIN_DOCS
        self.block_max_grouped = GROUPED
        self._word_ids: dict[str, int] = {}
        self.analyzer = TextAnalyzer()
        self._filters: dict[str, IntArray] = {}
        self._decoded: dict[tuple[str, bool], DecodedList] = {}
        self._decoded_size = 0
        self._decoded_sizes: dict[tuple[str, bool], int] = {}
        self._term_stats: DocumentCache[str, TermStats] = DocumentCache(self.DOCUMENT_CACHE)
        self._stats: tuple[object, CollectionStats] | None = None
        self._ranks: tuple[object, ImportanceRanks | None] | None = None
        # the bundle's common phrases (phrases.npz), reloaded when the file changes
        path: Path | None = getattr(reader, "path", None)
        self.bundle_path = path
        self.phrases = CachedPhraseLexicon(phrases_path(path)) if path is not None else None
        # the crawl's link scores (scores.npz beside the work folder of the bundle), reloaded
        # when the file changes: every candidate carries its url's (Candidates.linked)
        scores = bundle_scores_path(path) if path is not None else None
        self.link_scores: CachedLinkScores | None = \
            cached_link_scores(scores) if scores is not None else None
        # a reader loads files lazily and shares file handles: one query at a time
        self.lock = threading.RLock()
        self.documents = ShardSummaries(reader, self.lock, self.HEAD_CACHE, self.DOCUMENT_CACHE)

    # -- matching ----------------------------------------------------------------------------

    def candidates(self, query: str, parsed: ParsedQuery, n: int,
                   options: SearchOptions) -> Candidates:
        with self.lock:
            found = block_max_matches(self, parsed, n, options) if self.exact else None
            if found is None:
                found = exact_matches(self, parsed, n, options) if self.exact else \
                    score_matches(self, parsed, n, options)
        scores = self.link_scores.get() if self.link_scores is not None else None
        if scores is None or not len(found):
            return found
        return found.with_links(scores.scores_for(found.doc_ids, "linkrank_relative"),
                                scores.scores_for(found.doc_ids, "trust"))

    def link_values(self, doc_ids: npt.NDArray[np.uint8]) -> tuple[FloatArray, FloatArray]:
        """The LinkRank (relative) and trust of each doc_id's url in the crawl's link scores
        (zeros without them), as :meth:`candidates` attaches them."""
        scores = self.link_scores.get() if self.link_scores is not None else None
        if scores is None or not len(doc_ids):
            z = np.zeros(len(doc_ids))
            return z, z
        return (scores.scores_for(doc_ids, "linkrank_relative"),
                scores.scores_for(doc_ids, "trust"))

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
        (:class:`indexer.core.partition.grouping.ImportanceRanks`), built once per snapshot like
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

    def _features(self, partition: int, index: IntArray, lang: str) -> UrlFeatures:
        """The url features of ``partition``'s entries, with entries ``index`` filled: from the
        partition's url columns when it has them (all of its entries at once when more than
        URL_ENTRIES_ONE_BY_ONE are missing), else their urls read from the heads of their
        summaries the first time (query-independent, kept for the reader's lifetime like a
        document cache)."""
        features = self._url_features.get((partition, lang))
        if features is None:
            features = self._url_features[(partition, lang)] = UrlFeatures(
                self.reader.doc_map(partition).n)
        missing = np.unique(index[~features.known[index]])
        columns = self.reader.url_columns(partition) if missing.size else None
        if columns is not None:
            if missing.size <= self.URL_ENTRIES_ONE_BY_ONE:
                features.add_columns(missing, columns, self.analyzer, lang, self._word_ids)
            else:
                features = self._url_features[(partition, lang)] = UrlFeatures.of_columns(
                    columns, self.analyzer, lang, self._word_ids)
            return features
        for i in missing.tolist():
            try:
                url, _ = self.reader.summary_head(partition, i)
            except CorruptIndexError:  # a damaged record: no url bonus (its result is left out
                url = ""               # when its summary is read for the page)
            features.add(i, url_items(url, "", self.analyzer, lang), self._word_ids)
        return features

    def url_features(self, partition: int, lang: str) -> UrlFeatures:
        """The url features of every entry of ``partition`` (:meth:`_features`)."""
        return self._features(partition, np.arange(self.reader.doc_map(partition).n), lang)

    def url_word_ids(self, terms: Sequence[str]) -> IntArray:
        """The ids of the url words among ``terms`` (those some url read so far holds)."""
        return np.array([self._word_ids[t] for t in set(terms) if t in self._word_ids],
                        dtype=np.int64)

    def bonuses(self, inputs: BonusInputs) -> FloatArray:
        """The bonus factors of every candidate, rows in BONUS_NAMES order
        (:func:`ranking.core.shard.url_features.candidate_bonuses`, over this shard's url
        features kept per partition and language)."""
        return candidate_bonuses(lambda p, rows: self._features(p, rows, inputs.lang),
                                 self._word_ids, inputs)

    def document_frequency(self, term: str) -> int:
        """The number of documents of the bundle holding ``term``."""
        with self.lock:
            return self.reader.term_stats(term).docs

    def term_occurrences(self, term: str) -> int:
        """The number of occurrences of ``term`` in the bundle (l_t), kept like summaries."""
        return self._term_stats.load(term, self.reader.term_stats).occurrences

    def partition_regions(self, partition: int) -> PartitionRegions:
        """The regions of ``partition``'s doc_map entries, decoded once and kept."""
        regions = self._regions.get(partition)
        if regions is None:
            regions = self._regions[partition] = PartitionRegions(self.reader, partition)
        return regions

    def list_regions(self, decoded: DecodedList, decoder: Any) -> dict[str, np.ndarray]:
        """The region of every position of a decoded list (:func:`ranking.core.shard.regions.
        list_regions`), kept in the list's memo."""
        return list_regions(decoded, decoder, self.partition_regions)

    FILTER_PREFIXES = ("safe:", "lang:", "media:", "filetype:", "site:all", "code:")

    DECODED_POSTINGS = 8_000_000  # postings and positions kept decoded (8-40 bytes each)
    WHOLE_LIST_DOCS = 16_384  # longer lists are read block by block, as far as a query needs

    def decoded_list(self, term: str, positional: bool, whole: bool = False
                     ) -> DecodedList | None:
        """A term's whole posting list, decoded once and kept (least recently used out, at
        most DECODED_POSTINGS postings and positions; a list's positions are decoded on first
        use): the bit-level decoding in Python is the most expensive step of a query, and the
        same terms come back query after query.

        Only lists of at most WHOLE_LIST_DOCS documents are decoded whole (None for longer
        ones): a frequent term's list is read block by block (:class:`~ranking.core.postings.iterators.
        WordIterator`), skipping by block headers, only as far as the query's first matches
        need (the seed's early termination), and only the candidates' positions are decoded;
        decoding it whole would make every query of it cost in proportion to the shard. With
        ``whole`` a longer list is decoded whole too (the exact search reads every match of a
        conjunction whose lists are of comparable lengths, :mod:`ranking.core.shard.exact`),
        and kept like the others."""
        key = (term, positional)
        got = self._decoded.pop(key, None)
        if got is None:
            cursor = self.reader.postings(term)
            if cursor.docs > self.WHOLE_LIST_DOCS and not whole:
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


    # -- what results show (ranking.core.shard.summaries) ------------------------------------

    def summaries(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Summaries of ``doc_ids`` (:meth:`ShardSummaries.summaries`), with representative
        urls (:meth:`with_representatives`)."""
        return self.with_representatives(self.documents.summaries(doc_ids))

    def snippet_summaries(self, doc_ids: Sequence[bytes], words: Sequence[str],
                          options: SearchOptions | None) -> list[dict[str, Any] | None]:
        """Summaries for snippets (:meth:`ShardSummaries.snippet_summaries`), with
        representative urls."""
        return self.with_representatives(
            self.documents.snippet_summaries(doc_ids, words, options))

    def summary_heads(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        """Only each summary's url and title (:meth:`ShardSummaries.summary_heads`), with
        representative urls."""
        return self.with_representatives(self.documents.summary_heads(doc_ids))

    def with_representatives(self, got: list[dict[str, Any] | None]
                             ) -> list[dict[str, Any] | None]:
        """``got`` with ``representative_url`` (:meth:`Representative.as_dict
        <indexer.core.signals.link_scores.Representative.as_dict>`) added to (a copy of) each
        summary whose url the crawl's redirect table gives a representative (seed 002's
        BasicFields, decided by the link analysis over every shard's redirects,
        :meth:`LinkScores.representatives <indexer.core.signals.link_scores.LinkScores.
        representatives>`): what a local search and a name server's search over this shard
        both show (:meth:`ranking.core.search.pipeline.Searcher._representatives`). Unchanged
        without a scores file or without a table in it."""
        scores = self.link_scores.get() if self.link_scores is not None else None
        if scores is None or not scores.has_redirect_table:
            return got
        at = [i for i, s in enumerate(got) if s is not None and s.get("url")]
        reps = scores.representatives([str(got[i]["url"]) for i in at])  # type: ignore[index]
        out = list(got)
        for i, rep in zip(at, reps, strict=True):
            if rep is not None:
                out[i] = {**got[i], "representative_url": rep.as_dict()}  # type: ignore[dict-item]
        return out

    def redirect_sources(self, url: str) -> tuple[str, ...]:
        """Urls whose redirect documents point at ``url``
        (:meth:`ShardSummaries.redirect_sources`)."""
        return self.documents.redirect_sources(url)
