"""The crawl's near-duplicate clusters, formed at the end of its link analysis.

Layer: ``linkgraph.core`` (pure Python). :func:`.analysis.run_link_analysis` calls
:func:`write_crawl_clusters` after the scores file is written: the pages' SimHashes and
declared canonicals come from the same pass over the stored summaries that reads the links
(:attr:`.bundles.CrawlLinks.signatures`), their importance is their relative LinkRank from
that scores file, and the rule and the file are :mod:`indexer.core.signals.near_clusters`'s
(``<work>/linkgraph/<ts>/near_duplicates.npz``). The search and the admin read that file.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from indexer.core.errors import LinkGraphError
from indexer.core.runtime.workdir import near_duplicates_path, scores_path
from indexer.core.signals.link_scores import LinkScores
from indexer.core.signals.near_clusters import (
    DEFAULT_DISTANCE,
    Cluster,
    PageSignature,
    form_clusters,
    write_clusters,
)
from indexer.core.urls import hashes_of

logger = logging.getLogger(__name__)


def page_signatures(signatures: Mapping[str, tuple[int, str, str]],
                    importance: Mapping[str, float] | None = None) -> list[PageSignature]:
    """The clustering inputs of ``signatures`` (url -> (SimHash, canonical, title key)) with
    each url's importance (0 where unknown)."""
    importance = importance or {}
    return [PageSignature(url, fingerprint, canonical, float(importance.get(url, 0.0)), key)
            for url, (fingerprint, canonical, key) in signatures.items()]


def linkrank_of(urls: list[str], scores: Path) -> dict[str, float]:
    """Each url's relative LinkRank in the scores file (empty when there is none)."""
    if not urls:
        return {}
    try:
        values = LinkScores(scores).scores_for(hashes_of(urls), "linkrank_relative")
    except LinkGraphError:
        return {}
    return dict(zip(urls, np.asarray(values).tolist(), strict=True))


def write_crawl_clusters(work_dir: str | os.PathLike[str], timestamp: int,
                         signatures: Mapping[str, tuple[int, str, str]],
                         k: int = DEFAULT_DISTANCE) -> tuple[Path, list[Cluster]]:
    """Form crawl ``timestamp``'s clusters from ``signatures`` with the crawl's scores file
    (importance) and write them (atomically); returns the file and the clusters."""
    urls = list(signatures)
    importance = linkrank_of(urls, scores_path(work_dir, timestamp))
    clusters = form_clusters(page_signatures(signatures, importance), k)
    path = write_clusters(near_duplicates_path(work_dir, timestamp), clusters,
                          {"crawl": timestamp, "k": k, "signatures": len(urls)})
    folded = sum(len(c.urls) - 1 for c in clusters)
    logger.info("crawl %s: %d near-duplicate clusters, %d of %d pages folded", timestamp,
                len(clusters), folded, len(urls))
    return path, clusters
