"""The candidates of every shard of a search, merged into one set of rows, and per-group views.

Layer: ``ranking.core``. :class:`Merged` concatenates the shards' :class:`~ranking.core.shard.candidates.
Candidates` (each row keeps its shard and its row there); :mod:`ranking.core.scoring.grouping` groups
the rows, :class:`GroupRows` lists each group's rows, :class:`LinkValues` holds the link scores
the pipeline looked up for them, and :func:`coverage` counts the preferred terms a group holds
(partial matches, :mod:`ranking.core.search.relax`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from indexer.core.ids import DOC_TYPE, DocType
from indexer.core.signals.link_scores import LinkScores
from ranking.core.scoring.formulas import BONUS_NAMES, proximity_frequency
from ranking.core.scoring.grouping import Groups
from ranking.core.shard.candidates import Candidates

_LINK = int(DocType.LINK)  # an enum member's lookup costs more than the comparison


@dataclass(slots=True)
class Merged:
    shard_of: np.ndarray
    cands: list[Candidates]
    doc_ids: np.ndarray
    doc_rank: np.ndarray
    relevance: np.ndarray
    proximity: np.ndarray  # span sums normalised for length (scoring.proximity_frequency)
    local_row: np.ndarray
    bonuses: np.ndarray
    page: np.ndarray  # whether each row is a page (not a link document)
    # each row's link scores as its shard found them, where it had the crawl's scores
    # (Candidates.linked): LinkRank relative to an average page, trust, and which rows
    link_relative: np.ndarray
    link_trust: np.ndarray
    link_known: np.ndarray

    @staticmethod
    def of(cands: list[Candidates]) -> Merged:
        ids = [c.doc_ids for c in cands]
        doc_ids = np.concatenate(ids) if ids else np.zeros((0, 24), np.uint8)
        return Merged(
            np.concatenate([np.full(len(c), i, np.int64) for i, c in enumerate(cands)] or
                           [np.zeros(0, np.int64)]),
            cands,
            doc_ids,
            np.concatenate([c.doc_rank for c in cands] or [np.zeros(0)]),
            np.concatenate([c.relevance for c in cands] or [np.zeros(0)]),
            np.concatenate([proximity_frequency(c.proximity_raw, c.doc_length,
                                                c.average_length) for c in cands]
                           or [np.zeros(0)]),
            np.concatenate([np.arange(len(c)) for c in cands] or [np.zeros(0, np.int64)]),
            np.concatenate([c.bonuses for c in cands] or [np.zeros((len(BONUS_NAMES), 0))],
                           axis=1),
            doc_ids[:, DOC_TYPE] != _LINK,
            _link_rows(cands, "link_relative"),
            _link_rows(cands, "link_trust"),
            np.concatenate([np.full(len(c), c.linked) for c in cands]
                           or [np.zeros(0, dtype=bool)]).astype(bool),
        )


def _link_rows(cands: list[Candidates], name: str) -> np.ndarray:
    """One link-score array over every shard's rows (0 where a shard had no scores)."""
    return np.concatenate([getattr(c, name) if c.linked else np.zeros(len(c))
                           for c in cands] or [np.zeros(0)])


class GroupRows:
    """Each group's candidate rows in ascending order, from one stable sort of the rows by
    group: a result's steps (bonus row, best page entry, link descriptions, explanation)
    slice them instead of comparing every candidate's group with the result's."""

    __slots__ = ("order", "start")

    def __init__(self, groups: Groups) -> None:
        self.order = np.argsort(groups.member_group, kind="stable")
        self.start = np.zeros(len(groups) + 1, dtype=np.int64)
        np.cumsum(np.bincount(groups.member_group, minlength=len(groups)),
                  out=self.start[1:])

    def of(self, g: int) -> np.ndarray:
        return self.order[self.start[g]:self.start[g + 1]]


@dataclass(frozen=True, slots=True)
class LinkValues:
    """Link scores of every candidate row and of every group (zeros when off)."""

    on: bool
    relative: np.ndarray
    trust: np.ndarray
    group: np.ndarray
    best_row: np.ndarray  # the member row whose link score is the group's (-1: none)
    scores: LinkScores | None


def coverage(merged: Merged, groups: Groups, prefer: Sequence[str]) -> np.ndarray:
    """For each group, the most distinct ``prefer`` terms one of its members holds (in its
    page or in anchor text)."""
    rows = np.zeros(merged.doc_rank.size, dtype=np.int64)
    at = 0
    for c in merged.cands:
        m = len(c)
        have = [j for j, t in enumerate(c.terms) if t in set(prefer)]
        if have and m:
            rows[at:at + m] = ((c.freq[have] > 0) | (c.term_relevance[have] > 0)).sum(axis=0)
        at += m
    out = np.zeros(len(groups), dtype=np.int64)
    np.maximum.at(out, groups.member_group, rows)
    return out

