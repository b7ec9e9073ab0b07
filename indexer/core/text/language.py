"""Language guessing, as the seed document gives it.

Layer: ``indexer.core.text``. The page processors call :func:`guess_language` with what a page
declares; the query side calls :func:`guess_text_language` on the query words.

Order (the first that answers wins):

1. declared tags, in the order given (the xml prologue's ``lang``, ``<html lang>``, a
   ``Content-Language`` meta, the HTTP header), skipping ``en`` and ``en-US``, which many sites
   state whatever their language;
2. a charset that implies a language (GB2312 -> zh-CN, Shift_JIS -> ja, ...);
3. the URL: its country domain (``.vn`` -> vi), else a language marker in its path
   (``/fr/``, ``ch01.ja.html``), which multilingual sites use;
4. the text test: for each language, delete its frequent words (:mod:`.wordlists`) from a sample
   of the text, and pick the language that leaves the shortest text. Spaced languages delete
   whole words, unspaced ones (Chinese, Japanese, Thai) substrings. For a page the test must
   be sure (:func:`sure_text_language`), judged on each language's *vocabulary*: the bytes of
   the distinct frequent words of it that the sample holds (a word repeated a hundred times
   is one word of evidence). Pages with little running text (a back-of-book index, a module
   list, a table of SQL keywords whose "non" column repeats, a list of e-mail addresses ending
   in ".com") otherwise come out French, Italian or Portuguese on a handful of shared or
   repeated words, and their words are then stemmed and matched in that language. The
   winner's vocabulary must reach MIN_EVIDENCE_BYTES; then English and the best other
   language by the seed's deletion are compared: English leaks into pages of every language
   (commands, code, untranslated strings of a partly translated manual) while other
   languages do not leak into English pages, so the other language wins when its
   vocabulary is at least TRANSLATION_SHARE of English's (on the local web's 3,526 English
   pages the largest share is 0.34; the Debian Reference's part-translated French and
   Portuguese chapters have 0.70 to 0.94);
5. a skipped ``en``/``en-US`` declaration, else the default (``en``).

If the text test agrees with a skipped English declaration, the declared form (``en-US``) is kept.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from urllib.parse import urlsplit

from ..urls import url_host
from .langtags import CHARSET_LANGUAGES, COUNTRY_DOMAINS, major, normalize_tag
from .tokenize import has_unspaced, simple_words
from .wordlists import SPACED, UNSPACED, frequent_words

SAMPLE_CHARS = 20000
MIN_EVIDENCE_BYTES = 24  # bytes of distinct frequent words the winner must have in a page's sample
TRANSLATION_SHARE = 0.6  # another language's vocabulary against English's that makes it win
_UNINFORMATIVE = frozenset({"en", "en-US"})


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    """A guessed language tag and which rule produced it
    (``declared``, ``charset``, ``url``, ``text`` or ``default``)."""

    lang: str
    source: str


@cache
def _spaced_index() -> dict[str, tuple[int, ...]]:
    """word -> indexes (into ``_spaced_languages()``) of the languages listing it."""
    index: dict[str, list[int]] = {}
    for i, lang in enumerate(SPACED):
        for word in frequent_words(lang):
            index.setdefault(word, []).append(i)
    return {word: tuple(langs) for word, langs in index.items()}


@cache
def _unspaced_items() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(lang, items longest first) for each unspaced language."""
    return tuple(
        (lang, tuple(sorted(frequent_words(lang), key=len, reverse=True))) for lang in UNSPACED
    )


def text_scores(text: str, sample_chars: int = SAMPLE_CHARS) -> dict[str, int]:
    """UTF-8 bytes deleted from the sample by each language's frequent words (higher = likelier).

    Languages that delete nothing are absent.
    """
    return _scores(text, sample_chars)[0]


def _scores(text: str, sample_chars: int = SAMPLE_CHARS) -> tuple[dict[str, int],
                                                                  dict[str, int]]:
    """(bytes deleted, vocabulary) of each language with evidence in the sample: the bytes its
    frequent words delete (the seed's test), and the bytes of its distinct frequent words
    found, each with the space it leaves (an unspaced language's vocabulary is what it
    deletes: its items are substrings, not words)."""
    sample = " ".join(text[: sample_chars * 2].split())[:sample_chars]
    scores: dict[str, int] = {}
    vocabulary: dict[str, int] = {}
    if not sample:
        return scores, vocabulary
    languages = tuple(SPACED)
    index = _spaced_index()
    counts = [0] * len(languages)
    distinct = [0] * len(languages)
    words = Counter(simple_words(sample))
    for word in words.keys() & index.keys():
        # Lengths are UTF-8 bytes, as in Yioop (PHP's strlen): a CJK character weighs 3.
        size = len(word.encode("utf-8")) + 1  # with the space it leaves
        deleted = size * words[word]
        for i in index[word]:
            counts[i] += deleted
            distinct[i] += size
    for i, count in enumerate(counts):
        if count:
            scores[languages[i]] = count
            vocabulary[languages[i]] = distinct[i]
    if has_unspaced(sample):
        for lang, items in _unspaced_items():
            rest = sample
            for item in items:
                if item in rest:
                    rest = rest.replace(item, "")
            if len(rest) < len(sample):
                scores[lang] = vocabulary[lang] = (len(sample.encode("utf-8"))
                                                   - len(rest.encode("utf-8")))
    return scores, vocabulary


def guess_text_language(text: str, default: str | None = "en") -> str | None:
    """The text test alone: the language whose frequent words delete most of the sample."""
    scores = text_scores(text)
    if not scores:
        return default
    # On a tie, a language other than English wins: English is the uninformative default
    # (the seed distrusts "en" declarations for the same reason) and leaks into every page.
    return max(scores.items(), key=lambda item: (item[1], item[0] != "en"))[0]


def sure_text_language(text: str) -> str | None:
    """The text test of a page, when it is sure (module docstring, rule 4): None when no
    language's vocabulary reaches MIN_EVIDENCE_BYTES; else the language other than English
    that deletes most (the seed's test) when its vocabulary reaches MIN_EVIDENCE_BYTES and
    TRANSLATION_SHARE of English's, else ``en`` when English's reaches MIN_EVIDENCE_BYTES. Single letters are no evidence (an index's "A | B | C" bar would
    read as French "a" and "y")."""
    # The words of more than one character (what removing single-character words leaves,
    # spaces collapsed, as _scores reads it).
    scores, vocabulary = _scores(" ".join([word for word in text.split() if len(word) > 1]))
    if not vocabulary or max(vocabulary.values()) < MIN_EVIDENCE_BYTES:
        return None
    others = [lang for lang in scores if lang != "en"]
    if not others:
        return "en"
    best = max(others, key=lambda lang: (scores[lang], vocabulary[lang]))
    if vocabulary[best] >= max(MIN_EVIDENCE_BYTES, TRANSLATION_SHARE * vocabulary.get("en", 0)):
        return best
    return "en" if vocabulary.get("en", 0) >= MIN_EVIDENCE_BYTES else None


# Language markers that multilingual sites put in paths: a first path segment (``/fr/``,
# ``/pt-br/``) or a content-negotiation file suffix (``ch01.fr.html``, ``index.html.de``).
# Only tags of languages we can analyse, and never English (the uninformative default).
_PATH_LANGS = frozenset(
    "de fr es it pt nl sv da fi pl cs ru uk ja zh ko tr hu ro el ar he fa vi th ca".split()
)
_FIRST_SEGMENT = re.compile(r"^/([a-z]{2}(?:[-_][a-z]{2,4})?)/", re.IGNORECASE)
_FILE_SUFFIX = re.compile(
    r"\.([a-z]{2}(?:[-_][a-z]{2,4})?)\.(?:html?|xhtml|php)$|\.html?\.([a-z]{2}(?:[-_][a-z]{2})?)$",
    re.IGNORECASE,
)


def _path_language(path: str) -> str | None:
    for match in (_FILE_SUFFIX.search(path), _FIRST_SEGMENT.match(path)):
        if match is None:
            continue
        tag = normalize_tag(match.group(1) or match.group(match.lastindex or 1))
        if tag is not None and major(tag) in _PATH_LANGS:
            return tag
    return None


def language_from_url(url: str | None) -> str | None:
    """The language a URL states: its country domain (``https://x.vn/`` -> ``vi``), else a
    language marker in its path (``/fr/``, ``ch01.ja.html``); ``None`` when it states none."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = url_host(url)
    except ValueError:
        return None
    tld = host.rstrip(".").rsplit(".", 1)[-1].lower() if "." in host else ""
    lang = COUNTRY_DOMAINS.get(tld)
    if lang is not None:
        return lang
    return _path_language(parts.path)


def declared_language(
    *,
    declared: Sequence[str | None] = (),
    charset: str | None = None,
    url: str | None = None,
) -> LanguageGuess | None:
    """What :func:`guess_language` answers from the declarations, the charset and the URL
    alone (rules 1-3), or ``None`` when the text test would have its say: a caller can then
    skip making a text sample."""
    for tag in declared:
        norm = normalize_tag(tag)
        if norm is not None and norm not in _UNINFORMATIVE:
            return LanguageGuess(norm, "declared")
    if charset:
        lang = CHARSET_LANGUAGES.get(charset.strip().lower())
        if lang is not None:
            return LanguageGuess(lang, "charset")
    lang = language_from_url(url)
    if lang is not None:
        return LanguageGuess(lang, "url")
    return None


def guess_language(
    *,
    declared: Sequence[str | None] = (),
    charset: str | None = None,
    url: str | None = None,
    text: str = "",
    default: str = "en",
) -> LanguageGuess:
    """Guess a page's language (see the module docstring for the order of rules)."""
    ruled = declared_language(declared=declared, charset=charset, url=url)
    if ruled is not None:
        return ruled
    # a declared English only counts when the text agrees (many pages declare it by default)
    english = next((norm for norm in map(normalize_tag, declared)
                    if norm is not None and norm in _UNINFORMATIVE), None)
    guessed = sure_text_language(text) if text else None
    if guessed is not None:
        if english is not None and major(guessed) == "en":
            return LanguageGuess(english, "declared")
        return LanguageGuess(guessed, "text")
    if english is not None:
        return LanguageGuess(english, "declared")
    return LanguageGuess(default, "default")
