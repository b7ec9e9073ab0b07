"""The "Why this result?" rows say how proximity counted: fused by rank, or not used."""

from __future__ import annotations

from ranking.page import explanation_rows

BASE = {
    "score": 12.5,
    "doc_rank": {"value": 3.0, "weight": 1.0},
    "relevance": {"value": 4.25, "weight": 1.0, "terms": []},
    "proximity": {"value": 0.125, "weight": 0.0},
    "bonuses": {"total": 0.0},
}


def test_fused_proximity_shows_its_rank_and_the_scores_rank():
    explanation = {**BASE, "fusion": {"score": 7.25, "score_rank": 2, "proximity_rank": 0,
                                      "k": 59, "proximity_share": 1.0}}
    rows = dict(explanation_rows(explanation)[0])
    assert rows["Proximity"] == ("0.125 (rank 0; fused with the score's rank 2, k 59, "
                                 "share 1)")
    assert rows["Doc Rank"] == "3 × weight 1"


def test_unfused_proximity_says_it_was_not_used():
    rows = dict(explanation_rows(dict(BASE))[0])
    assert rows["Proximity"] == "0.125 (not used: one-word query or weight 0)"
    assert "× weight" not in rows["Proximity"]
