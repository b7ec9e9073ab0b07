"""Crawl mixes on the query side: several crawls' shards searched together, each crawl's
results weighted.

Layer: ``ranking.core``. Yioop's crawl mixes combine the indexes of several crawls into one
result list; here each crawl of a mix contributes its shards wrapped in :class:`MixedShard`,
which names the shard after its crawl (two crawls both have a queue server 0, and the pipeline
finds a result's shard by name) and carries the crawl's weight. The pipeline multiplies each
result's final score by the weight of the shard its representative came from
(:func:`group_weights`). A url found in several crawls is one group, as a url found by
several shards is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ranking.core.options import SearchOptions
from ranking.core.query.parser import ParsedQuery
from ranking.core.shard.candidates import Candidates, ShardClient


class MixedShard:
    """``inner``, one shard of crawl ``its`` in a mix, with the crawl's ``weight``.

    Everything but the name, the weight and the candidates' shard label is the inner
    shard's (every :class:`ShardClient` member is passed on)."""

    def __init__(self, inner: ShardClient, its: int, weight: float) -> None:
        self.inner = inner
        self.its = its
        self.weight = float(weight)
        self.name = f"{inner.name}@{its}"

    def candidates(self, query: str, parsed: ParsedQuery, n: int,
                   options: SearchOptions) -> Candidates:
        return replace(self.inner.candidates(query, parsed, n, options), shard=self.name)

    @property
    def bundle_path(self) -> Path | None:
        return self.inner.bundle_path

    def summaries(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        return self.inner.summaries(doc_ids)

    def summary_heads(self, doc_ids: Sequence[bytes]) -> list[dict[str, Any] | None]:
        return self.inner.summary_heads(doc_ids)

    def snippet_summaries(self, doc_ids: Sequence[bytes], words: Sequence[str],
                          options: SearchOptions | None) -> list[dict[str, Any] | None]:
        return self.inner.snippet_summaries(doc_ids, words, options)

    def redirect_sources(self, url: str) -> Sequence[str]:
        return self.inner.redirect_sources(url)

    def document_frequency(self, term: str) -> int | None:
        return self.inner.document_frequency(term)


def group_weights(shards: Sequence[ShardClient], cands: Sequence[Candidates],
                  shard_of_rep: npt.NDArray[np.int64]) -> npt.NDArray[np.float64] | None:
    """The weight of each group (by the shard of its representative row; ``shard_of_rep``
    indexes ``cands``), or None when every shard weighs 1 (no mix)."""
    weight_of = {s.name: float(s.weight) for s in shards}
    per_answer = np.array([weight_of.get(c.shard, 1.0) for c in cands], dtype=np.float64)
    if not per_answer.size or np.all(per_answer == 1.0):
        return None
    return per_answer[shard_of_rep]


def unwrap(shard: ShardClient) -> ShardClient:
    """The shard itself, or the one a :class:`MixedShard` wraps."""
    return shard.inner if isinstance(shard, MixedShard) else shard


def crawl_of(shard: ShardClient | None, default: int | None) -> int | None:
    """The crawl timestamp of a mix's shard, else ``default`` (the crawl searched)."""
    return shard.its if isinstance(shard, MixedShard) else default
