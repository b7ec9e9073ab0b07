"""A crawl's classifiers on a page: the threshold, the slots of the per-page scores, and the
references a crawl records."""

from __future__ import annotations

import math

import numpy as np
import pytest

from classifiers.core.apply import ClassifierRef, PageClassifiers, TrainedClassifier
from classifiers.core.errors import ClassifierError
from classifiers.core.features import featurize, page_text
from classifiers.core.model import LinearModel

SCORE = 1 / (1 + math.exp(-1.0))  # weight 2 on the page's only word, intercept -1


def word_model(word: str, weight: float = 2.0, intercept: float = -1.0) -> LinearModel:
    column = featurize([page_text(word, "")]).indices  # a one-word page: that word's value is 1
    return LinearModel(column.astype(np.int64), np.array([weight]), intercept)


def one(threshold: float, classify: bool = True, slot: int = 0) -> PageClassifiers:
    ref = ClassifierRef(1, "sports", slot, 1, threshold, classify)
    return PageClassifiers([TrainedClassifier(ref, word_model("goal"))])


def test_score_by_hand_and_the_threshold_is_inclusive():
    words, scores = one(SCORE).classify("goal", "")
    assert scores == pytest.approx((SCORE,)) and words == ("class:sports",)
    assert one(float(np.nextafter(SCORE, 1.0))).classify("goal", "")[0] == ()
    assert one(0.0).classify("oven", "")[0] == ("class:sports",)  # 0: every page
    assert one(1.0).classify("goal", "")[0] == ()


def test_a_classifier_used_only_to_rank_adds_no_word_but_keeps_its_score():
    words, scores = one(0.1, classify=False).classify("goal", "")
    assert words == () and scores == pytest.approx((SCORE,))


def test_scores_are_placed_by_slot():
    a = TrainedClassifier(ClassifierRef(4, "sports", 3, 2), word_model("goal"))
    b = TrainedClassifier(ClassifierRef(2, "cooking", 1, 1), word_model("oven", 3.0, -1.0))
    words, scores = PageClassifiers([a, b]).classify("oven", "")
    oven = 1 / (1 + math.exp(-2.0))
    no_goal = 1 / (1 + math.exp(1.0))  # sports: no weight on "oven", the intercept alone
    assert scores == pytest.approx((0.0, oven, 0.0, no_goal))
    assert words == ("class:cooking",)


def test_no_classifiers():
    runner = PageClassifiers([])
    assert not runner and runner.classify("goal", "") == ((), ())


@pytest.mark.parametrize("label", ["Sports", "a b", "class:x", "", "-x", "x" * 51, "é"])
def test_refs_refuse_labels_that_are_not_meta_word_values(label):
    with pytest.raises(ClassifierError):
        ClassifierRef(1, label, 0, 1)


@pytest.mark.parametrize("fields", [{"threshold": 1.5}, {"threshold": -0.1}, {"slot": -1},
                                    {"version": 0}])
def test_refs_refuse_bad_values(fields):
    values = {"classifier_id": 1, "label": "x", "slot": 0, "version": 1, **fields}
    with pytest.raises(ClassifierError):
        ClassifierRef(**values)


def test_refs_round_trip_and_malformed_copies_are_refused():
    ref = ClassifierRef(7, "sports-news", 6, 3, 0.7, False, 2.5)
    assert ClassifierRef.from_dict(ref.as_dict()) == ref
    with pytest.raises(ClassifierError):
        ClassifierRef.from_dict({"label": "x"})
    with pytest.raises(ClassifierError):
        ClassifierRef.from_dict({**ref.as_dict(), "version": "two"})
