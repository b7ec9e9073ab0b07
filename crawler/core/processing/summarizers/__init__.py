"""Summarizers: pick a page's description from its text blocks (Page Options "Summarizer").

Layer: ``crawler.core.processing.summarizers``; used by the page processors. :func:`get_summarizer`
returns the summarizer for a config name: ``basic``, ``centroid``, ``centroid_weighted`` or
``graph`` (each module states its algorithm).
"""

from __future__ import annotations

from crawler.core.processing.errors import ConfigError
from crawler.core.processing.summarizers.base import (
    Sentence,
    SplitBlocks,
    Summarizer,
    TextBlock,
    normalize_weights,
    select,
    select_texts,
    sentence_parts,
    split_sentences,
)
from crawler.core.processing.summarizers.basic import BasicSummarizer
from crawler.core.processing.summarizers.body import indexed_body
from crawler.core.processing.summarizers.centroid import (
    CentroidSummarizer,
    CentroidWeightedSummarizer,
)
from crawler.core.processing.summarizers.graph import GraphSummarizer

_SUMMARIZERS: dict[str, type] = {
    "basic": BasicSummarizer,
    "centroid": CentroidSummarizer,
    "centroid_weighted": CentroidWeightedSummarizer,
    "graph": GraphSummarizer,
}


def get_summarizer(name: str) -> Summarizer:
    """A summarizer by config name; :class:`ConfigError` for an unknown one."""
    try:
        return _SUMMARIZERS[str(name)]()  # type: ignore[no-any-return]
    except KeyError:
        raise ConfigError(f"unknown summarizer {name!r}; one of {sorted(_SUMMARIZERS)}") from None


__all__ = [
    "BasicSummarizer",
    "CentroidSummarizer",
    "CentroidWeightedSummarizer",
    "GraphSummarizer",
    "Sentence",
    "SplitBlocks",
    "Summarizer",
    "TextBlock",
    "get_summarizer",
    "indexed_body",
    "normalize_weights",
    "select",
    "select_texts",
    "sentence_parts",
    "split_sentences",
]
