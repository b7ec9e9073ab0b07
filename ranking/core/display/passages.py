"""Passages of a page's text that answer a query, and passages packed into a token budget.

Layer: ``ranking.core`` (pure Python). The agent tools (:mod:`ranking.agent.tools`) call
:func:`best_passages` on the Markdown of a result's cached copy
(:mod:`ranking.core.display.markdown`) and :func:`pack` on the passages of several results.

Contract: a :class:`Passage` is a slice of the text it was cut from: ``text[start:end] ==
passage.text``, offsets in characters (Python string indices, Unicode code points), never
trimmed or re-spaced after the cut. The agent API's test checks it for every passage.

Cutting: the text's paragraphs (runs of characters between blank lines, outer white space
left out of the span) are the units; a paragraph longer than ``max_chars`` is cut into
windows of at most ``max_chars`` characters that end after a sentence's full stop or at a
line break where there is one, else at a space (a word longer than a window is cut where it
must). A fenced code block is a paragraph like any other.

Scoring, per unit: each distinct query word matched counts 1, each further occurrence
``REPEAT`` (at most ``REPEAT_CAP`` in all), a unit whose section heading matches gets
``HEADING`` more; units with no match, and heading lines (they name a passage's section),
are never passages. Best first; equal scores in text order.

Packing (:func:`pack`): passages of several pages, best first, taken while their estimated
tokens (:func:`estimate_tokens`, about four characters a token, plus ``OVERHEAD`` for the
citation around each) fit the budget, at most ``per_url`` from one url; one that does not fit
is passed over for smaller ones after it.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

MAX_CHARS = 600
REPEAT = 0.1
REPEAT_CAP = 0.5
HEADING = 0.25
CHARS_PER_TOKEN = 4
OVERHEAD = 24  # tokens of the id, url, date and offsets that cite a passage
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(r"[.!?:;](?=\s)|\n")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Passage:
    """``text[start:end]`` of the text it was cut from, its ``score`` for the query and the
    ``section`` (heading title) it is under ("" before the first heading)."""

    start: int
    end: int
    text: str
    score: float
    section: str = ""


def units(text: str, max_chars: int = MAX_CHARS) -> list[tuple[int, int]]:
    """The (start, end) spans passages are cut from (see the module docstring), in order."""
    spans = []
    paragraphs, at = [], 0
    for m in _BLANK_LINE.finditer(text):
        paragraphs.append((at, m.start()))
        at = m.end()
    paragraphs.append((at, len(text)))
    for start, end in paragraphs:
        start, end = _trimmed(text, start, end)
        while end - start > max_chars:
            cut = _cut(text, start, start + max_chars)
            spans.append(_trimmed(text, start, cut))
            start = cut
            while start < end and text[start].isspace():
                start += 1
        if start < end:
            spans.append(_trimmed(text, start, end))
    return [s for s in spans if s[0] < s[1]]


def _cut(text: str, start: int, limit: int) -> int:
    """Where a window from ``start`` ends, at most at ``limit``: after the last sentence end
    or line break in its second half, else at its last space, else at ``limit``."""
    half = start + (limit - start) // 2
    best = -1
    for m in _SENTENCE_END.finditer(text, half, limit):
        best = m.end()
    if best > start:
        return best
    space = text.rfind(" ", half, limit)
    return space if space > start else limit


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def best_passages(text: str, pattern: re.Pattern[str] | None, limit: int,
                  headings: Sequence[tuple[int, str]] = (),
                  max_chars: int = MAX_CHARS,
                  spans: Sequence[tuple[int, int]] | None = None,
                  scan: Sequence[str] | None = None,
                  lowered: str | None = None) -> list[Passage]:
    """At most ``limit`` passages of ``text`` that match ``pattern`` (the query words, as
    :func:`ranking.core.display.snippets.highlight_pattern` makes it), best first;
    ``headings`` ((offset, title), in order) name each passage's section; ``spans``: the
    text's :func:`units` when the caller keeps them (they do not depend on the query).
    With ``lowered`` (``text.lower()``, of the same length) and ``scan`` (lower-case words
    every match begins with: :attr:`ranking.core.display.snippets.QueryWords.scan`), matches
    are found by literal searches of ``lowered`` and the pattern tried only there, instead
    of the pattern's scan of every character (the same matches: see :func:`matches`)."""
    if pattern is None or limit <= 0 or not text:
        return []
    if spans is None:
        spans = units(text, max_chars)
    starts = [a for a, _ in spans]
    found: dict[int, list[str]] = {}
    for m in matches(text, pattern, scan, lowered):  # matches filed under their unit
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and m.end() <= spans[i][1]:
            found.setdefault(i, []).append(m.group(0).lower())
    head_starts = [offset for offset, _ in headings]
    scored: list[tuple[float, int, int, str]] = []
    for i, words in found.items():
        start, end = spans[i]
        if text.startswith("#", start):
            continue  # a heading names its section's passages; it is not one
        h = bisect.bisect_right(head_starts, start) - 1
        section = headings[h][1] if h >= 0 else ""
        distinct = len(set(words))
        score = distinct + min(REPEAT_CAP, REPEAT * (len(words) - distinct))
        if section and pattern.search(section):
            score += HEADING
        scored.append((score, start, end, section))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [Passage(start, end, text[start:end], round(score, 4), section)
            for score, start, end, section in scored[:limit]]


def matches(text: str, pattern: re.Pattern[str], scan: Sequence[str] | None,
            lowered: str | None) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in ``text``, in order. A match begins at a word start with one
    of ``scan``'s words (case aside), so where ``lowered`` is given the candidates are the
    places ``str.find`` finds a scan word in it (C speed), and the pattern is tried at each
    (its look-behind sees the text before). Without them, ``pattern.finditer``."""
    if not scan or lowered is None or len(lowered) != len(text):
        yield from pattern.finditer(text)
        return
    starts: set[int] = set()
    for word in scan:
        at = lowered.find(word)
        while at >= 0:
            starts.add(at)
            at = lowered.find(word, at + 1)
    end = -1
    for at in sorted(starts):
        if at < end:
            continue  # inside the match before: finditer's matches do not overlap
        m = pattern.match(text, at)
        if m is not None:
            end = m.end()
            yield m


def estimate_tokens(text: str) -> int:
    """Tokens a passage costs in a budget: about four characters a token, plus the
    citation's ``OVERHEAD``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) + OVERHEAD


@dataclass(frozen=True, slots=True)
class Candidate(Generic[T]):
    """A passage of the page ``url`` offered to :func:`pack`, with what the caller cites it
    by (``source``) and its ``rank`` among the results (a tie-break: the better result
    first)."""

    url: str
    passage: Passage
    source: T
    rank: int


def pack(candidates: Iterable[Candidate[T]], token_budget: int, per_url: int
         ) -> tuple[list[Candidate[T]], int]:
    """(the candidates kept, best passage score first, then result rank, then text order;
    their estimated tokens) within ``token_budget``, at most ``per_url`` from one url."""
    ordered = sorted(candidates, key=lambda c: (-c.passage.score, c.rank, c.passage.start))
    kept: list[Candidate[T]] = []
    used = 0
    counts: dict[str, int] = {}
    for c in ordered:
        if counts.get(c.url, 0) >= per_url:
            continue
        cost = estimate_tokens(c.passage.text)
        if used + cost > token_budget:
            continue
        kept.append(c)
        used += cost
        counts[c.url] = counts.get(c.url, 0) + 1
    return kept, used
