"""AnchorFields' best inlink anchors (seed 002, "Nutch's new scoring and indexing framework").

Layer: ``linkgraph.core``. Called with a scored :class:`.graph.WebGraph`. BasicFields'
representative urls are read from the score file alone
(:func:`indexer.core.signals.link_scores.representative_urls`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graph import WebGraph


@dataclass(frozen=True, slots=True)
class AnchorField:
    text: str
    boost: float  # the best linking page's relative LinkRank (score * n; 1 = average page)
    source: str  # the url of that page
    count: int  # how many of the kept inlinks carry this text


def anchor_fields(graph: WebGraph, url: str, top: int = 10,
                  same_host: bool = True) -> list[AnchorField]:
    """The anchor texts of ``url``'s best-scored inlinks, each boosted by its page's score.

    Inlinks are ordered by the linking page's LinkRank (``graph.score``, as stored by the
    linkrank job); empty anchors are skipped; equal texts (case and spaces folded) merge, keeping
    the best boost and counting the pages. At most ``top`` fields are returned, best first.
    ``same_host=False`` leaves out links from the target's own host (navigation text).
    """
    node = graph.node_id(url)
    if node < 0:
        return []
    sources, edges = graph.inlinks(node)
    if sources.size == 0:
        return []
    if not same_host:
        other = graph.host_hash[sources] != graph.host_hash[node]
        sources, edges = sources[other], edges[other]
    scores = np.asarray(graph.score)[sources]
    order = np.argsort(-scores, kind="stable")
    relative = float(graph.n)
    merged: dict[str, list] = {}
    for i in order.tolist():
        text = " ".join(graph.anchor(int(edges[i])).split())
        if not text:
            continue
        key = text.casefold()
        entry = merged.get(key)
        if entry is None:
            if len(merged) >= top:
                continue
            merged[key] = [text, float(scores[i]) * relative, graph.url(int(sources[i])), 1]
        else:
            entry[3] += 1
    return [AnchorField(*entry) for entry in merged.values()]
