"""bench/fit_weights.py's coordinate ascent (issue 36, item 4): it moves a weight only when
the training queries gain, keeps the defaults on ties, and never looks at held-out queries."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import fit_weights as fw  # noqa: E402


class TableEvaluator:
    """Reciprocal ranks from a rule instead of searches: query q (of 10) is answered first
    when ``link_weight`` is 4 and q is even, or when ``title_bonus`` is 0 and q is 9."""

    def __init__(self) -> None:
        self.calls = 0

    def rr(self, weights: dict[str, float]) -> np.ndarray:
        self.calls += 1
        row = np.full(10, 0.5)
        if weights["link_weight"] == 4.0:
            row[::2] = 1.0
        if weights["title_bonus"] == 0.0:
            row[9] = 1.0
        return np.stack([row, row])  # two modes alike


def test_ascent_moves_only_what_the_training_queries_reward() -> None:
    ev = TableEvaluator()
    train = np.ones(10, dtype=bool)
    train[9] = False  # the only query the title bonus helps is held out
    fitted = fw.ascend(ev, train)  # type: ignore[arg-type]
    defaults = {name: float(getattr(fw.SearchOptions(), name)) for name in fw.GRID}
    assert fitted == {**defaults, "link_weight": 4.0}
    assert all(defaults[name] in grid for name, grid in fw.GRID.items())
    assert ev.calls <= 1 + sum(len(g) - 1 for g in fw.GRID.values()) * fw.ROUNDS
