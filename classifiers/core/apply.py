"""Running a crawl's classifiers on a page: class meta words and per-page scores.

Layer: ``classifiers.core``. The crawl's copy of its Page Options names the classifiers it runs
(:class:`ClassifierRef`, with the model version it uses); the fetcher glue loads each model
(:class:`TrainedClassifier`) and the page processor (``crawler.core.processing.process``) asks
:class:`PageClassifiers` about each page, the seed's fetcher step "run classifiers on the
summary and add any class labels and rank scores".

For a page it gives:

* the meta words ``class:LABEL`` of every classifier used "to classify" whose score is at or
  above its threshold (a query ``class:LABEL`` then finds the page);
* the page's classifier scores, one per *slot*: a classifier's slot is fixed for its life
  (the glue derives it from its database id, never reused), so the i-th score of every page of
  every crawl is the same classifier's, and the search's rank weights
  (``SearchOptions.classifier_weights``) are read by slot whatever crawl or crawl mix is
  searched. Slots of classifiers the crawl does not run hold 0; the vector ends at the largest
  slot it runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .errors import ClassifierError
from .features import N_FEATURES, featurize, page_text
from .model import LinearModel, sigmoid

LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,49}$")


@dataclass(frozen=True, slots=True)
class ClassifierRef:
    """A classifier as a crawl's Page Options use it: its ``label`` (the meta word is
    ``class:<label>``), ``slot`` in the per-page scores, model ``version``, ``threshold``,
    whether it adds meta words (``classify``) and its ``rank_weight`` (0: not a rank score)."""

    classifier_id: int
    label: str
    slot: int
    version: int
    threshold: float = 0.5
    classify: bool = True
    rank_weight: float = 0.0

    def __post_init__(self) -> None:
        if not LABEL_RE.match(self.label):
            raise ClassifierError(f"bad classifier label {self.label!r}")
        if self.slot < 0 or self.version < 1:
            raise ClassifierError("a classifier's slot must be >= 0 and its version >= 1")
        if not 0.0 <= self.threshold <= 1.0:
            raise ClassifierError("a threshold is between 0 and 1")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> ClassifierRef:
        """The ref of :meth:`as_dict`'s form; :class:`ClassifierError` on a malformed one."""
        try:
            return ClassifierRef(int(data["classifier_id"]), str(data["label"]),
                                 int(data["slot"]), int(data["version"]),
                                 float(data["threshold"]), bool(data["classify"]),
                                 float(data["rank_weight"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ClassifierError(f"bad classifier reference: {exc}") from None


@dataclass(frozen=True, slots=True, eq=False)
class TrainedClassifier:
    """A classifier reference with its loaded model."""

    ref: ClassifierRef
    model: LinearModel


class PageClassifiers:
    """Scores pages with several classifiers at once: the features of a page (one sparse row)
    times the classifiers' dense coefficient columns (``N_FEATURES x C``), one product per
    page. Immutable; safe to share between threads."""

    __slots__ = ("intercepts", "refs", "slots", "weights", "width")

    def __init__(self, trained: Sequence[TrainedClassifier] = ()) -> None:
        self.refs = tuple(t.ref for t in trained)
        self.weights = np.zeros((N_FEATURES, len(trained)), dtype=np.float64)
        for j, t in enumerate(trained):
            if t.model.n_features != N_FEATURES:
                raise ClassifierError(f"classifier {t.ref.label}: model of another size")
            self.weights[t.model.columns, j] = t.model.weights
        self.intercepts = np.array([t.model.intercept for t in trained], dtype=np.float64)
        self.slots = np.array([r.slot for r in self.refs], dtype=np.int64)
        self.width = int(self.slots.max()) + 1 if self.slots.size else 0

    def __bool__(self) -> bool:
        return bool(self.refs)

    def scores(self, title: str, description: str) -> np.ndarray:
        """Each classifier's score of the page (in :attr:`refs` order)."""
        row = featurize([page_text(title, description)])
        return sigmoid(np.asarray(row @ self.weights).ravel() + self.intercepts)

    def classify(self, title: str, description: str) -> tuple[tuple[str, ...],
                                                                tuple[float, ...]]:
        """(``class:`` meta words, per-slot scores) of a page (see the module)."""
        if not self.refs:
            return (), ()
        scores = self.scores(title, description)
        words = tuple(f"class:{r.label}" for r, s in zip(self.refs, scores.tolist(), strict=True)
                      if r.classify and s >= r.threshold)
        by_slot = np.zeros(self.width, dtype=np.float64)
        by_slot[self.slots] = scores
        return words, tuple(by_slot.tolist())
