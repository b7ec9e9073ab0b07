"""Index-time grouping, doc_map order and Doc Rank, as the seed document gives them.

Layer: ``indexer.core``. Pure functions over doc_ids; used by
:mod:`indexer.core.partition.build` (doc_map order) and :mod:`indexer.core.bundle.reader` (Doc Rank).

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

Importance order (:func:`importance_order`, used when a finished partition is re-ordered after
link analysis, see :mod:`indexer.core.bundle.reorder`): the seed assumes "the first n matching documents
in Yioop's posting lists contain the 10 most important", and that holds only if the doc_map is
in order of importance. The crawl-order rank above is a weak estimate of it (a page crawled late
is last, however well linked), so a re-ordered doc_map sorts the groups, highest first, by::

    key(g) = log10(G - j_g) + importance(g)

``G`` groups in the partition, ``j_g`` the group's index in the crawl order above (so the first
term is the within-partition part of the Doc Rank the group had in crawl order, on the log10
scale of Doc Rank), and ``importance(g)`` the largest importance of its members' urls, given by
the caller on the same log10 scale (the queue server gives the link score
``log10(1 + relative LinkRank) + trust``, 0 for urls link analysis does not know). Ties keep
the crawl order (stable sort). The doc_map's score column then holds ``key(g)``.

Doc Rank of the entry at doc_map index ``j`` of partition ``p``:
``log10(number_of_documents_after)``, where ``number_of_documents_after`` counts the doc_map
entries of every later partition plus the entries after ``j`` in ``p``. We clamp the count to at
least 1, so the very last entry gets 0 rather than minus infinity.

Doc Rank in importance order (:class:`ImportanceRanks`): the seed derives Doc Rank from the
order of the posting lists, "(partition, doc_map_index) is a good measure of document
importance", because that order was meant to follow importance. Once some partition of a
snapshot is re-ordered, the order that follows importance is the *global key order*: every
doc_map entry of every partition by its key, highest first, ties in (partition, index) order.
An ordered partition's key is its doc_map score column (``key(g)`` above); a partition still in
crawl order (the active one, or one not yet re-ordered) gets ``log10(G - j)`` for doc_map index
``j`` (:func:`crawl_order_keys`), which is exactly the key :func:`importance_order` gives a group
whose urls have importance 0, so both kinds are on one scale. ``number_of_documents_after(A)``
then counts the doc_map entries after ``A`` in that order (the same unit as above: doc_map
entries, i.e. groups), and Doc Rank is its log10 as before. Within one partition this order is
the doc_map order, so posting lists stay sorted by key partition by partition, and the first n
matches in global key order are among the first n matches of each partition
(:mod:`ranking.core.postings.collect`). A snapshot where no partition is ordered keeps the crawl-order
Doc Rank above.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from ..ids import DOC_TYPE, TEXT_HASH, URL_HASH, DocType


@dataclass(frozen=True, slots=True)
class Group:
    """One doc_map entry: the representative's and members' positions in the partition.

    ``members`` starts with ``representative``; the others follow in partition order.
    """

    representative: int
    members: tuple[int, ...]
    score: float


Importance = Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.float64]]
"""Url hashes (doc_id bytes 0-7 read big-endian, ``uint64``) -> importance (finite floats on
Doc Rank's log10 scale; 0 for a url the caller knows nothing about)."""


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


def importance_order(groups: Sequence[Group], doc_ids: Sequence[bytes],
                     importance: Importance) -> list[Group]:
    """``groups`` (in crawl doc_map order, as :func:`group_partition` gives them) sorted by the
    importance key of the module docstring, each with its key as its score.

    ``importance`` is called once, with the url hashes of every document of the partition; a
    group takes the largest value of its members. Raises ``ValueError`` when it returns a
    wrong shape or a value that is not finite."""
    count = len(groups)
    if not count:
        return []
    n = len(doc_ids)
    hashes = np.frombuffer(b"".join(d[URL_HASH] for d in doc_ids), dtype=">u8").astype(np.uint64)
    values = np.asarray(importance(hashes), dtype=np.float64)
    if values.shape != (n,):
        raise ValueError(f"importance gave {values.shape} values for {n} urls")
    if not np.all(np.isfinite(values)):
        raise ValueError("importance gave a value that is not finite")
    sizes = np.fromiter((len(g.members) for g in groups), dtype=np.int64, count=count)
    members = np.fromiter((i for g in groups for i in g.members), dtype=np.int64,
                          count=int(sizes.sum()))
    best = np.maximum.reduceat(values[members], np.cumsum(sizes) - sizes)
    key = np.log10(count - np.arange(count, dtype=np.float64)) + best
    order = np.argsort(-key, kind="stable")
    return [replace(groups[i], score=float(key[i])) for i in order.tolist()]


def crawl_order_keys(groups: int) -> npt.NDArray[np.float64]:
    """The key of each doc_map entry of a partition in crawl order: ``log10(G - j)`` (see the
    module docstring), strictly decreasing in ``j``."""
    return np.log10(groups - np.arange(groups, dtype=np.float64))


def is_key_ordered(keys: npt.ArrayLike) -> bool:
    """Whether ``keys`` can be a partition's keys: finite and non-increasing (a doc_map that
    says it is ordered but is not, say a damaged file, is read in crawl order instead)."""
    k = np.asarray(keys, dtype=np.float64)
    return bool(np.all(np.isfinite(k)) and np.all(k[1:] <= k[:-1]))


@dataclass(frozen=True, slots=True)
class ImportanceRanks:
    """The global key order of a snapshot's doc_map entries (see the module docstring).

    ``keys[p][j]``: the key of entry ``j`` of partition ``p`` (non-increasing in ``j``);
    ``after[p][j]``: its number_of_documents_after in the global key order (entries with a
    lower key, plus entries with an equal key in a later partition or at a later index)."""

    keys: dict[int, npt.NDArray[np.float64]]
    after: dict[int, npt.NDArray[np.int64]]

    @staticmethod
    def of(partitions: Sequence[tuple[int, npt.NDArray[np.float64]]]) -> ImportanceRanks:
        """From ``(partition number, keys)`` in ascending partition order. One stable sort
        of all keys: each partition is one sorted run, so the sort merges runs."""
        numbers = [number for number, _ in partitions]
        parts = [np.asarray(k, dtype=np.float64) for _, k in partitions]
        flat = np.concatenate(parts) if parts else np.zeros(0)
        order = np.argsort(-flat, kind="stable")
        after = np.empty(flat.size, dtype=np.int64)
        after[order] = np.arange(flat.size - 1, -1, -1, dtype=np.int64)
        bounds = np.cumsum([k.size for k in parts])[:-1] if parts else []
        return ImportanceRanks(dict(zip(numbers, parts, strict=True)),
                               dict(zip(numbers, np.split(after, bounds), strict=True)))

    def doc_rank(self, partition: int, index: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Doc Rank of entries ``index`` of ``partition`` in the global key order."""
        return doc_rank_of(self.after[partition][np.asarray(index, dtype=np.int64)])


def documents_after(partition_sizes: Sequence[int], partition: int,
                    index: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """number_of_documents_after for doc_map ``index`` (scalar or array) of ``partition``."""
    sizes = np.asarray(partition_sizes, dtype=np.int64)
    later = int(sizes[partition + 1:].sum())
    return later + (int(sizes[partition]) - 1 - np.asarray(index, dtype=np.int64))


def doc_rank(partition_sizes: Sequence[int], partition: int,
             index: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """DOC_RANK = log10(number_of_documents_after), vectorised over ``index``."""
    return doc_rank_of(documents_after(partition_sizes, partition, index))


def doc_rank_of(after: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """DOC_RANK from number_of_documents_after (clamped to at least 1)."""
    return np.log10(np.maximum(np.asarray(after, dtype=np.int64), 1).astype(np.float64))


def group_doc_rank(ranks: npt.ArrayLike) -> float:
    """Doc Rank of a query-time group: the maximum of its members' Doc Ranks."""
    return float(np.max(np.asarray(ranks, dtype=np.float64)))
