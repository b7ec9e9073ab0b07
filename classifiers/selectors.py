"""Reads of the classifiers app: a classifier's state for the admin, the next page to label,
and what a crawl needs (the classifiers its Page Options use, their loaded models).

Layer: Django glue. The crawler reads classifiers only through :func:`classifier_uses_snapshot`
(copied into a crawl's Page Options when it starts) and :func:`trained_classifiers_get` (the
fetchers load the recorded versions); the search reads the rank weights from the same copy.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from classifiers.core.apply import ClassifierRef, TrainedClassifier
from classifiers.core.errors import ModelFormatError
from classifiers.core.features import featurize, page_text
from classifiers.core.model import LinearModel
from classifiers.core.training import uncertainty_order

from .models import Classifier, ClassifierModel, ClassifierPage, ClassifierUse

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ClassifierStatus:
    """What the admin shows of a classifier: its labels, candidates left, and its newest
    model (the draft when there is one, else the finished version)."""

    positives: int
    negatives: int
    unlabelled: int
    model: ClassifierModel | None
    finished_version: int

    @property
    def labelled(self) -> int:
        return self.positives + self.negatives

    @property
    def draft(self) -> bool:
        return self.model is not None and self.model.version > self.finished_version


def classifier_status(classifier: Classifier) -> ClassifierStatus:
    pages = ClassifierPage.objects.filter(classifier=classifier)
    return ClassifierStatus(
        positives=pages.filter(label=True).count(), negatives=pages.filter(label=False).count(),
        unlabelled=pages.filter(label__isnull=True).count(),
        model=ClassifierModel.objects.filter(classifier=classifier).order_by("-version").first(),
        finished_version=classifier.version)


def newest_model(classifier: Classifier) -> LinearModel | None:
    """The classifier's newest model (None when it has none, or one that does not read: a
    model of an older feature scheme, until the next label trains it again)."""
    row = ClassifierModel.objects.filter(classifier=classifier).order_by("-version").first()
    if row is None:
        return None
    try:
        return LinearModel.from_bytes(row.coefficients)
    except ModelFormatError as exc:
        logger.warning("classifier %s v%d: %s", classifier.label, row.version, exc)
        return None


def classifier_next_page(classifier: Classifier) -> tuple[ClassifierPage | None, float | None]:
    """The candidate to label next, and the newest model's score of it (None without a
    model): the one the model is least sure of, else the first in query order
    (:func:`classifiers.core.training.uncertainty_order`)."""
    pages = list(ClassifierPage.objects.filter(classifier=classifier, label__isnull=True)
                 .order_by("rank"))
    if not pages:
        return None, None
    model = newest_model(classifier)
    scores = None if model is None else model.scores(
        featurize([page_text(p.title, p.description) for p in pages]))
    first = int(uncertainty_order(scores, [p.rank for p in pages])[0])
    return pages[first], None if scores is None else float(scores[first])


def labelled_pages(classifier: Classifier, limit: int = 20) -> list[ClassifierPage]:
    return list(ClassifierPage.objects.filter(classifier=classifier, label__isnull=False)
                .order_by("-labelled_at", "-pk")[:limit])


def classifier_uses_snapshot(page_options_id: int | None) -> dict[str, Any]:
    """What a Page Options profile's copy records of its classifiers: ``classifiers``, the
    finished ones it uses (:meth:`ClassifierRef.as_dict`, with the version now finished), and
    ``classifier_weights``, the rank weight of each slot (0 where none)."""
    uses = [] if page_options_id is None else list(
        ClassifierUse.objects.filter(page_options_id=page_options_id, classifier__version__gt=0)
        .select_related("classifier").order_by("classifier_id"))
    refs = [ClassifierRef(u.classifier.pk, u.classifier.label, u.classifier.slot,
                          u.classifier.version, u.classifier.threshold, u.classify,
                          u.rank_weight) for u in uses]
    weights = [0.0] * (max((r.slot for r in refs if r.rank_weight), default=-1) + 1)
    for r in refs:
        if r.rank_weight:
            weights[r.slot] = r.rank_weight
    return {"classifiers": [r.as_dict() for r in refs], "classifier_weights": weights}


def trained_classifiers_get(refs: Sequence[ClassifierRef]) -> tuple[TrainedClassifier, ...]:
    """The models of ``refs`` at the versions they name. A model that is gone (its classifier
    was deleted) or does not read is left out, logged: the crawl goes on without it."""
    if not refs:
        return ()
    rows = {(m.classifier_id, m.version): m for m in ClassifierModel.objects.filter(
        classifier_id__in=[r.classifier_id for r in refs])}
    out = []
    for ref in refs:
        row = rows.get((ref.classifier_id, ref.version))
        if row is None:
            logger.warning("classifier %s v%d is gone: pages are not classified by it",
                           ref.label, ref.version)
            continue
        try:
            out.append(TrainedClassifier(ref, LinearModel.from_bytes(row.coefficients)))
        except ModelFormatError as exc:
            logger.warning("classifier %s v%d: %s; pages are not classified by it",
                           ref.label, ref.version, exc)
    return tuple(out)
