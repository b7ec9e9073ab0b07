"""Errors of ``classifiers.core``.

:class:`ClassifierError` is the base; the glue turns each into a message for the admin.
"""

from __future__ import annotations


class ClassifierError(Exception):
    """Something a classifier cannot do with what it was given."""


class NotEnoughLabels(ClassifierError):
    """Training or cross-validation needs more labelled pages (of each kind)."""


class ModelFormatError(ClassifierError, ValueError):
    """Stored model bytes that do not parse, or of another feature scheme."""
