"""The graph-based summarizer (Yioop's "Graph Based", ``ds``).

Layer: ``crawler.core.processing.summarizers``. Sentences are nodes of a graph whose edge weights
say how alike two sentences are: ``1 - distortion``, where the distortion of two sentences is half
the L1 distance of their normalised term distributions (0: same words, 1: no word in common). A
PageRank walk (damping 0.85) over the row-normalised graph scores the sentences; the scores are
then multiplied by a Zipf-like factor ``1 / sqrt(i + 1)`` that favours early sentences. At most
``MAX_GRAPH_SENTENCES`` sentences take part (the graph is quadratic in their number).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crawler.core.processing.page import ScoredSentence
from crawler.core.processing.summarizers.base import TextBlock, select_texts, sentence_parts
from crawler.core.processing.summarizers.centroid import term_matrix

MAX_GRAPH_SENTENCES = 300
DAMPING = 0.85
ITERATIONS = 30


class GraphSummarizer:
    """Stateless; safe to share."""

    name = "graph"

    def summarize(
        self, blocks: Sequence[TextBlock], lang: str, max_len: int
    ) -> tuple[ScoredSentence, ...]:
        texts = sentence_parts(blocks)[0][:MAX_GRAPH_SENTENCES]
        if not texts:
            return ()
        counts = term_matrix(texts, lang)
        sums = counts.sum(axis=1, keepdims=True)
        dist = np.divide(counts, sums, out=np.zeros_like(counts), where=sums > 0)
        n = len(texts)
        # Pairwise L1 distances, computed per row to bound memory (n x n x terms is too big).
        similarity = np.empty((n, n), dtype=np.float64)
        for i in range(n):
            similarity[i] = 1.0 - 0.5 * np.abs(dist - dist[i]).sum(axis=1)
        np.fill_diagonal(similarity, 0.0)
        empty = sums[:, 0] == 0
        similarity[empty, :] = 0.0
        similarity[:, empty] = 0.0
        row = similarity.sum(axis=1, keepdims=True)
        transition = np.divide(
            similarity, row, out=np.full_like(similarity, 1.0 / n), where=row > 0
        )
        rank = np.full(n, 1.0 / n)
        for _ in range(ITERATIONS):
            rank = (1 - DAMPING) / n + DAMPING * (rank @ transition)
        scores = rank / np.sqrt(np.arange(1, n + 1, dtype=np.float64))
        return select_texts(texts, scores.tolist(), max_len)
