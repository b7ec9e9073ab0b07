"""BasicFields' representative urls and AnchorFields' best inlink anchors (seed 002).

Layer: ``ranking.core.linkgraph``. Called at indexing and result time with a scored
:class:`.graph.WebGraph` (anchors) or any link-score lookup (representative urls).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .graph import WebGraph, hashes_of

ScoreLookup = Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.float64]]


@dataclass(frozen=True, slots=True)
class Representative:
    url: str  # the url to display
    orig_url: str  # the other one (kept as the "original url" of the document)
    url_score: float
    orig_score: float


def representative_urls(pairs: Sequence[tuple[str, str]],
                        scores_for: ScoreLookup) -> list[Representative]:
    """For each (url, redirect target) pair, the url with the higher link score is displayed.

    ``scores_for`` is a vectorised lookup by url hash, e.g. ``LinkScores(path).scores_for``.
    On a tie (both unknown, say) the redirect target is kept: it is the url that serves the
    content. One lookup for all pairs.
    """
    if not pairs:
        return []
    hashes = hashes_of([u for pair in pairs for u in pair])
    values = np.asarray(scores_for(hashes), dtype=np.float64).reshape(-1, 2)
    out = []
    for (url, target), (s_url, s_target) in zip(pairs, values.tolist(), strict=True):
        if s_url > s_target:
            out.append(Representative(url, target, s_url, s_target))
        else:
            out.append(Representative(target, url, s_target, s_url))
    return out


def representative_url(url: str, redirect: str, scores_for: ScoreLookup) -> Representative:
    """:func:`representative_urls` for one pair."""
    return representative_urls([(url, redirect)], scores_for)[0]


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
