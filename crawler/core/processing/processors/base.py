"""What page processors share: the processor protocol and the per-crawl context.

Layer: ``crawler.core.processing.processors``. A processor reads one MIME type family and returns an
:class:`~crawler.core.processing.page.Extraction`. Contract: ``extract`` never raises on page
content (bad input gives an extraction with ``errors``); it reads at most the bytes it is given (the
caller has already cut the body to the byte range).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.page import Extraction, FetchedPage, ScoredSentence
from crawler.core.processing.scrapers import ScraperSet
from crawler.core.processing.summarizers import SplitBlocks, Summarizer, TextBlock, indexed_body
from indexer.core.text import guess_language


@dataclass(frozen=True, slots=True)
class ProcessorContext:
    """Per-crawl state the processors share: config, summarizer and compiled scrapers
    (all immutable, so one context serves every thread)."""

    config: PageProcessingConfig
    summarizer: Summarizer
    scrapers: ScraperSet


class PageTypeProcessor(Protocol):
    """Extracts title, summary, links... from one kind of page."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction: ...


def summarize_text(
    blocks: list[TextBlock], lang: str, ctx: ProcessorContext
) -> tuple[ScoredSentence, ...]:
    """The configured summarizer over ``blocks``; when it finds nothing, the blocks' text
    collapsed and cut to the length limit (Yioop's fallback)."""
    limit = ctx.config.max_description_len
    sentences = ctx.summarizer.summarize(blocks, lang, limit)
    if sentences:
        return sentences
    text = " ".join(" ".join(b.text for b in blocks).split())[:limit]
    return (ScoredSentence(text, 1.0),) if text else ()


def summarize_and_index(
    blocks: list[TextBlock], lang: str, ctx: ProcessorContext
) -> tuple[tuple[ScoredSentence, ...], tuple[ScoredSentence, ...]]:
    """(summary, body): :func:`summarize_text`, and with whole-page indexing on every sentence
    of ``blocks`` weighted by :func:`~crawler.core.processing.summarizers.indexed_body` (else
    ``()``: the
    summary is what is indexed)."""
    config = ctx.config
    if not config.index_whole_page:
        return summarize_text(blocks, lang, ctx), ()
    split = SplitBlocks(blocks)  # the summarizer and the body read the same sentences
    summary = summarize_text(split, lang, ctx)  # type: ignore[arg-type]
    return summary, indexed_body(split, summary, config.body_weight, config.heading_weight)


def plain_language(text: str, url: str, ctx: ProcessorContext, declared: tuple[str, ...] = ()
                   ) -> tuple[str, str]:
    """(lang, source) for text with no markup: declared tags, URL, then the text test."""
    guess = guess_language(
        declared=declared, url=url, text=text[: ctx.config.language_sample_chars]
    )
    return guess.lang, guess.source
