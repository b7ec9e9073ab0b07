"""What summarizers share: text blocks in, scored sentences out.

Layer: ``crawler.core.processing.summarizers``. A page processor cuts a page into :class:`TextBlock`
values (in document order) and hands them to the configured :class:`Summarizer`. A summarizer splits
blocks into sentences, scores them, keeps the best ones up to the length budget and returns them
in document order as :class:`~crawler.core.processing.page.ScoredSentence` values whose weights are
normalised by :func:`normalize_weights` (mean about 1, never 0): these become the region weights
of the sentences' term positions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from crawler.core.processing.page import ScoredSentence
from indexer.core.text import stop_words
from indexer.core.text.tokenize import has_unspaced, simple_words, tokenize

MAX_SENTENCE_LEN = 400       # longer sentences are cut at a space
MAX_SENTENCES = 2000         # sentences looked at per page (the rest cannot be chosen)
MAX_DISTINCT_TERMS = 1000    # terms of the centroid vectors

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=\S)|(?<=[。！？；])")


class TextBlock(NamedTuple):
    """A block of a page's text: ``tag`` is the block element (``p``, ``h1``, ``li``...,
    ``meta`` for a meta description, ``text`` for plain text) and ``offset`` its character
    position in the page. (A named tuple: pages have hundreds of blocks, and a tuple is the
    cheapest immutable record to make.)"""

    text: str
    tag: str = "p"
    offset: int = 0


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence with where it came from; ``index`` is its order in the page."""

    text: str
    tag: str
    offset: int
    index: int


class Summarizer(Protocol):
    """Picks a page's summary. ``summarize`` returns at most ``max_len`` characters of
    sentences (joined with single spaces), in document order, with normalised weights."""

    name: str

    def summarize(
        self, blocks: Sequence[TextBlock], lang: str, max_len: int
    ) -> tuple[ScoredSentence, ...]: ...


def _cut(text: str, limit: int) -> list[str]:
    pieces = []
    while len(text) > limit:
        cut = text.rfind(" ", 0, limit)
        if cut <= 0:
            cut = limit
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        pieces.append(text)
    return pieces


# Texts are whitespace-collapsed before splitting, so a sentence end is one of these followed
# by one space (then something); replacing that space by a NUL and splitting on NULs cuts
# there at C speed. Texts with NULs or with the CJK ends (which end a sentence without a
# space) take the regular expression.
_SPACED_ENDS = (". ", "! ", "? ", "; ")
_SLOW_SPLIT = re.compile("[\x00。！？；]")


def _split_text(text: str) -> list[str]:
    """``_SENTENCE_END.split(text)`` for a whitespace-collapsed ``text``."""
    if _SLOW_SPLIT.search(text) is not None:
        return _SENTENCE_END.split(text)
    for end in _SPACED_ENDS:
        if end in text:
            text = text.replace(end, end[0] + "\x00")
    return text.split("\x00")


class SplitBlocks(tuple):  # type: ignore[type-arg]
    """Text blocks (a tuple of :class:`TextBlock`) that keep their sentences once
    :func:`sentence_parts` has cut them: the summarizer and whole-page indexing read the same
    sentences of a page, cut once."""

    _parts: tuple[list[str], list[str], list[int]] | None = None

    def parts(self) -> tuple[list[str], list[str], list[int]]:
        """All the sentences' (texts, tags, offsets), cut on the first call (do not modify)."""
        if self._parts is None:
            self._parts = _sentence_parts(self, None)
        return self._parts


def sentence_parts(blocks: Sequence[TextBlock], limit: int | None = MAX_SENTENCES
                   ) -> tuple[list[str], list[str], list[int]]:
    """:func:`split_sentences` as three parallel lists: texts, tags and offsets; at most
    ``limit`` sentences (None: all of them, as whole-page indexing reads them). New lists on
    every call (:class:`SplitBlocks` cut theirs once)."""
    if isinstance(blocks, SplitBlocks):
        texts, tags, offsets = blocks.parts()
        end = len(texts) if limit is None else limit
        return texts[:end], tags[:end], offsets[:end]
    return _sentence_parts(blocks, limit)


def _sentence_parts(blocks: Sequence[TextBlock], limit: int | None
                    ) -> tuple[list[str], list[str], list[int]]:
    texts: list[str] = []
    tags: list[str] = []
    offsets: list[int] = []
    add_text, add_tag, add_offset = texts.append, tags.append, offsets.append
    for block in blocks:
        text = block.text
        # Already collapsed (the HTML processor's blocks are): printable (no white space but
        # the ASCII space), no two spaces together, none at either end. Else collapse.
        if not text.isprintable() or "  " in text or text[:1] == " " or text[-1:] == " ":
            text = " ".join(text.split())
        if not text:
            continue
        offset = block.offset
        tag = block.tag
        parts = _split_text(text)
        if len(parts) == 1 and len(text) <= MAX_SENTENCE_LEN:  # one sentence (most blocks)
            add_text(text)
            add_tag(tag)
            add_offset(offset)
            if limit is not None and len(texts) >= limit:
                return texts, tags, offsets
            continue
        for part in parts:
            part = part.strip()
            if not part:
                continue
            for piece in _cut(part, MAX_SENTENCE_LEN) if len(part) > MAX_SENTENCE_LEN else [part]:
                add_text(piece)
                add_tag(tag)
                add_offset(offset)
                offset += len(piece) + 1
                if limit is not None and len(texts) >= limit:
                    return texts, tags, offsets
    return texts, tags, offsets


def split_sentences(blocks: Sequence[TextBlock]) -> list[Sentence]:
    """Sentences of the blocks in order (whitespace collapsed, empty ones dropped)."""
    texts, tags, offsets = sentence_parts(blocks)
    return [Sentence(*fields, i) for i, fields in enumerate(zip(texts, tags, offsets, strict=True))]


def normalize_weights(scores: Sequence[float]) -> list[float]:
    """Scores -> weights: ``0.999 * s / mean(s) + 0.001`` (so the mean is about 1 and no
    weight is 0); all-zero or non-finite scores give weight 1."""
    clean = [s if math.isfinite(s) and s > 0 else 0.0 for s in scores]
    total = sum(clean)
    if total <= 0:
        return [1.0] * len(clean)
    mean = total / len(clean)
    return [0.999 * s / mean + 0.001 for s in clean]


def select(
    sentences: Sequence[Sentence], scores: Sequence[float], max_len: int
) -> tuple[ScoredSentence, ...]:
    """The best-scored sentences that fit in ``max_len`` characters, in document order.

    Sentences are taken best first (ties: earlier first) while they fit; a sentence that does
    not fit is skipped. If not even the best one fits, it is cut at a space to fit.
    """
    return select_texts([s.text for s in sentences], scores, max_len)


def select_texts(
    texts: Sequence[str], scores: Sequence[float], max_len: int
) -> tuple[ScoredSentence, ...]:
    """:func:`select` over sentence texts."""
    if not texts:
        return ()
    if any(map(math.isnan, scores)):
        order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))
    else:  # the same order: sorting is stable, also in reverse
        order = sorted(range(len(texts)), key=scores.__getitem__, reverse=True)
    sizes = list(map(len, texts))
    chosen: list[int] = []
    used = -1  # no space before the first sentence
    for i in order:
        size = sizes[i] + 1
        if used + size <= max_len:
            chosen.append(i)
            used += size
            if used >= max_len - 1:
                break
    if not chosen:
        best = order[0]
        text = _cut(texts[best], max_len)[0][:max_len]
        return (ScoredSentence(text, 1.0),)
    chosen.sort()
    weights = normalize_weights([scores[i] for i in chosen])
    return tuple(ScoredSentence(texts[i], w) for i, w in zip(chosen, weights, strict=True))


def content_words(text: str, lang: str) -> list[str]:
    """Lower-cased words of a sentence without stop words (the summarizers' vocabulary);
    character n-grams for scripts written without spaces."""
    drop = stop_words(lang)
    words = tokenize(text) if has_unspaced(text) else simple_words(text)
    return [w for w in words if w not in drop and (len(w) > 1 or not w.isascii())]
