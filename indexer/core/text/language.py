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
   be sure (:func:`sure_text_language`): the winner's words delete at least
   MIN_EVIDENCE_BYTES, and a language other than English deletes ENGLISH_MARGIN times what
   English's do. Pages with little running text (a back-of-book index, a module list, source
   code) otherwise come out French or Danish on a handful of shared words ("a", "in", "for"),
   and their words are then stemmed and matched in that language;
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
MIN_EVIDENCE_BYTES = 24  # bytes the winner's frequent words must delete from a page's sample
ENGLISH_MARGIN = 1.5  # how much more another language must delete than English to beat it
_UNINFORMATIVE = frozenset({"en", "en-US"})
# A word of one character (``\s`` is what ``str.split`` cuts at): removed, white space kept.
_SINGLE_CHARACTER = re.compile(r"(?<!\S)\S(?!\S)")


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
    sample = " ".join(text[: sample_chars * 2].split())[:sample_chars]
    scores: dict[str, int] = {}
    if not sample:
        return scores
    languages = tuple(SPACED)
    index = _spaced_index()
    counts = [0] * len(languages)
    words = Counter(simple_words(sample))
    for word in words.keys() & index.keys():
        # Lengths are UTF-8 bytes, as in Yioop (PHP's strlen): a CJK character weighs 3.
        size = (len(word.encode("utf-8")) + 1) * words[word]  # with the space it leaves
        for i in index[word]:
            counts[i] += size
    for i, count in enumerate(counts):
        if count:
            scores[languages[i]] = count
    if has_unspaced(sample):
        for lang, items in _unspaced_items():
            rest = sample
            for item in items:
                if item in rest:
                    rest = rest.replace(item, "")
            if len(rest) < len(sample):
                scores[lang] = len(sample.encode("utf-8")) - len(rest.encode("utf-8"))
    return scores


def guess_text_language(text: str, default: str | None = "en") -> str | None:
    """The text test alone: the language whose frequent words delete most of the sample."""
    scores = text_scores(text)
    if not scores:
        return default
    # On a tie, a language other than English wins: English is the uninformative default
    # (the seed distrusts "en" declarations for the same reason) and leaks into every page.
    return max(scores.items(), key=lambda item: (item[1], item[0] != "en"))[0]


def sure_text_language(text: str) -> str | None:
    """The text test of a page, when it is sure (module docstring, rule 4): None when the
    winning language's words delete fewer than MIN_EVIDENCE_BYTES, ``en`` when the winner,
    another language, deletes less than ENGLISH_MARGIN times what English's words do. Single
    letters are no evidence (an index's "A | B | C" bar would read as French "a" and "y")."""
    if len(text) <= 2 * SAMPLE_CHARS:  # (text_scores reads no further: the same sample)
        words = _SINGLE_CHARACTER.sub("", text)
    else:
        words = " ".join(word for word in text.split() if len(word) > 1)
    scores = text_scores(words)
    if not scores:
        return None
    best, deleted = max(scores.items(), key=lambda item: (item[1], item[0] != "en"))
    if deleted < MIN_EVIDENCE_BYTES:
        return None
    if best != "en" and deleted < ENGLISH_MARGIN * scores.get("en", 0):
        return "en"
    return best


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
