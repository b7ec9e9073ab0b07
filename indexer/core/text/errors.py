"""Errors of the text-analysis layer (``indexer.core.text``).

Text analysis is total on strings: any ``str`` can be tokenised and stemmed. The only errors are
programming or configuration errors, such as asking for a language tag that is not a string.
"""

from __future__ import annotations


class TextAnalysisError(Exception):
    """Base class of text-analysis errors."""


class UnknownLanguageError(TextAnalysisError, ValueError):
    """A language tag that cannot be parsed (not a BCP 47 like ``xx`` or ``xx-YY``)."""
