"""The "Similar" pages of a result: the pages whose embeddings are nearest its page's.

Layer: glue of the ``ranking`` app (no Django imports; :mod:`ranking.views` renders). The
embeddings are the ones ``manage.py embed_index`` stored beside each local bundle
(:mod:`ranking.core.semantic.store`); no model is loaded to answer (the page's own stored
vector is the query). Without embeddings for the index, or for that page, the view falls back
to Yioop's related search, the page's keywords as a disjunction
(:func:`ranking.page.similar_query`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from indexer.core.urls import url_hash
from ranking.core.search.mixes import unwrap
from ranking.core.semantic.rerank import similar_pages
from ranking.core.semantic.store import SemanticIndex, cached_semantic_index
from ranking.core.shard.candidates import ShardClient
from ranking.core.shard.local import LocalShard

DROP_METAS = frozenset({"NOINDEX", "NONE"})
SLACK = 5  # extra neighbours read, for pages dropped at display
DESCRIPTION_CHARS = 240


@dataclass(frozen=True, slots=True)
class SimilarPage:
    url: str
    title: str
    description: str
    similarity: float

    def as_dict(self) -> dict[str, object]:
        return {"url": self.url, "title": self.title, "description": self.description,
                "similarity": round(self.similarity, 4)}


def embedded_shards(shards: Sequence[ShardClient]) -> list[tuple[LocalShard, SemanticIndex]]:
    """The local shards among ``shards`` that have stored embeddings, with them (all of the
    first one's model)."""
    found: list[tuple[LocalShard, SemanticIndex]] = []
    for shard in map(unwrap, shards):
        if isinstance(shard, LocalShard):
            index = cached_semantic_index(shard.reader.path).get()
            if index is not None and len(index):
                found.append((shard, index))
    return [(s, i) for s, i in found if i.model == found[0][1].model]


def has_embeddings(shards: Sequence[ShardClient]) -> bool:
    """Whether any local shard of ``shards`` has stored embeddings (the result links then go
    to the Similar pages view)."""
    return bool(embedded_shards(shards))


def similar_to(shards: Sequence[ShardClient], url: str, n: int,
               hidden: frozenset[str] = frozenset()) -> list[SimilarPage] | None:
    """The ``n`` pages nearest ``url``'s page, most similar first, without pages whose robot
    metas say NOINDEX or NONE and urls in ``hidden``; None when the index has no embeddings
    or ``url`` has none (the caller falls back)."""
    indexed = embedded_shards(shards)
    if not indexed:
        return None
    found = similar_pages([i for _, i in indexed], url_hash(url), n + SLACK)
    if not found:
        return None
    out: list[SimilarPage] = []
    for number, row, similarity in found:
        shard, index = indexed[number]
        with shard.lock:
            summary = shard.reader.summary(np.asarray(index.doc_ids[row]).tobytes())
        if not summary or DROP_METAS & {str(m).upper() for m in summary.get("robot_metas", ())}:
            continue
        page_url = str(summary.get("url", ""))
        if not page_url or page_url in hidden or page_url == url:
            continue
        description = str(summary.get("description", ""))[:DESCRIPTION_CHARS]
        out.append(SimilarPage(page_url, str(summary.get("title") or page_url), description,
                               similarity))
        if len(out) >= n:
            break
    return out
