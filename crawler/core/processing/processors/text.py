"""The plain-text processor (text/plain, CSV, source code and other text types).

Layer: ``crawler.core.processing.processors``. Paragraphs (split on blank lines) are the blocks; the
title is the first non-empty line when it is short (at most 100 characters); http(s) URLs written in
the text become links.
"""

from __future__ import annotations

import re
from dataclasses import replace

from crawler.core.processing.config import MAX_TITLE_LEN
from crawler.core.processing.encoding import decode
from crawler.core.processing.links import LinkCollector
from crawler.core.processing.page import Extraction, FetchedPage
from crawler.core.processing.processors.base import (
    ProcessorContext,
    plain_language,
    summarize_and_index,
)
from crawler.core.processing.summarizers import TextBlock

_PARAGRAPHS = re.compile(r"\n\s*\n")
_URLS = re.compile(r"https?://[^\s<>\"'`)\]]+", re.IGNORECASE)
_NON_WORD = re.compile(r"\W+")


def text_extraction(url: str, text: str, ctx: ProcessorContext, declared: tuple[str, ...] = ()
                    ) -> Extraction:
    """Extraction of already-decoded plain text (shared with the PDF processor)."""
    blocks = []
    offset = 0
    for paragraph in _PARAGRAPHS.split(text):
        value = " ".join(paragraph.split())
        if value:
            blocks.append(TextBlock(value, "p", offset))
        offset += len(paragraph) + 2
    title = ""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            title = line if len(line) <= MAX_TITLE_LEN else ""
            break
    lang, source = plain_language(text, url, ctx, declared)
    collector = LinkCollector(url, None, ctx.config.max_links_to_extract)
    for match in _URLS.finditer(text):
        if collector.full:
            break
        collector.add(match.group().rstrip(".,;:!?"), "", "text")
    summary, body = summarize_and_index(blocks, lang, ctx)
    return Extraction(
        title=title,
        sentences=summary,
        body=body,
        links=collector.links(lang),
        lang=lang,
        lang_source=source,
        hash_text=_NON_WORD.sub("", text),
    )


class TextProcessor:
    """Stateless."""

    def extract(self, page: FetchedPage, body: bytes, ctx: ProcessorContext) -> Extraction:
        text, encoding = decode(body, page.header("content-type"))
        extraction = text_extraction(page.url, text, ctx, (page.header("content-language"),))
        return replace(extraction, encoding=encoding)
