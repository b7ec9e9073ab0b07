"""The basic summarizer (Yioop's "Basic", code ``dk``): position and tag weighted sentences.

Layer: ``crawler.core.processing.summarizers``. Meta descriptions (tag ``meta``) form a first block
whose sentences score ``3 * ln(len + 1)``. Every other sentence scores
``tag_weight * ln(len + 1) / sqrt(1 + offset)`` where ``offset`` is the sentence's character
position in the page and the tag weights are h1 = h2 = 3, h3 = 2, pre = li = 0.5, others 1: early,
long, heading sentences win. The best sentences that fit are kept in document order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from crawler.core.processing.page import ScoredSentence
from crawler.core.processing.summarizers.base import TextBlock, select_texts, sentence_parts

TAG_WEIGHTS = {"h1": 3.0, "h2": 3.0, "h3": 2.0, "pre": 0.5, "li": 0.5, "meta": 3.0}


class BasicSummarizer:
    """Stateless; safe to share."""

    name = "basic"

    def summarize(
        self, blocks: Sequence[TextBlock], lang: str, max_len: int
    ) -> tuple[ScoredSentence, ...]:
        texts, tags, offsets = sentence_parts(blocks)
        log, sqrt, weights = math.log, math.sqrt, TAG_WEIGHTS
        scores = [
            weights.get(tag, 1.0) * log(len(text) + 1) if tag == "meta"
            else weights.get(tag, 1.0) * log(len(text) + 1) / sqrt(1 + offset)
            for text, tag, offset in zip(texts, tags, offsets, strict=True)
        ]
        return select_texts(texts, scores, max_len)
