"""Training, cross-validation and the active-learning order (values worked out by hand)."""

from __future__ import annotations

import pytest

from classifiers.core.errors import NotEnoughLabels
from classifiers.core.features import featurize, page_text
from classifiers.core.training import cross_validate, train, uncertainty_order

YES = ["goal striker stadium", "referee penalty goal", "striker scored goal", "stadium fans"]
NO = ["oven flour butter", "simmer broth garlic", "flour dough yeast", "garlic butter oven"]


def test_uncertainty_order_least_sure_first_ties_by_query_rank():
    # distances to 0.5 (exact in binary): 0.375, 0.125, 0.0625, 0.375, 0.125 -> 2, then 1 and
    # 4 (ranks 1 < 4), then 0 and 3
    scores = [0.875, 0.375, 0.5625, 0.125, 0.625]
    assert uncertainty_order(scores, [0, 1, 2, 3, 4]).tolist() == [2, 1, 4, 0, 3]
    assert uncertainty_order(scores, [0, 9, 2, 3, 4]).tolist() == [2, 4, 1, 0, 3]


def test_before_any_model_the_query_order():
    assert uncertainty_order(None, [7, 2, 5, 0]).tolist() == [3, 1, 2, 0]


def test_train_needs_both_labels():
    with pytest.raises(NotEnoughLabels):
        train(YES, [True] * len(YES))
    with pytest.raises(NotEnoughLabels):
        train(NO, [False] * len(NO))
    with pytest.raises(ValueError):
        train(YES, [True])


def test_train_learns_the_words_of_each_label():
    model = train(YES + NO, [True] * 4 + [False] * 4)
    sports, cooking = model.scores(featurize(["goal scored at the stadium", "butter and flour"]))
    assert sports > 0.5 > cooking
    # only the columns the training pages hold are kept
    assert set(model.columns.tolist()) == set(featurize(YES + NO).indices.tolist())


def test_cross_validation_folds_and_counts():
    cv = cross_validate(YES + NO, [True] * 4 + [False] * 4)
    assert (cv.folds, cv.labelled, cv.positives) == (4, 8, 4)  # k = the rarer label's pages
    assert cv.accuracy == 1.0
    more = cross_validate(YES * 3 + NO * 3, [True] * 12 + [False] * 12)
    assert more.folds == 5 and more.labelled == 24


def test_cross_validation_needs_two_of_each():
    with pytest.raises(NotEnoughLabels):
        cross_validate(YES + NO[:1], [True] * 4 + [False])


def test_cross_validation_predicts_at_the_threshold():
    labels = [True] * 4 + [False] * 4
    assert cross_validate(YES + NO, labels, threshold=0.0).accuracy == 0.5  # all "yes"
    assert cross_validate(YES + NO, labels, threshold=1.0).accuracy == 0.5  # all "no"


def test_page_text_is_title_then_description():
    assert page_text("Title", "words here") == "Title\nwords here"
    assert page_text("", "") == "\n"
