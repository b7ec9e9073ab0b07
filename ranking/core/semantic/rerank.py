"""The semantic signal: the top candidates re-ranked by the similarity of their page's
embedding to the query's, fused by rank with the existing score; and the pages nearest a page
("Similar").

Layer: ``ranking.core`` (pure Python and numpy). :class:`ranking.core.search.pipeline.Searcher` calls
:meth:`SemanticReranker.rerank` once it has ordered the groups by their score, before it reads
the summaries of the results shown; the "Similar" view calls :func:`similar_pages`.

The fusion is a weighted reciprocal rank fusion (Cormack, Clarke and Buettcher, "Reciprocal
Rank Fusion outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009), the same
kind of fusion the pipeline already uses for proximity (:func:`ranking.core.scoring.formulas.fuse`):
among the first ``depth`` groups in score order, a group at score rank ``r`` whose page's
embedding is the ``s``-th most similar to the query's gets

    1 / (k + r) + weight / (k + s)

and the ``depth`` groups are ordered by that (ties keep the score order); groups after them
keep their places. A group whose page has no embedding (not embedded yet, or only links point
at the url) has no semantic term. With fewer than two embedded groups among them, or no
query words, or no model, the order is left as it is: the signal falls back to the lexical
ranking, never to an error.

The query text embedded is the query's surface words (``ParsedQuery.highlight``: meta words
such as ``site:`` are left out). The page's vector is read from the embeddings stored beside
each local shard's bundle (:mod:`ranking.core.semantic.store`), by the url hash of the group's
representative; remote shards have none here (their pages have no semantic term).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ranking.core.options import SearchOptions
from ranking.core.semantic.embedder import (
    SemanticUnavailable,
    TextEmbedder,
    no_embedder,
)
from ranking.core.semantic.store import (
    CachedSemanticIndex,
    SemanticIndex,
    cached_semantic_index,
    url_keys,
)
from ranking.core.shard.candidates import ShardClient

logger = logging.getLogger(__name__)
QUERY_CACHE = 1024  # query vectors kept (a query's next pages, repeated queries)
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def rank_fusion(lexical_rank: npt.ArrayLike, semantic_rank: npt.ArrayLike, k: float,
                weight: float) -> FloatArray:
    """``1 / (k + lexical_rank) + weight / (k + semantic_rank)`` element by element; ranks
    start at 1, and an infinite semantic rank (no embedding) adds nothing."""
    lexical = np.asarray(lexical_rank, dtype=np.float64)
    semantic = np.asarray(semantic_rank, dtype=np.float64)
    return 1.0 / (k + lexical) + weight / (k + semantic)


def semantic_ranks(similarity: FloatArray) -> FloatArray:
    """1-based rank of each similarity, highest first (ties: first come first); NaN (no
    embedding) ranks infinite."""
    sims = np.asarray(similarity, dtype=np.float64)
    ranks = np.full(sims.size, np.inf)
    known = np.flatnonzero(~np.isnan(sims))
    order = known[np.argsort(-sims[known], kind="stable")]
    ranks[order] = np.arange(1, order.size + 1)
    return ranks


class SemanticReranker:
    """Re-ranks a search's top groups by embedding similarity (see the module docstring), over
    the stored embeddings of ``sources`` (one per local shard) with the embedder
    ``embedder()`` returns (loaded at the first query that needs it)."""

    def __init__(self, sources: Sequence[CachedSemanticIndex],
                 embedder: Callable[[], TextEmbedder] = no_embedder) -> None:
        self.sources = list(sources)
        self._embedder = embedder
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.error: str | None = None

    def indexes(self, model: str) -> list[SemanticIndex]:
        """The sources' embeddings made with ``model`` (others are ignored)."""
        found = [source.get() for source in self.sources]
        return [i for i in found if i is not None and i.model == model and len(i)]

    def query_vector(self, text: str) -> tuple[str, np.ndarray] | None:
        """(model name, the embedding of ``text``), kept for the next ``QUERY_CACHE`` queries;
        None when the model cannot be loaded (the reason kept in ``error``)."""
        try:
            embedder = self._embedder()
        except SemanticUnavailable as exc:
            if self.error != str(exc):
                logger.warning("semantic re-ranking off: %s", exc)
            self.error = str(exc)
            return None
        key = f"{embedder.name}\n{text}"
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
                return embedder.name, vector
        vector = embedder.embed([text])[0]
        with self._lock:
            self._vectors[key] = vector
            while len(self._vectors) > QUERY_CACHE:
                self._vectors.popitem(last=False)
        return embedder.name, vector

    def similarities(self, text: str, keys: npt.NDArray[np.uint64]
                     ) -> tuple[FloatArray, str] | None:
        """Cosine of the query ``text`` with the page of each url key (NaN: no embedding),
        and the model's name; None when nothing can be compared."""
        indexes = [s.get() for s in self.sources]
        if not text.strip() or not any(i is not None and len(i) for i in indexes):
            return None  # no embeddings: not even the model is loaded
        got = self.query_vector(text)
        if got is None:
            return None
        model, vector = got
        sims = np.full(keys.size, np.nan)
        for index in self.indexes(model):
            rows = index.rows_of(keys)
            hit = (rows >= 0) & np.isnan(sims)
            if hit.any():
                sims[hit] = index.similarities(rows[hit], vector)
        return sims, model

    def rerank(self, text: str, top_ids: npt.NDArray[np.uint8], weight: float, k: float
               ) -> tuple[IntArray, list[dict[str, Any]]] | None:
        """The new order of ``top_ids`` (the doc_ids of the first groups, in score order) as
        positions into them, and for each position what the fusion used; None when the order
        stays (no words, no model, fewer than two embedded pages)."""
        if weight <= 0 or len(top_ids) < 2:
            return None
        got = self.similarities(text, url_keys(top_ids))
        if got is None:
            return None
        sims, model = got
        if int((~np.isnan(sims)).sum()) < 2:
            return None
        lexical = np.arange(1, sims.size + 1, dtype=np.float64)
        semantic = semantic_ranks(sims)
        fused = rank_fusion(lexical, semantic, k, weight)
        order = np.argsort(-fused, kind="stable").astype(np.int64)
        info = [{"model": model, "similarity": None if np.isnan(s) else round(float(s), 4),
                 "semantic_rank": None if not np.isfinite(r) else int(r),
                 "score_rank": int(lx), "fused": float(f), "weight": weight, "k": k}
                for s, r, lx, f in zip(sims.tolist(), semantic.tolist(), lexical.tolist(),
                                       fused.tolist(), strict=True)]
        return order, info


def shard_bundles(shards: Sequence[ShardClient]) -> list[str]:
    """The bundle folders of the local shards among ``shards`` (those with a bundle path; a
    crawl mix's shards give their inner shard's), each once."""
    found: list[str] = []
    for shard in shards:
        path = shard.bundle_path
        if path is not None and str(path) not in found:
            found.append(str(path))
    return found


def default_semantic(shards: Sequence[ShardClient],
                     embedder: Callable[[], TextEmbedder] = no_embedder) -> SemanticReranker:
    """A reranker over the embeddings beside the local shards' bundles (loaded when a search
    first needs them), with the model ``embedder()`` returns (the glue's: with none, the
    signal is off)."""
    return SemanticReranker([cached_semantic_index(p) for p in shard_bundles(shards)],
                            embedder)


def rerank_groups(reranker: SemanticReranker | None, text: str, doc_ids: npt.NDArray[np.uint8],
                  rep: IntArray, order: IntArray, options: SearchOptions
                  ) -> tuple[IntArray, dict[int, dict[str, Any]]]:
    """The pipeline's hook: ``order`` (groups by score) with its first
    ``options.semantic_depth`` groups re-ranked (their representatives' rows ``rep``,
    doc_ids ``doc_ids``), and for each of those groups what the fusion used (empty when
    the order stays: no reranker, weight 0, or see :meth:`SemanticReranker.rerank`)."""
    weight = float(options.semantic_weight)
    if reranker is None or weight <= 0 or order.size < 2:
        return order, {}
    head = order[:max(2, int(options.semantic_depth))]
    got = reranker.rerank(text, doc_ids[rep[head]], weight, float(options.semantic_k))
    if got is None:
        return order, {}
    moved, info = got
    new_head = head[moved]
    explained = {int(g): info[int(i)] for g, i in zip(new_head.tolist(), moved.tolist(),
                                                      strict=True)}
    return np.concatenate([new_head, order[head.size:]]), explained


def similar_pages(indexes: Sequence[SemanticIndex], key: int, n: int
                  ) -> list[tuple[int, int, float]]:
    """The ``n`` pages nearest (by cosine) to the page of url key ``key`` across ``indexes``
    (all of one model): (index number, row, similarity), most similar first, the page itself
    left out. Empty when the page has no embedding."""
    query = None
    for index in indexes:
        row = int(index.rows_of(np.array([key], np.uint64))[0])
        if row >= 0:
            query = np.asarray(index.vectors[row], np.float32)
            break
    if query is None:
        return []
    found: list[tuple[int, int, float]] = []
    for number, index in enumerate(indexes):
        exclude = index.rows_of(np.array([key], np.uint64))
        rows, sims = index.nearest(query, n, exclude)
        found.extend((number, int(r), float(s)) for r, s in zip(rows, sims, strict=True))
    found.sort(key=lambda item: -item[2])
    return found[:n]
