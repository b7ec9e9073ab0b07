"""Centroid summarizers (Yioop's "Centroid", ``dl``, and "Centroid Weighted", ``dt``).

Layer: ``crawler.core.processing.summarizers``.

* :class:`CentroidSummarizer`: terms get an inverse *sentence* frequency
  ``isf(t) = ln(N / sf(t))``; the centroid is ``count(t) * isf(t)`` over the page (its
  ``MAX_DISTINCT_TERMS`` largest components); sentences rank by the cosine of their tf-isf vector
  with the centroid.
* :class:`CentroidWeightedSummarizer`: sentences' normalised tf vectors are averaged with Zipf
  weights ``1 / (i + 1)`` (earlier sentences count more); sentences are then picked one at a
  time by cosine with the *residual* centroid, removing each pick's component from it, so that
  later picks cover what earlier ones did not. A sentence's score is its cosine when picked.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crawler.core.processing.page import ScoredSentence
from crawler.core.processing.summarizers.base import (
    MAX_DISTINCT_TERMS,
    TextBlock,
    content_words,
    select_texts,
    sentence_parts,
)


def term_matrix(texts: Sequence[str], lang: str) -> np.ndarray:
    """Sentence x term count matrix over the ``MAX_DISTINCT_TERMS`` most frequent terms."""
    tokenised = [content_words(text, lang) for text in texts]
    totals: dict[str, int] = {}
    for words in tokenised:
        for word in words:
            totals[word] = totals.get(word, 0) + 1
    vocab = sorted(totals, key=lambda w: (-totals[w], w))[:MAX_DISTINCT_TERMS]
    column = {word: j for j, word in enumerate(vocab)}
    matrix = np.zeros((len(texts), max(len(vocab), 1)), dtype=np.float64)
    for i, words in enumerate(tokenised):
        for word in words:
            j = column.get(word)
            if j is not None:
                matrix[i, j] += 1.0
    return matrix


def _cosines(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(vector)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = (matrix @ vector) / norms
    return np.nan_to_num(result, nan=0.0, posinf=0.0, neginf=0.0)


class CentroidSummarizer:
    """Stateless; safe to share."""

    name = "centroid"

    def summarize(
        self, blocks: Sequence[TextBlock], lang: str, max_len: int
    ) -> tuple[ScoredSentence, ...]:
        texts = sentence_parts(blocks)[0]
        if not texts:
            return ()
        counts = term_matrix(texts, lang)
        n = counts.shape[0]
        sentence_freq = np.count_nonzero(counts, axis=0)
        isf = np.log(n / np.maximum(sentence_freq, 1)) + 1e-3
        centroid = counts.sum(axis=0) * isf
        scores = _cosines(counts * isf, centroid)
        return select_texts(texts, scores.tolist(), max_len)


class CentroidWeightedSummarizer:
    """Stateless; safe to share."""

    name = "centroid_weighted"

    def summarize(
        self, blocks: Sequence[TextBlock], lang: str, max_len: int
    ) -> tuple[ScoredSentence, ...]:
        texts = sentence_parts(blocks)[0]
        if not texts:
            return ()
        counts = term_matrix(texts, lang)
        norms = np.linalg.norm(counts, axis=1, keepdims=True)
        unit = np.divide(counts, norms, out=np.zeros_like(counts), where=norms > 0)
        zipf = 1.0 / np.arange(1, len(texts) + 1, dtype=np.float64)
        residual = (unit * zipf[:, None]).sum(axis=0) / zipf.sum()
        scores = [0.0] * len(texts)
        available = np.ones(len(texts), dtype=bool)
        used = 0
        while used < max_len and available.any():
            cos = _cosines(unit, residual)
            cos[~available] = -1.0
            best = int(np.argmax(cos))
            if cos[best] <= 0.0:
                break
            available[best] = False
            scores[best] = float(cos[best])
            used += len(texts[best]) + 1
            residual = residual - (residual @ unit[best]) * unit[best]
        # Sentences never picked keep score 0: they are chosen only if space is left.
        return select_texts(texts, scores, max_len)
