"""The anchor-text boost of a partition's link documents (seed 002's AnchorFields).

Layer: ``indexer.core``. Used by :func:`indexer.core.partition.build.build_partition`, so the
boost is applied each time a partition's files are built (the writer's refresh and close, the
re-order by importance) from the scores the caller has *then*: the stored document index blobs
are never boosted, so a link document appended before the crawl's first link analysis is
boosted by the first partition build after it (for a finished partition: its re-order by that
analysis's scores, which every new score file triggers), and a newer analysis replaces the
boost instead of compounding it.

A link document's weights (its regions) are multiplied by its source page's boost. The source
is the link document's ``source:<url>`` meta word (every link document the crawler makes
carries one); a link document without one, and every other document, keeps its weights. The
boost comes from the caller as a function of the sources' url hashes (:data:`AnchorBoost`, the
crawler adapts the crawl's link scores with
:func:`indexer.core.signals.link_scores.anchor_boost`), as importance does for the re-order.

Cost: one pass over the vocabulary for the ``source:`` words, one vectorised pass over the
partition's entries, one hash per distinct source page and one Python step per boosted link
document; nothing when the caller has no scores.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ..ids import DOC_ID_LEN, DOC_TYPE, DocType
from ..urls import hashes_of

SOURCE_PREFIX = "source:"

AnchorBoost = Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.float64]]
"""The boost of each source page, by url hash (1.0: no change)."""

Regions = tuple[tuple[int, float], ...]


def link_sources(doc_ids: list[bytes], terms: list[str], entry_terms: npt.NDArray[np.int32],
                 entry_counts: npt.NDArray[np.int32], nentries: npt.NDArray[np.int64]
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[str]]:
    """``(rows, source, urls)``: the link documents (indices into ``doc_ids``) that carry a
    ``source:`` meta word, the number of each one's source in ``urls``, and the distinct
    source urls. ``terms`` numbers the vocabulary; a document's entries (``entry_terms``,
    ``entry_counts``, ``nentries`` of them per document) are its terms then its meta words
    (count 0). A document with several ``source:`` words keeps the first."""
    numbers = [i for i, term in enumerate(terms) if term.startswith(SOURCE_PREFIX)]
    empty = np.zeros(0, dtype=np.int64)
    if not numbers or not doc_ids:
        return empty, empty, []
    wanted = np.asarray(numbers, dtype=np.int64)
    at = np.flatnonzero(np.isin(entry_terms, wanted) & (entry_counts == 0))
    if not at.size:
        return empty, empty, []
    rows = np.searchsorted(np.cumsum(nentries), at, side="right")
    is_link = np.frombuffer(b"".join(doc_ids), dtype=np.uint8)[DOC_TYPE::DOC_ID_LEN] \
        == DocType.LINK
    keep = is_link[rows]
    rows, at = rows[keep], at[keep]
    rows, first = np.unique(rows, return_index=True)
    words = entry_terms[at[first]].astype(np.int64)
    distinct, source = np.unique(words, return_inverse=True)
    urls = [terms[n][len(SOURCE_PREFIX):] for n in distinct.tolist()]
    return rows.astype(np.int64), source.reshape(-1).astype(np.int64), urls


def boosted_regions(regions: list[Regions], rows: npt.NDArray[np.int64],
                    source: npt.NDArray[np.int64], urls: list[str],
                    boost: AnchorBoost) -> list[Regions]:
    """``regions`` (one per document) with those of documents ``rows`` multiplied by the
    boost of their source (``urls[source[k]]`` for ``rows[k]``, see :func:`link_sources`);
    ``regions`` itself is not changed."""
    if not rows.size:
        return regions
    factors = np.asarray(boost(hashes_of(urls)), dtype=np.float64)[source]
    out = list(regions)
    for row, factor in zip(rows.tolist(), factors.tolist(), strict=True):
        if factor != 1.0 and out[row]:
            out[row] = tuple((end, weight * factor) for end, weight in out[row])
    return out
