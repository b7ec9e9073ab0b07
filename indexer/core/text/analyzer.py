"""The one analysis path from text to index terms, shared by documents and queries.

Layer: ``indexer.core.text``. ``crawler.core`` calls :meth:`TextAnalyzer.terms` on a page's title,
summary sentences and link texts; ``ranking.core`` calls :meth:`TextAnalyzer.query_terms` (or
:func:`analyze`) on query words. Both go through :func:`.tokenize.tokenize_with_kinds` and the
same Snowball stemmer, so a query term matches a document term exactly.

Steps: NFKC + canonical forms + n-grams (:mod:`.tokenize`), then Snowball stemming of plain words
in the language's stemmer (PyStemmer; every Snowball language). Tokens that are canonical forms,
numbers or n-grams are not stemmed. Stop words are kept (phrases need them).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import Stemmer

from .langtags import snowball_algorithm
from .stopwords import stop_words
from .tokenize import WORD, tokenize_with_kinds


class TextAnalyzer:
    """Turns text into index terms for a language.

    Owns one PyStemmer stemmer per language and thread (PyStemmer stemmers are not thread-safe);
    create one analyzer per process or per component and pass it where it is needed. The
    result of :meth:`terms` depends only on ``(text, lang)``.
    """

    __slots__ = ("_local", "_stem", "_stop")

    def __init__(self, *, stem: bool = True) -> None:
        self._stem = stem
        self._local = threading.local()
        self._stop: dict[str, frozenset[str]] = {}  # stop terms by language (immutable values)

    def _stemmer(self, lang: str | None) -> Stemmer.Stemmer | None:
        if not self._stem:
            return None
        # This thread's stemmers by language tag (and by algorithm, which tags share).
        by_lang: dict[str | None, Stemmer.Stemmer | None] | None = getattr(
            self._local, "by_lang", None)
        if by_lang is None:
            by_lang = self._local.by_lang = {}
        try:
            return by_lang[lang]
        except KeyError:
            pass
        algorithm = snowball_algorithm(lang)
        stemmer = None
        if algorithm is not None:
            stemmers: dict[str, Stemmer.Stemmer] | None = getattr(self._local, "stemmers", None)
            if stemmers is None:
                stemmers = self._local.stemmers = {}
            stemmer = stemmers.get(algorithm)
            if stemmer is None:
                stemmer = stemmers[algorithm] = Stemmer.Stemmer(algorithm)
        by_lang[lang] = stemmer
        return stemmer

    def terms(self, text: str, lang: str | None) -> list[str]:
        """The terms of ``text`` in order; a term's index in the list is its word position."""
        tokens, kinds = tokenize_with_kinds(text)
        stemmer = self._stemmer(lang)
        if stemmer is None or not tokens:
            return tokens
        if kinds.count(WORD) == len(kinds) and not any(map(str.isdigit, tokens)):
            return stemmer.stemWords(tokens)  # type: ignore[no-any-return]
        words = [i for i, kind in enumerate(kinds) if kind == WORD and not tokens[i].isdigit()]
        if words:
            stems = stemmer.stemWords([tokens[i] for i in words])
            for i, stem in zip(words, stems, strict=True):
                tokens[i] = stem
        return tokens

    def stem(self, word: str, lang: str | None) -> str:
        """One lower-cased word stemmed in ``lang`` (no tokenisation)."""
        stemmer = self._stemmer(lang)
        word = word.lower()
        return stemmer.stemWord(word) if stemmer is not None else word

    def query_terms(self, query_words: str, lang: str | None) -> list[str]:
        """The terms of the words of a query (meta words such as ``site:`` are the query
        parser's business and must be removed before). Same path as :meth:`terms`."""
        return self.terms(query_words, lang)

    def stop_terms(self, lang: str) -> frozenset[str]:
        """The terms of ``lang``'s stop words, analysed as query words are (kept per
        language): what the query parser drops among loose words, and what ends a run of
        common-phrase terms."""
        terms = self._stop.get(lang)
        if terms is None:
            terms = frozenset(t for w in stop_words(lang) for t in self.query_terms(w, lang))
            self._stop[lang] = terms
        return terms

    def positions(
        self, texts: Iterable[str], lang: str | None, start: int = 0
    ) -> tuple[dict[str, list[int]], list[int]]:
        """Terms of several consecutive text pieces with their word positions.

        Returns ``(term -> increasing positions, ends)`` where ``ends[i]`` is the position just
        after piece ``i`` (so piece ``i`` covers ``ends[i-1] .. ends[i]-1``).
        """
        postings: dict[str, list[int]] = {}
        ends: list[int] = []
        pos = start
        for text in texts:
            for term in self.terms(text, lang):
                bucket = postings.get(term)
                if bucket is None:
                    postings[term] = [pos]
                else:
                    bucket.append(pos)
                pos += 1
            ends.append(pos)
        return postings, ends


def term_positions(terms: Sequence[str], start: int = 0) -> dict[str, list[int]]:
    """Group a term sequence into term -> increasing positions (first term at ``start``)."""
    postings: dict[str, list[int]] = {}
    for offset, term in enumerate(terms):
        postings.setdefault(term, []).append(start + offset)
    return postings


def analyze(text: str, lang: str | None, analyzer: TextAnalyzer | None = None) -> list[str]:
    """Convenience: the terms of ``text`` (a fresh analyzer is made when none is given)."""
    return (analyzer or TextAnalyzer()).terms(text, lang)
