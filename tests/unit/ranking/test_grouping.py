"""Query-time grouping: url hash (links folded into their page), then text hash."""

from __future__ import annotations

import numpy as np

from indexer.core.ids import DocType, hash7, make_doc_id
from ranking.core.scoring.grouping import group_candidates


def ids(*docs):
    return np.frombuffer(b"".join(make_doc_id(u, t, hash7(text), "h") for u, t, text in docs),
                         dtype=np.uint8).reshape(-1, 24)


def test_links_fold_into_their_page_and_duplicates_merge():
    doc_ids = ids(("https://a/", DocType.PAGE, "same text"),      # 0
                  ("https://a/", DocType.LINK, "anchor 1"),       # 1 link to a (other partition)
                  ("https://b/", DocType.PAGE, "same text"),      # 2 duplicate of a
                  ("https://c/", DocType.LINK, "anchor 2"),       # 3 link-only group
                  ("https://d/", DocType.PAGE, "other"))          # 4
    dr = np.array([1.0, 3.0, 2.0, 0.5, 0.2])
    rel = np.array([1.0, 0.25, 1.5, 0.7, 0.1])
    prox = np.array([0.1, 0.0, 0.3, 0.0, 0.0])
    g = group_candidates(doc_ids, dr, rel, prox)
    assert len(g) == 3
    groups = {int(g.rep[i]): i for i in range(len(g))}
    # a + its link: DR max 3, relevance 1 + 0.25; merged with duplicate b (text hash):
    # DR max(3, 2) = 3, relevance max(1.25, 1.5), proximity max 0.3
    ab = groups.get(0, groups.get(2))
    assert g.doc_rank[ab] == 3.0
    assert g.relevance[ab] == 1.5
    assert g.proximity[ab] == 0.3
    # the representative of a+link+b: a's url group scores 3 + 1.25 + 0.1 > b's 2 + 1.5 + 0.3
    assert int(g.rep[ab]) == 0
    assert sorted(g.members(ab).tolist()) == [0, 1, 2]
    assert 3 in groups and 4 in groups


def test_page_is_representative_over_better_ranked_link():
    doc_ids = ids(("https://a/", DocType.LINK, "x"), ("https://a/", DocType.PAGE, "page"))
    g = group_candidates(doc_ids, np.array([5.0, 1.0]), np.ones(2), np.zeros(2))
    assert g.rep.tolist() == [1]
    assert g.doc_rank.tolist() == [5.0]


def test_page_in_two_partitions_keeps_the_best_entry_relevance():
    # one page indexed in two partitions: the earlier entry has the higher Doc Rank, the later
    # one also holds anchor text folded in at index time (a higher relevance); the group keeps
    # the best page relevance (not added up: both copies hold the same text), plus its links'
    doc_ids = ids(("https://a/", DocType.PAGE, "text"),           # 0 earlier copy
                  ("https://a/", DocType.PAGE, "text"),           # 1 later copy + anchors
                  ("https://a/", DocType.LINK, "anchor"),         # 2 link from another partition
                  ("https://b/", DocType.PAGE, "other"))          # 3
    dr = np.array([4.0, 3.0, 1.0, 3.5])
    rel = np.array([2.0, 17.0, 0.5, 6.0])
    g = group_candidates(doc_ids, dr, rel, np.zeros(4))
    groups = {int(g.rep[i]): i for i in range(len(g))}
    a = groups[0]                     # the page with the highest Doc Rank represents it
    assert g.doc_rank[a] == 4.0
    assert g.relevance[a] == 17.5
    assert g.relevance[groups[3]] == 6.0
