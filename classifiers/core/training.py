"""Training a classifier from labelled pages, its cross-validated accuracy, and the order in
which the admin asks for labels (active learning).

Layer: ``classifiers.core``. The glue (``classifiers.services``) passes the texts
(:func:`classifiers.core.features.page_text`) and yes/no labels of a classifier's labelled
pages and stores what comes back.

* Model: scikit-learn's logistic regression (L2, ``C`` = :data:`C`, classes weighted by their
  inverse frequency, so that a pool with many more "no" than "yes" labels still learns the
  "yes" pages) over the hashed features. Yioop trains naive Bayes or a lasso regression with
  chi-squared feature selection (the Yioop design document); a logistic regression gives a
  probability directly, which is what the threshold, the active learning and the rank score
  read.
* Accuracy: k-fold cross-validation, stratified, ``k = min(FOLDS, pages of the rarer
  label)``: each labelled page is predicted by the model trained on the other folds; the
  accuracy is the share predicted right (a prediction is "yes" when the score is at or above
  the threshold). The labelled pages are mostly those the active learning picked as the least
  certain, so this understates the accuracy on pages at large (in the integration test, 20
  such labels gave 0.55 cross-validated and found 17 of 20 unseen sports pages with no
  cooking page).
* Active learning (uncertainty sampling): the next page to label is the unlabelled one whose
  score is closest to 0.5, the one the current model is least sure of; before there is a
  model, the candidates in the order their query returned them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from .errors import NotEnoughLabels
from .features import featurize
from .model import LinearModel

C = 10.0
FOLDS = 5


@dataclass(frozen=True, slots=True)
class CrossValidation:
    """``accuracy`` over ``labelled`` pages (``positives`` of them labelled yes), each
    predicted by the model of the ``folds - 1`` folds without it."""

    accuracy: float
    folds: int
    labelled: int
    positives: int


def _labels(labels: Sequence[bool]) -> npt.NDArray[np.bool_]:
    return np.asarray(list(labels), dtype=bool)


def _fit(features: sp.csr_matrix, y: npt.NDArray[np.bool_]) -> LinearModel:
    """The logistic regression of ``features`` (CSR rows) and labels ``y``, fitted on the
    columns some row holds: every other column's coefficient is exactly 0 under the L2 penalty
    (its gradient is 0 from the start), so the fit is the same, over a few hundred columns
    instead of :data:`~classifiers.core.features.N_FEATURES`."""
    columns = np.unique(features.indices).astype(np.int64)
    fit = LogisticRegression(C=C, class_weight="balanced", max_iter=1000).fit(
        features[:, columns], y)
    return LinearModel(columns, fit.coef_[0].astype(np.float64), float(fit.intercept_[0]),
                       features.shape[1])


def train(texts: Sequence[str], labels: Sequence[bool]) -> LinearModel:
    """The model of ``texts`` labelled ``labels`` (True: the page is of the class).
    :class:`NotEnoughLabels` unless both labels occur."""
    y = _labels(labels)
    if len(texts) != y.size:
        raise ValueError("one label per text")
    if y.all() or not y.any():
        raise NotEnoughLabels("label at least one page yes and one page no")
    return _fit(featurize(texts), y)


def cross_validate(texts: Sequence[str], labels: Sequence[bool], threshold: float = 0.5,
                   folds: int = FOLDS, seed: int = 0) -> CrossValidation:
    """The cross-validated accuracy of :func:`train` on these pages (see the module).
    :class:`NotEnoughLabels` with fewer than two pages of either label."""
    y = _labels(labels)
    if len(texts) != y.size:
        raise ValueError("one label per text")
    positives = int(y.sum())
    rarer = min(positives, int(y.size) - positives)
    if rarer < 2:
        raise NotEnoughLabels("cross-validation needs at least two pages labelled yes and "
                              "two labelled no")
    k = min(folds, rarer)
    features = featurize(texts)
    right = 0
    for train_rows, test_rows in StratifiedKFold(k, shuffle=True, random_state=seed).split(
            np.zeros(y.size), y):
        model = _fit(features[train_rows], y[train_rows])
        predicted = model.scores(features[test_rows]) >= threshold
        right += int((predicted == y[test_rows]).sum())
    return CrossValidation(right / y.size, k, int(y.size), positives)


def uncertainty_order(scores: npt.ArrayLike | None, ranks: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The order in which to ask for labels: indexes of the candidates, least certain first
    (score closest to 0.5), ties and the no-model case (``scores`` None) by ``ranks``, the
    candidates' places in their query's results."""
    ranks = np.asarray(ranks, dtype=np.int64)
    if scores is None:
        return np.argsort(ranks, kind="stable").astype(np.int64)
    doubt = np.abs(np.asarray(scores, dtype=np.float64) - 0.5)
    return np.lexsort((ranks, doubt)).astype(np.int64)
