"""Text analysis shared by indexing and querying: one code path for both.

Layer: ``indexer.core.text`` (pure Python; imports neither ``crawler`` nor ``ranking``).

Public API:

* :class:`TextAnalyzer` (``terms(text, lang)``, ``query_terms``, ``positions``) and
  :func:`analyze`: tokenise (canonical forms, n-grams) and stem;
* :class:`TermPositions`: a document's terms with their positions, in arrays;
* :func:`tokenize`: the unstemmed tokens;
* :func:`guess_language`, :func:`declared_language`, :func:`guess_text_language`,
  :func:`sure_text_language`, :class:`LanguageGuess`;
* :func:`stop_words`, :func:`link_stop_words`, :func:`remove_stop_words`;
* :func:`normalize_tag`, :func:`major`, :func:`snowball_algorithm`.
"""

from __future__ import annotations

from .analyzer import TextAnalyzer, analyze, term_positions
from .errors import TextAnalysisError, UnknownLanguageError
from .langtags import major, normalize_tag, snowball_algorithm
from .language import (
    LanguageGuess,
    declared_language,
    guess_language,
    guess_text_language,
    language_from_url,
    sure_text_language,
)
from .stopwords import link_stop_words, remove_stop_words, stop_words
from .term_positions import TermPositions
from .tokenize import char_ngrams, spell_url, tokenize

__all__ = [
    "LanguageGuess",
    "TextAnalysisError",
    "TextAnalyzer",
    "TermPositions",
    "UnknownLanguageError",
    "analyze",
    "char_ngrams",
    "declared_language",
    "guess_language",
    "guess_text_language",
    "language_from_url",
    "link_stop_words",
    "major",
    "normalize_tag",
    "remove_stop_words",
    "snowball_algorithm",
    "spell_url",
    "stop_words",
    "sure_text_language",
    "term_positions",
    "tokenize",
]
