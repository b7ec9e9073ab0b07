"""The stored model: exact round trips, scores worked out by hand, and refusal of anything
that is not a model of this feature scheme (a pickle included: nothing is unpickled)."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from classifiers.core.errors import ModelFormatError
from classifiers.core.features import FEATURES, N_FEATURES
from classifiers.core.model import LinearModel, sigmoid


def model() -> LinearModel:
    return LinearModel(np.array([3, 10, 200]), np.array([0.5, -1.25, 2.0]), -0.3)


def row(**values: float) -> sp.csr_matrix:
    cols = [int(c[1:]) for c in values]
    return sp.csr_matrix((list(values.values()), ([0] * len(cols), cols)),
                         shape=(1, N_FEATURES))


def test_round_trip_is_exact_and_of_the_documented_size():
    data = model().to_bytes()
    assert data[:4] == b"YCLM"
    assert len(data) == 4 + 2 + 2 + len(FEATURES) + 4 + 4 + 8 + 3 * (4 + 8)
    back = LinearModel.from_bytes(data)
    assert back.columns.tolist() == [3, 10, 200]
    assert back.weights.tolist() == [0.5, -1.25, 2.0]
    assert back.intercept == -0.3 and back.n_features == N_FEATURES
    assert back.to_bytes() == data


def test_scores_by_hand():
    m = model()
    # one page holding column 10 once (value 1), one holding 3 (0.6) and 200 (0.8)
    assert m.scores(row(c10=1.0))[0] == pytest.approx(1 / (1 + math.exp(1.55)))
    margin = 0.6 * 0.5 + 0.8 * 2.0 - 0.3
    assert m.margins(row(c3=0.6, c200=0.8))[0] == pytest.approx(margin)
    assert m.scores(row(c3=0.6, c200=0.8))[0] == pytest.approx(1 / (1 + math.exp(-margin)))
    assert m.scores(row(c11=1.0))[0] == pytest.approx(1 / (1 + math.exp(0.3)))  # no weight


def test_dense_and_from_dense_agree():
    dense = model().dense()
    assert dense.shape == (N_FEATURES,) and np.count_nonzero(dense) == 3
    again = LinearModel.from_dense(dense, -0.3)
    assert again.columns.tolist() == [3, 10, 200] and again.weights.tolist() == [0.5, -1.25, 2.0]


@pytest.mark.parametrize("damage", [
    lambda d: d[:-1],                                  # cut short
    lambda d: d + b"\0",                              # too long
    lambda d: b"XXXX" + d[4:],                        # another magic
    lambda d: d[:4] + (2).to_bytes(2, "little") + d[6:],  # a later format
    lambda d: b"",
    lambda d: pickle.dumps(model()),                  # a pickle is never loaded
])
def test_refuses_bytes_that_are_not_a_model(damage):
    with pytest.raises(ModelFormatError):
        LinearModel.from_bytes(damage(model().to_bytes()))


def test_refuses_a_model_of_another_feature_scheme():
    other = LinearModel(np.array([1]), np.array([1.0]), 0.0, features="hashed-words-v0")
    with pytest.raises(ModelFormatError, match="feature scheme"):
        LinearModel.from_bytes(other.to_bytes())


@pytest.mark.parametrize("columns, weights", [
    ([5, 3], [1.0, 1.0]),            # not increasing
    ([3, 3], [1.0, 1.0]),            # repeated
    ([N_FEATURES], [1.0]),           # out of range
    ([-1], [1.0]),
    ([1], [float("nan")]),
    ([1, 2], [1.0]),                 # lengths differ
])
def test_refuses_malformed_coefficients(columns, weights):
    with pytest.raises(ModelFormatError):
        LinearModel(np.array(columns), np.array(weights), 0.0)


def test_sigmoid_has_no_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = sigmoid(np.array([-1000.0, -1.0, 0.0, 1.0, 1000.0]))
    assert values[0] == 0.0 and values[-1] == 1.0 and values[2] == 0.5
    assert values[3] == pytest.approx(1 / (1 + math.exp(-1))) and values[1] + values[3] == \
        pytest.approx(1.0)
