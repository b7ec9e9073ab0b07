"""Index-time grouping, doc_map order and Doc Rank, as the seed document gives them.

Layer: ``indexer.core``. Pure functions over doc_ids; used by
:mod:`indexer.core.partition_index` (doc_map order) and :mod:`indexer.core.reader` (Doc Rank).

Grouping of one partition of ``n`` entries (in the order they were appended):

1. Each entry at position ``i`` (0-based) scores ``n - i``.
2. Entries sharing a url hash (doc_id bytes 0-7) form a group: typically a page and the link
   documents that point at it. Its representative is the highest-scored member that is not a
   link document, or the highest-scored link if the partition holds no document for the url.
   The group's score is the sum of its members' scores.
3. Groups whose representative is a document (not a link) and whose representatives share a
   text hash (doc_id bytes 9-15) merge: the representative of the higher-scored group represents
   the merged group, and the scores add. (Link-only groups are not merged by text: equal anchor
   text says nothing about equal pages.)
4. The groups sorted by score, highest first (ties: the earlier representative first), are the
   doc_map.

Doc Rank of the entry at doc_map index ``j`` of partition ``p``:
``log10(number_of_documents_after)``, where ``number_of_documents_after`` counts the doc_map
entries of every later partition plus the entries after ``j`` in ``p``. We clamp the count to at
least 1, so the very last entry gets 0 rather than minus infinity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .ids import DOC_TYPE, TEXT_HASH, URL_HASH, DocType


@dataclass(frozen=True, slots=True)
class Group:
    """One doc_map entry: the representative's and members' positions in the partition.

    ``members`` starts with ``representative``; the others follow in partition order.
    """

    representative: int
    members: tuple[int, ...]
    score: int


def _is_link(doc_id: bytes) -> bool:
    return doc_id[DOC_TYPE] == DocType.LINK


def group_partition(doc_ids: Sequence[bytes]) -> list[Group]:
    """Group a partition's entries and return them in doc_map order."""
    n = len(doc_ids)
    by_url: dict[bytes, list[int]] = {}
    for i, doc_id in enumerate(doc_ids):
        by_url.setdefault(doc_id[URL_HASH], []).append(i)
    # phase 1: url groups (members in partition order, i.e. decreasing score)
    url_groups: list[tuple[int, list[int], int]] = []
    for members in by_url.values():
        rep = next((i for i in members if not _is_link(doc_ids[i])), members[0])
        score = sum(n - i for i in members)
        url_groups.append((rep, members, score))
    # phase 2: merge document groups by the representative's text hash
    by_text: dict[bytes, list[int]] = {}
    final: list[tuple[int, list[int], int]] = []
    for index, (rep, _, _) in enumerate(url_groups):
        if _is_link(doc_ids[rep]):
            final.append(url_groups[index])
        else:
            by_text.setdefault(doc_ids[rep][TEXT_HASH], []).append(index)
    for indexes in by_text.values():
        if len(indexes) == 1:
            final.append(url_groups[indexes[0]])
            continue
        best = max(indexes, key=lambda g: (url_groups[g][2], -url_groups[g][0]))
        rep = url_groups[best][0]
        members = sorted(i for g in indexes for i in url_groups[g][1])
        score = sum(url_groups[g][2] for g in indexes)
        final.append((rep, members, score))
    final.sort(key=lambda g: (-g[2], g[0]))
    return [Group(rep, (rep, *[i for i in members if i != rep]), score)
            for rep, members, score in final]


def documents_after(partition_sizes: Sequence[int], partition: int,
                    index: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """number_of_documents_after for doc_map ``index`` (scalar or array) of ``partition``."""
    sizes = np.asarray(partition_sizes, dtype=np.int64)
    later = int(sizes[partition + 1:].sum())
    return later + (int(sizes[partition]) - 1 - np.asarray(index, dtype=np.int64))


def doc_rank(partition_sizes: Sequence[int], partition: int,
             index: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """DOC_RANK = log10(number_of_documents_after), vectorised over ``index``."""
    after = documents_after(partition_sizes, partition, index)
    return np.log10(np.maximum(after, 1).astype(np.float64))


def group_doc_rank(ranks: npt.ArrayLike) -> float:
    """Doc Rank of a query-time group: the maximum of its members' Doc Ranks."""
    return float(np.max(np.asarray(ranks, dtype=np.float64)))
