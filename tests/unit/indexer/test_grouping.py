"""Grouping and Doc Rank against examples worked by hand from the seed's description."""

from __future__ import annotations

import math

import numpy as np

from indexer.core.ids import DocType, hash7, make_doc_id
from indexer.core.partition.grouping import (
    doc_rank,
    documents_after,
    group_doc_rank,
    group_partition,
)


def did(url: str, kind: DocType, text: str) -> bytes:
    return make_doc_id(url, kind, hash7(text), url.split("/")[2])


def test_seed_example_page_links_and_duplicate_text() -> None:
    # n = 5 entries score 5, 4, 3, 2, 1 (num_docs_in_partition - position).
    ids = [
        did("https://www.yahoo.com/", DocType.PAGE, "yahoo text"),           # 0: 5
        did("https://www.yahoo.com/", DocType.LINK, "anchor: yahoo"),        # 1: 4
        did("https://b.example/", DocType.PAGE, "b text"),                   # 2: 3
        did("https://www.yahoo.com/?useless=1", DocType.PAGE, "yahoo text"),  # 3: 2
        did("https://d.example/", DocType.LINK, "anchor: d"),                # 4: 1
    ]
    groups = group_partition(ids)
    # url groups: yahoo {0, 1} = 9 (rep: the page), b {2} = 3, yahoo?useless {3} = 2,
    # d {4} = 1 (rep: the link, no page for it). Text grouping: {0,1} and {3} share the text
    # hash -> 9 + 2 = 11, represented by 0 (the larger score). Sorted: 11, 3, 1.
    assert [(g.representative, g.members, g.score) for g in groups] == [
        (0, (0, 1, 3), 11), (2, (2,), 3), (4, (4,), 1)]


def test_link_only_group_takes_the_most_important_link() -> None:
    ids = [did("https://x.example/", DocType.LINK, "a"),
           did("https://y.example/", DocType.PAGE, "y"),
           did("https://x.example/", DocType.LINK, "b")]
    groups = group_partition(ids)
    # x links: 3 + 1 = 4, rep 0 (earliest link); y page: 2
    assert [(g.representative, g.score) for g in groups] == [(0, 4), (1, 2)]


def test_page_represents_its_links_even_when_appended_later() -> None:
    ids = [did("https://x.example/", DocType.LINK, "a"),
           did("https://x.example/", DocType.LINK, "b"),
           did("https://x.example/", DocType.PAGE, "page")]
    (group,) = group_partition(ids)
    assert group.representative == 2 and group.score == 3 + 2 + 1
    assert group.members == (2, 0, 1)


def test_links_with_equal_anchor_text_are_not_merged() -> None:
    ids = [did("https://x.example/", DocType.LINK, "click"),
           did("https://y.example/", DocType.LINK, "click")]
    assert len(group_partition(ids)) == 2


def test_doc_rank_counts_later_partitions_and_later_entries() -> None:
    sizes = [3, 2, 4]
    # entry 0 of partition 0: 2 after it in p0, plus 2 + 4 in later partitions = 8
    assert documents_after(sizes, 0, 0) == 8
    assert math.isclose(float(doc_rank(sizes, 0, 0)), math.log10(8))
    # last entry of the last partition: nothing after it, clamped to log10(1) = 0
    assert float(doc_rank(sizes, 2, 3)) == 0.0
    ranks = doc_rank(sizes, 1, np.array([0, 1]))
    assert np.allclose(ranks, [math.log10(5), math.log10(4)])
    # earlier is better: ranks strictly decrease in (partition, index) order
    flat = [float(doc_rank(sizes, p, i)) for p, n in enumerate(sizes) for i in range(n)]
    assert flat[:-1] == sorted(flat[:-1], reverse=True) and len(set(flat[:-1])) == len(flat) - 1
    assert group_doc_rank([0.5, 2.0, 1.0]) == 2.0


def test_ten_billion_entries_stay_below_ten() -> None:
    assert float(doc_rank([10 ** 10 - 1, 1], 0, 0)) < 10
