"""A trained classifier's model: the coefficients of a logistic regression over hashed features.

Layer: ``classifiers.core``. :mod:`classifiers.core.training` makes a :class:`LinearModel`;
the database keeps it as :meth:`LinearModel.to_bytes` (``classifiers.models.ClassifierModel``)
and the fetchers read it back with :meth:`LinearModel.from_bytes`.

The score of a page with features ``x`` (:func:`classifiers.core.features.featurize`) is the
logistic regression's probability that the page belongs to the class::

    score(x) = 1 / (1 + exp(-(w . x + b)))

Only the columns some training page holds are kept: an L2-regularised fit leaves every other
hashed column at exactly 0, so a model is a few thousand (column, weight) pairs.

Stored form (little-endian), read without unpickling anything, so that a row of the database
can never run code in a fetcher::

    4 bytes  b"YCLM"
    u16      format version (1)
    u16      length L of the feature scheme's name, then L bytes of it (UTF-8)
    u32      number of feature columns N
    u32      number of non-zero coefficients k
    f64      intercept b
    k x u32  columns kept, increasing
    k x f64  their weights
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .errors import ModelFormatError
from .features import FEATURES, N_FEATURES

MAGIC = b"YCLM"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<4sHH")
_SIZES = struct.Struct("<IId")


@dataclass(frozen=True, slots=True, eq=False)
class LinearModel:
    """Sparse logistic-regression coefficients (``columns`` increasing, ``weights`` beside
    them; every other column weighs 0) over ``n_features`` hashed columns of scheme
    ``features``."""

    columns: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64]
    intercept: float
    n_features: int = N_FEATURES
    features: str = FEATURES

    def __post_init__(self) -> None:
        if self.columns.shape != self.weights.shape or self.columns.ndim != 1:
            raise ModelFormatError("columns and weights must be two vectors of one length")
        if self.columns.size and (int(self.columns.min()) < 0
                                  or int(self.columns.max()) >= self.n_features
                                  or bool(np.any(np.diff(self.columns) <= 0))):
            raise ModelFormatError("columns must increase within the feature range")
        if not np.isfinite(self.weights).all() or not np.isfinite(self.intercept):
            raise ModelFormatError("weights must be finite")

    @staticmethod
    def from_dense(coefficients: npt.ArrayLike, intercept: float,
                   n_features: int = N_FEATURES, features: str = FEATURES) -> LinearModel:
        """The model of a dense coefficient vector (its non-zero entries are kept)."""
        dense = np.asarray(coefficients, dtype=np.float64).ravel()
        columns = np.flatnonzero(dense).astype(np.int64)
        return LinearModel(columns, dense[columns], float(intercept), n_features, features)

    def dense(self) -> npt.NDArray[np.float64]:
        """The coefficients as one vector of ``n_features`` values."""
        out = np.zeros(self.n_features, dtype=np.float64)
        out[self.columns] = self.weights
        return out

    def margins(self, features: sp.csr_matrix) -> npt.NDArray[np.float64]:
        """``w . x + b`` of each row of ``features``."""
        if features.shape[1] != self.n_features:
            raise ModelFormatError(f"features have {features.shape[1]} columns, the model "
                                   f"{self.n_features}")
        return np.asarray(features @ self.dense()).ravel() + self.intercept

    def scores(self, features: sp.csr_matrix) -> npt.NDArray[np.float64]:
        """The probability of the class for each row of ``features`` (see the module)."""
        return sigmoid(self.margins(features))

    def to_bytes(self) -> bytes:
        name = self.features.encode("utf-8")
        return b"".join((
            _HEAD.pack(MAGIC, FORMAT_VERSION, len(name)), name,
            _SIZES.pack(self.n_features, self.columns.size, self.intercept),
            self.columns.astype("<u4").tobytes(), self.weights.astype("<f8").tobytes()))

    @staticmethod
    def from_bytes(data: bytes, features: str = FEATURES) -> LinearModel:
        """The model stored by :meth:`to_bytes`; :class:`ModelFormatError` when the bytes do
        not parse or were trained on another feature scheme than ``features``."""
        data = bytes(data)
        try:
            magic, version, name_len = _HEAD.unpack_from(data, 0)
            at = _HEAD.size
            name = data[at:at + name_len].decode("utf-8")
            at += name_len
            n_features, k, intercept = _SIZES.unpack_from(data, at)
        except (struct.error, UnicodeDecodeError) as exc:
            raise ModelFormatError(f"unreadable model: {exc}") from None
        at += _SIZES.size
        if magic != MAGIC or version != FORMAT_VERSION:
            raise ModelFormatError("not a classifier model of a known format")
        if name != features:
            raise ModelFormatError(f"model of feature scheme {name!r}, not {features!r}")
        if len(data) != at + 12 * k:
            raise ModelFormatError("model bytes of the wrong length")
        columns = np.frombuffer(data, dtype="<u4", count=k, offset=at).astype(np.int64)
        weights = np.frombuffer(data, dtype="<f8", count=k, offset=at + 4 * k).astype(np.float64)
        return LinearModel(columns, weights, float(intercept), int(n_features), name)


def sigmoid(x: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The logistic function, without overflow for large negative margins."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out
