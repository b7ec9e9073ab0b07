"""Whole-page indexing: every sentence of a page, weighted by where it stands.

Layer: ``crawler.core.processing.summarizers``. The seed ("Yioop Search Engine Ranking Mechanisms",
the description) indexes the title and the summarizer's chosen sentences only, weighting each
sentence's term positions by its score; a word past the summary can never be found. With
whole-page indexing (Page Options' default; the "summary only" profile keeps the seed's
behaviour) every sentence of the page's text blocks is indexed, and the summary still sets the
weights:

* a sentence the summarizer chose keeps its normalised score (mean about 1 over the summary);
* a heading (``h1`` to ``h6``) or a definition term (``dt``: an API signature, a setting's
  name) it did not choose weighs ``heading_weight``;
* every other sentence weighs ``body_weight`` (below 1: the rest of the page counts, but less
  than the sentences that summarise it).

Consecutive sentences of equal weight are joined into one piece, so a page costs one region per
summary sentence plus a few, not one per sentence (the doc_map keeps every region of every
document). The displayed description stays the summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from crawler.core.processing.page import ScoredSentence
from crawler.core.processing.summarizers.base import TextBlock, sentence_parts

HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "dt"})


def indexed_body(blocks: Sequence[TextBlock], summary: Sequence[ScoredSentence],
                 body_weight: float, heading_weight: float) -> tuple[ScoredSentence, ...]:
    """All sentences of ``blocks`` in document order as weighted pieces (see the module).

    ``summary`` must be in document order (as summarizers return it); a summary sentence is
    recognised by its text, in order. Summary text that is not a sentence of the blocks (a
    summarizer's fallback cut, a page rule's description) is not added: its words are in the
    blocks' text anyway."""
    texts, tags, _ = sentence_parts(blocks, limit=None)
    chosen = iter(summary)
    wanted = next(chosen, None)
    pieces: list[list[str]] = []
    weights: list[float] = []
    for text, tag in zip(texts, tags, strict=True):
        if wanted is not None and text == wanted.text:
            weight = wanted.weight
            wanted = next(chosen, None)
        elif tag in HEADING_TAGS:
            weight = heading_weight
        else:
            weight = body_weight
        if weights and weights[-1] == weight:
            pieces[-1].append(text)
        else:
            pieces.append([text])
            weights.append(weight)
    return tuple(ScoredSentence(" ".join(piece), weight)
                 for piece, weight in zip(pieces, weights, strict=True))
