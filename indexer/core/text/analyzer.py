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
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import partial
from itertools import accumulate, chain, compress, filterfalse
from operator import not_

import Stemmer

from .langtags import snowball_algorithm
from .stopwords import stop_words
from .term_positions import TermPositions
from .tokenize import PLAIN, SPECIAL, WORD, tokenize_ascii_chunks, tokenize_with_kinds

# ASCII characters that PLAIN does not match (its runs, in ASCII text, are those of letters,
# digits and "_"), but "\n", mapped to spaces: PLAIN.findall(chunk) is then chunk.split().
_ASCII_NON_WORD = bytes(c for c in range(128) if c != 10 and not PLAIN.fullmatch(chr(c)))
_NON_WORD_TO_SPACE = bytes.maketrans(_ASCII_NON_WORD, b" " * len(_ASCII_NON_WORD))

MEMO_MAX = 200_000  # distinct chunks remembered per thread and stemmer


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
                # PyStemmer's own cache costs more than it saves beside the chunk memo
                stemmer = stemmers[algorithm] = Stemmer.Stemmer(algorithm, 0)
        by_lang[lang] = stemmer
        return stemmer

    def terms(self, text: str, lang: str | None) -> list[str]:
        """The terms of ``text`` in order; a term's index in the list is its word position.

        No token spans white space (:mod:`.tokenize`), so the terms of a text are those of its
        white-space separated chunks, in order; each distinct chunk is tokenised and stemmed
        once per thread and language (a bounded memo), whatever page or link it recurs in."""
        if not text:
            return []
        chunks = unicodedata.normalize("NFKC", text).split()
        memo = self._memo(lang)
        missing = set(chunks).difference(memo)
        if missing:
            self._learn(missing, memo, lang)
        return list(chain.from_iterable(map(memo.__getitem__, chunks)))

    def _memo(self, lang: str | None) -> dict[str, tuple[str, ...]]:
        """This thread's chunk -> terms memo for ``lang`` (languages with the same stemmer
        share one), emptied when it holds more than MEMO_MAX chunks."""
        local = self._local
        memos: dict[str | None, dict[str, tuple[str, ...]]] | None = getattr(
            local, "memos", None)
        if memos is None:
            memos = local.memos = {}
            local.by_stemmer = {}
        memo = memos.get(lang)
        if memo is None:
            memo = memos[lang] = local.by_stemmer.setdefault(id(self._stemmer(lang)), {})
        elif len(memo) > MEMO_MAX:
            memo.clear()
        return memo

    def _learn(self, chunks: set[str], memo: dict[str, tuple[str, ...]],
               lang: str | None) -> None:
        """Put the terms of each of ``chunks`` (NFKC-normalised, no white space) into ``memo``:
        :func:`.tokenize.tokenize_with_kinds`, then plain words (not numbers) stemmed.

        ASCII chunks are read together, lower-cased as one text (a line each: no chunk holds
        white space). Those without the characters canonical forms start from
        (most of them: ``SPECIAL`` finds the others in one pass) are plain words only: their
        non-word characters become spaces in one ``bytes.translate`` and each is split, and
        their distinct words are stemmed in one call. The other ASCII chunks are cut in one
        regular expression pass (:func:`.tokenize.tokenize_ascii_chunks`); only non-ASCII
        chunks are tokenised one by one."""
        stemmer = self._stemmer(lang)
        ascii_chunks = list(filter(str.isascii, chunks))
        lowered = "\n".join(ascii_chunks).lower()
        starts = list(accumulate((len(chunk) + 1 for chunk in ascii_chunks), initial=0))
        plain = [True] * len(ascii_chunks)
        for match in SPECIAL.finditer(lowered):  # (no match spans a "\n")
            plain[bisect_right(starts, match.start()) - 1] = False
        spaced = lowered.encode("ascii").translate(_NON_WORD_TO_SPACE).decode("ascii")
        tokens = list(map(str.split, compress(spaced.split("\n"), plain)))
        distinct = set(chain.from_iterable(tokens))
        words = [token for token in distinct if not token.isdigit()]
        stems = dict(zip(distinct, distinct, strict=True))
        if stemmer is not None and words:
            stems.update(zip(words, stemmer.stemWords(words), strict=True))
        memo.update(zip(compress(ascii_chunks, plain),
                        map(tuple, map(partial(map, stems.__getitem__), tokens)), strict=True))
        special = list(compress(ascii_chunks, map(not_, plain)))
        others = list(filterfalse(str.isascii, chunks))
        cut = tokenize_ascii_chunks([chunk.lower() for chunk in special])
        cut.extend(map(tokenize_with_kinds, others))
        for chunk, (tokens_, kinds) in zip(chain(special, others), cut, strict=True):
            if stemmer is not None:
                for i, kind in enumerate(kinds):
                    if kind == WORD and not tokens_[i].isdigit():
                        tokens_[i] = stemmer.stemWord(tokens_[i])
            memo[chunk] = tuple(tokens_)

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
    ) -> tuple[TermPositions, list[int]]:
        """Terms of several consecutive text pieces with their word positions.

        Returns ``(term -> increasing positions, ends)`` where ``ends[i]`` is the position just
        after piece ``i`` (so piece ``i`` covers ``ends[i-1] .. ends[i]-1``); terms in order of
        first occurrence. The same terms as :meth:`terms` of each piece, looked up for all the
        pieces at once, grouped by term in arrays (:class:`.term_positions.TermPositions`).
        """
        normalize = unicodedata.normalize
        pieces = [normalize("NFKC", text).split() for text in texts]
        chunks = list(chain.from_iterable(pieces))
        memo = self._memo(lang)
        found = list(map(memo.get, chunks))
        if None in found:  # chunks not seen yet (and those without terms: learnt again)
            self._learn(set(compress(chunks, map(not_, found))), memo, lang)
            found = list(map(memo.__getitem__, chunks))
        counted = list(accumulate(map(len, found), initial=start))
        ends = list(map(counted.__getitem__, accumulate(map(len, pieces))))
        return TermPositions.grouped(list(chain.from_iterable(found)), start), ends


def term_positions(terms: Sequence[str], start: int = 0) -> dict[str, list[int]]:
    """Group a term sequence into term -> increasing positions (first term at ``start``)."""
    postings: dict[str, list[int]] = {}
    for offset, term in enumerate(terms):
        postings.setdefault(term, []).append(start + offset)
    return postings


def analyze(text: str, lang: str | None, analyzer: TextAnalyzer | None = None) -> list[str]:
    """Convenience: the terms of ``text`` (a fresh analyzer is made when none is given)."""
    return (analyzer or TextAnalyzer()).terms(text, lang)
