"""Blocks cut into sentences once give the same sentences as cutting them on every call."""

from __future__ import annotations

from crawler.core.processing.summarizers import SplitBlocks, TextBlock, sentence_parts
from crawler.core.processing.summarizers.base import MAX_SENTENCE_LEN

BLOCKS = [
    TextBlock("First sentence. Second one!  Third?", "p", 0),
    TextBlock("  ", "p", 40),
    TextBlock("A heading", "h2", 41),
    TextBlock("word " * (MAX_SENTENCE_LEN // 2), "li", 60),
    TextBlock("中文句子。第二句！", "p", 2000),
    TextBlock("meta one .. meta two; and three", "meta", 0),
]


def test_same_sentences_with_and_without_cache() -> None:
    split = SplitBlocks(BLOCKS)
    for limit in (None, 1, 3, 5, 2000):
        assert sentence_parts(split, limit) == sentence_parts(BLOCKS, limit)
    texts, _, _ = sentence_parts(split, None)
    texts.append("changed")  # callers get their own lists
    assert sentence_parts(split, None) == sentence_parts(BLOCKS, None)
