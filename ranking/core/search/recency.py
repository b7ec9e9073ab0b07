"""News results in order of recency and relevance.

Layer: ``ranking.core.search`` (pure Python, numpy). The News tab (``ranking.searchpage.news``)
takes the best-scoring news items a search found and orders them by

    blend = w * score / max(score) + (1 - w) * 2 ** (-age / half_life)

where ``age`` is the seconds since the item was published (0 for a date in the future) and
``w`` is :data:`RELEVANCE_WEIGHT`: an item of today that matches well comes first, and a week-old
item needs a much better match to beat a fresh one. Ties keep the search's order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RELEVANCE_WEIGHT = 0.5
HALF_LIFE_SECONDS = 24 * 3600.0


def recency_order(scores: Sequence[float], published: Sequence[float], now: float,
                  relevance_weight: float = RELEVANCE_WEIGHT,
                  half_life: float = HALF_LIFE_SECONDS) -> list[int]:
    """Indices of the results in blended order (see the module docstring)."""
    if not len(scores):
        return []
    score = np.asarray(scores, dtype=np.float64)
    top = float(score.max())
    relevance = score / top if top > 0 else np.zeros_like(score)
    age = np.maximum(now - np.asarray(published, dtype=np.float64), 0.0)
    fresh = np.exp2(-age / half_life)
    blend = relevance_weight * relevance + (1.0 - relevance_weight) * fresh
    return np.argsort(-blend, kind="stable").tolist()
