"""Summarizers: pick a page's description from its text blocks (Page Options "Summarizer").

Layer: ``crawler.core.summarizers``; used by the page processors. :func:`get_summarizer`
returns the summarizer for a config name: ``basic``, ``centroid``, ``centroid_weighted`` or
``graph`` (each module states its algorithm).
"""

from __future__ import annotations

from ..errors import ConfigError
from .base import (
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
from .basic import BasicSummarizer
from .body import indexed_body
from .centroid import CentroidSummarizer, CentroidWeightedSummarizer
from .graph import GraphSummarizer

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
