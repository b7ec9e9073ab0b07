"""Unicode tokenisation with canonical forms: the first step of the one analysis path.

Layer: ``indexer.core.text``. Used by :mod:`.analyzer` for documents (fetcher side) and queries
(ranking side) alike, so a query term and a document term always come out the same.

Rules, in order of precedence inside one left-to-right scan:

* URLs (``http://``, ``https://``, ``ftp://``, ``www.``) and e-mail addresses become one token in
  which ``. : / @ [ ] ( ) ? = &`` are spelled ``_d_ _c_ _s_ _at_ _bo_ _bc_ _po_ _pc_ _q_ _e_
  _and_`` and any other non-word character ``_``;
* acronyms written with dots (``U.S.A.``) become ``_usa``;
* ``&`` and ``'n'`` between word characters join (``AT&T`` -> ``at_and_t``);
* decimal numbers stay whole (``3.11``);
* other runs of word characters are words; apostrophes split words;
* runs of scripts written without spaces are cut into overlapping character n-grams:
  2-grams for Chinese and Japanese (Han, Hiragana, Katakana), 3-grams for Thai, Lao, Khmer and
  Myanmar. A run shorter than n is one token.

Every token is lower-cased; the text is NFKC-normalised first (full-width letters, ligatures).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

# Letters, digits, and the combining marks that scripts such as Thai and Devanagari need
# inside a word (Python's ``\w`` leaves marks out).
_WORD_CHARS = (
    r"\w\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    r"\u06d6-\u06ed\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
)
_URL_CHARS = r"[^\s<>\"'`{}|\\^]"

_URL_BRANCH = rf"(?P<url>(?:(?:https?|ftp)://|\bwww\.){_URL_CHARS}+)"
_EMAIL_BRANCH = r"(?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
_OTHER_BRANCHES = rf"""
    |(?P<acronym>(?<![\w.])(?:[^\W\d_]\.){{2,}})
    |(?P<number>\d+(?:[.,]\d+)+)
    |(?P<word>[{_WORD_CHARS}]+(?:(?:&|'n')[{_WORD_CHARS}]+)*)
    """
_NEVER = "(?!)"  # a branch that cannot match: the groups stay, their order too
_TOKEN = re.compile(f"{_URL_BRANCH}|{_EMAIL_BRANCH}{_OTHER_BRANCHES}", re.VERBOSE | re.IGNORECASE)
# _TOKEN without the branches a text cannot match, by (may hold a URL, may hold an e-mail):
# a URL needs "://" or "www.", an e-mail "@". The others match the same at every position
# (a branch that never matches never comes first), and each position tries fewer branches.
_TOKEN_FOR = {
    (url, email): re.compile(
        f"{_URL_BRANCH if url else f'(?P<url>{_NEVER})'}"
        f"|{_EMAIL_BRANCH if email else f'(?P<email>{_NEVER})'}{_OTHER_BRANCHES}",
        re.VERBOSE | re.IGNORECASE)
    for url in (False, True) for email in (False, True)
}

_URL_SPELLING = {
    ".": "_d_", ":": "_c_", "/": "_s_", "@": "_at_", "[": "_bo_", "]": "_bc_",
    "(": "_po_", ")": "_pc_", "?": "_q_", "=": "_e_", "&": "_and_",
}
_URL_OTHER = re.compile(r"[^\w.:/@\[\]()?=&]")
_URL_SPECIAL = re.compile(r"[.:/@\[\]()?=&]")
_URL_TRAILING = ".,;:!?)]}'\""

_UNSPACED = re.compile(
    r"(?P<cjk>[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
    r"|(?P<sea>[\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff]+)"
)
_HAS_UNSPACED = re.compile(
    r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    r"\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff]"
)
CJK_NGRAM = 2
SOUTHEAST_ASIAN_NGRAM = 3


def spell_url(url: str) -> str:
    """The canonical one-token spelling of a URL or e-mail address (lower case)."""
    url = url.lower()
    url = _URL_OTHER.sub("_", url)
    return _URL_SPECIAL.sub(lambda m: _URL_SPELLING[m.group()], url)


def char_ngrams(run: str, n: int) -> list[str]:
    """Overlapping character n-grams of ``run``; a run shorter than ``n`` is returned whole."""
    if len(run) <= n:
        return [run]
    return [run[i : i + n] for i in range(len(run) - n + 1)]


def _split_unspaced(word: str, out: list[str], kinds: list[int]) -> None:
    pos = 0
    for match in _UNSPACED.finditer(word):
        if match.start() > pos:
            out.append(word[pos : match.start()])
            kinds.append(WORD)
        if match.lastgroup == "cjk":
            grams = char_ngrams(match.group(), CJK_NGRAM)
        else:
            grams = char_ngrams(match.group(), SOUTHEAST_ASIAN_NGRAM)
        out.extend(grams)
        kinds.extend([NGRAM] * len(grams))
        pos = match.end()
    if pos < len(word):
        out.append(word[pos:])
        kinds.append(WORD)


# Token kinds: only WORD tokens are stemmed.
WORD = 0
CANONICAL = 1
NGRAM = 2


# Every token other than a plain run of word characters holds one of these: "://" (URLs),
# "www." (URLs), "@" (e-mail), "." or "," before a word character (acronyms, numbers), "&" or
# "'n'" (joined words). Text without them (and without unspaced scripts) is cut by one findall.
_SPECIAL = re.compile(r"[.,]\w|:/|@|&|'n'|www\.", re.IGNORECASE)
_PLAIN = re.compile(rf"[{_WORD_CHARS}]+", re.IGNORECASE)
# For the analyzer's memo (:meth:`.analyzer.TextAnalyzer.terms`): an ASCII text without a
# match of SPECIAL is cut into plain words, lower case, by PLAIN.findall of its lower case
# (the first branch of tokenize_with_kinds).
SPECIAL = _SPECIAL
PLAIN = _PLAIN


def tokenize_with_kinds(text: str) -> tuple[list[str], list[int]]:
    """Tokens of ``text`` (see module docstring) and, in parallel, each token's kind.

    Never raises on any ``str``.
    """
    if not text:
        return [], []
    text = unicodedata.normalize("NFKC", text)
    ascii_text = text.isascii()
    if ascii_text:
        # Lower-casing ASCII changes no match (the pattern ignores case) and no length.
        text = text.lower()
    if _SPECIAL.search(text) is None and (ascii_text or _HAS_UNSPACED.search(text) is None):
        tokens = _PLAIN.findall(text)
        if not ascii_text:
            tokens = [token.lower() for token in tokens]
        return tokens, [WORD] * len(tokens)
    tokens: list[str] = []
    kinds: list[int] = []
    for groups in _TOKEN.findall(text):
        _add_token(groups, ascii_text, tokens, kinds)
    return tokens, kinds


def tokenize_ascii_chunks(chunks: Sequence[str]) -> list[tuple[list[str], list[int]]]:
    """:func:`tokenize_with_kinds` of each of ``chunks``: lower-case ASCII texts without white
    space, in one regular expression pass over them all (no token spans white space, nor does
    any test look past it, so each chunk's matches are its own)."""
    out: list[tuple[list[str], list[int]]] = [([], []) for _ in chunks]
    if not out:
        return out
    # chunk i starts at starts[i] of the text joined with spaces; a match is in the last
    # chunk that starts at or before it
    starts = list(accumulate((len(chunk) + 1 for chunk in chunks), initial=0))
    index = 0
    tokens, kinds = out[0]
    text = " ".join(chunks)
    pattern = _TOKEN_FOR["://" in text or "www." in text, "@" in text]
    for match in pattern.finditer(text):
        if match.start() >= starts[index + 1]:
            index = bisect_right(starts, match.start(), index + 1) - 1
            tokens, kinds = out[index]
        _add_token(match.groups(), True, tokens, kinds)
    return out


def _add_token(groups: tuple[str, ...], ascii_text: bool, tokens: list[str],
               kinds: list[int]) -> None:
    """Append the token (or n-grams) of one match of ``_TOKEN`` and its kind."""
    url, email, acronym, number, word = groups
    if word:
        value = word if ascii_text else word.lower()
        if "&" in value or "'n'" in value:
            tokens.append(value.replace("&", "_and_").replace("'n'", "_and_"))
            kinds.append(CANONICAL)
        elif not ascii_text and _HAS_UNSPACED.search(value):
            _split_unspaced(value, tokens, kinds)
        else:
            tokens.append(value)
            kinds.append(WORD)
    elif number:
        tokens.append(number)
        kinds.append(CANONICAL)
    elif acronym:
        tokens.append("_" + acronym.replace(".", "").lower())
        kinds.append(CANONICAL)
    else:  # url or email
        value = (url or email).rstrip(_URL_TRAILING)
        if value:
            tokens.append(spell_url(value))
            kinds.append(CANONICAL)


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens of ``text`` with canonical forms and n-grams, unstemmed."""
    return tokenize_with_kinds(text)[0]


_SIMPLE_WORDS = re.compile(rf"[{_WORD_CHARS}]+")


def has_unspaced(text: str) -> bool:
    """True when ``text`` contains a character of a script written without spaces."""
    return _HAS_UNSPACED.search(text) is not None


def simple_words(text: str) -> list[str]:
    """Lower-cased runs of word characters, with no canonical forms (for language tests)."""
    return _SIMPLE_WORDS.findall(text.lower())
