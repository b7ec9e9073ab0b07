"""Search Time weights chosen by measurement (issue 36, item 4): coordinate ascent over a
handful of Page Options weights, cross-validated on the dev judgments (5 folds), on the cached
crawls of both modes of ``bench/relevance_eval.py`` (the local web as it is and with its index
pages hidden; the objective is the mean of the two modes' MRR@10).

Each fold holds out every fifth query of ../shared/judgments/dev.tsv (in file order); the
ascent starts from the defaults (``SearchOptions()``), tries each weight's grid values in turn
with the others fixed and keeps a value only when it raises the training queries' MRR@10 (by
more than :data:`MIN_GAIN`: ties keep the current value), for :data:`ROUNDS` rounds. The
held-out queries are then answered with the fitted weights: the cross-validated MRR@10 (each
query scored once, by the fold that did not see it) against the defaults' decides whether
fitting pays. The weights fitted on every query are printed too; they should replace the
defaults only when the cross-validated figure beats the defaults'.

Usage: ``.venv/bin/python bench/fit_weights.py`` (needs both modes' cached crawls: run
``bench/relevance_eval.py`` first; ``--cached`` reuses them whatever the code version).
Prints ``name: value unit`` lines and a ``target:`` line (cross-validated MRR@10 of the fitted
weights at least the defaults', both modes).
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import relevance_eval as rel  # noqa: E402
from relevance_modes import MODES  # noqa: E402

from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from ranking.core.options import SearchOptions  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402

FOLDS = 5
ROUNDS = 1  # one pass over the weights: the ledger shows each alone moves MRR@10 little
MIN_GAIN = 1e-9
# the weights fitted and the values tried: the default and a step down and up
GRID: dict[str, tuple[float, ...]] = {
    "title_weight": (2.0, 4.0, 8.0),
    "link_weight": (1.0, 2.0, 4.0),
    "title_bonus": (0.0, 2.0, 4.0),
    "path_bonus": (0.0, 1.0, 2.0),
    "host_keyword_bonus": (0.0, 2.0, 4.0),
    "common_phrase_bonus": (0.0, 3.0, 6.0),
    "link_score_weight": (0.0, 0.5, 1.0),
    "doc_rank_weight": (0.5, 1.0, 2.0),
    "proximity_bonus": (0.5, 1.0, 2.0),
    "definition_bonus": (8.0, 16.0, 32.0),
    "topic_bonus": (0.0, 4.0, 8.0, 16.0),
}


class Evaluator:
    """Per-query reciprocal ranks of a setting of the weights on each mode's crawl, cached by
    setting (the folds' ascents share their first steps)."""

    def __init__(self, modes: tuple[str, ...], cached: bool) -> None:
        self.queries = rel.load_queries()
        self.qrels = rel.score.load_qrels(str(rel.JUDGMENTS))
        self.shards = {}
        for mode in modes:
            paths, _ = rel.mode_crawl(mode, cached=cached)
            self.shards[mode] = LocalShard(IndexBundleReader(paths[0]))
        self.base = rel.search_options()
        self.cache: dict[tuple, np.ndarray] = {}

    def rr(self, weights: dict[str, float]) -> np.ndarray:
        """(modes, queries) reciprocal ranks at ``weights`` (the other options: defaults)."""
        key = tuple(sorted(weights.items()))
        if key not in self.cache:
            options = replace(self.base, **weights)
            rows = []
            for mode, shard in self.shards.items():
                run = rel.run_queries(Searcher([shard], options), self.queries)
                path = rel.write_run(run, rel.CACHE / "runs" / f"yioopy-fit{rel.VARIANT[mode]}.run")
                _, per = rel.score.score(self.qrels, rel.score.load_run(str(path)))
                rows.append([per[qid]["MRR@10"] for qid, _ in self.queries])
            self.cache[key] = np.asarray(rows)
        return self.cache[key]


def ascend(ev: Evaluator, train: np.ndarray) -> dict[str, float]:
    """Coordinate ascent from the defaults on the queries ``train`` (a boolean mask)."""
    weights = {name: float(getattr(SearchOptions(), name)) for name in GRID}
    best = ev.rr(weights)[:, train].mean()
    for _ in range(ROUNDS):
        moved = False
        for name, grid in GRID.items():
            for value in grid:
                if value == weights[name]:
                    continue
                trial = {**weights, name: value}
                got = ev.rr(trial)[:, train].mean()
                if got > best + MIN_GAIN:
                    weights, best, moved = trial, got, True
        if not moved:
            break
    return weights


def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cached", action="store_true",
                    help="reuse the newest cached crawls even if the crawler code changed")
    args = ap.parse_args()
    ev = Evaluator(MODES, args.cached)
    n = len(ev.queries)
    fold = np.arange(n) % FOLDS
    defaults = {name: float(getattr(SearchOptions(), name)) for name in GRID}
    held_fit = np.zeros((len(MODES), n))
    held_default = ev.rr(defaults)
    lines = []
    for k in range(FOLDS):
        test = fold == k
        fitted = ascend(ev, ~test)
        held_fit[:, test] = ev.rr(fitted)[:, test]
        changed = {name: v for name, v in fitted.items() if v != defaults[name]}
        lines.append(f"fold_{k}_heldout_MRR@10: {held_fit[:, test].mean():.4f} score "
                     f"(defaults {held_default[:, test].mean():.4f}; fitted {changed})")
    for i, mode in enumerate(MODES):
        lines.append(f"cv_MRR@10_{mode}: {held_fit[i].mean():.4f} score "
                     f"(defaults {held_default[i].mean():.4f})")
    cv, base = held_fit.mean(), held_default.mean()
    lines.append(f"cv_MRR@10: {cv:.4f} score (defaults {base:.4f}, both modes)")
    everything = ascend(ev, np.ones(n, dtype=bool))
    lines.append(f"fitted_on_all: {everything} (MRR@10 per mode "
                 f"{[round(float(x), 4) for x in ev.rr(everything).mean(axis=1)]}, defaults "
                 f"{[round(float(x), 4) for x in held_default.mean(axis=1)]})")
    lines.append(f"settings_evaluated: {len(ev.cache)} settings")
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.write(f"target: cross-validated MRR@10 of the fitted weights {cv:.4f} "
                     f"(goal > defaults' {base:.4f}) {'met' if cv > base else 'NOT met'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
