"""The features a classifier reads from a page: hashed word counts of its summary.

Layer: ``classifiers.core`` (pure Python: numpy, scipy, scikit-learn). The seed's fetcher step
"run classifiers on the summary" ("Yioop Search Engine Ranking Mechanisms") reads the page's
title and description; the admin trains on the same two fields of the pages it stored
(:mod:`classifiers.core.training`), so one function makes the text of both
(:func:`page_text`) and one the features (:func:`featurize`).

Words are hashed (scikit-learn's ``HashingVectorizer``: MurmurHash3 of each lower-cased word of
two or more letters or digits, modulo :data:`N_FEATURES`): no vocabulary is fitted or stored,
so a model is only its coefficients, and a fetcher featurizes a page without any state. The
counts are scaled to unit length (l2), so a long page and a short one weigh alike.
:data:`FEATURES` names this scheme; a model stores it, and a model trained on another scheme
is refused (:class:`classifiers.core.errors.ModelFormatError`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import HashingVectorizer

FEATURES = "hashed-words-v1"
N_FEATURES = 1 << 18
TEXT_CHARS = 20_000  # characters of a page's text read (a summary is 2,000 by default)


def page_text(title: str, description: str) -> str:
    """The text a classifier reads: the title, then the description (the page's summary)."""
    return f"{title or ''}\n{description or ''}"[:TEXT_CHARS]


@cache
def _hasher() -> HashingVectorizer:
    """The one vectorizer of this process, made on first use. Stateless: transform() needs
    no fit, and the same parameters give the same columns in every process and every release
    (MurmurHash3, seed 0)."""
    # imported here, not with the module: every crawl process imports this module (a crawl's
    # definition names its classifiers) and scikit-learn takes about a second of CPU to
    # import, which only a crawl that runs classifiers (or the admin training one) needs
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(n_features=N_FEATURES, alternate_sign=False, norm="l2",
                             lowercase=True, dtype="float64")


def featurize(texts: Sequence[str]) -> sp.csr_matrix:
    """One row of features per text (``len(texts)`` x :data:`N_FEATURES`, CSR)."""
    return _hasher().transform(list(texts))
