"""Page Options "Test": run one page through each step of processing, as a crawl would, and
report what every step produced and how long it took.

Layer: ``crawler.core``. The admin's test page (``crawler.admin``) fetches the url through the
crawler's own fetch code (egress rules included) or takes an upload or pasted text, then calls
:func:`run_page_test`. Each step is the real code, run with the options switched on one at a time:

1. byte range: the bytes a crawl keeps;
2. page processor: the MIME type's processor with no scraper, page rules or plugins;
3. scrapers: the same with the profile's scrapers (the built-in ones included);
4. page rules: the same with the page rules;
5. indexing plugins: the full pipeline (what the index receives);
then the terms with positions and region weights, the meta words, and the links kept and
dropped by pruning.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from crawler.core.processing.config import PageProcessingConfig
from crawler.core.processing.page import FetchedPage, ProcessedPage
from crawler.core.processing.process import PageProcessor
from crawler.core.processing.processors import processor_for


@dataclass(frozen=True, slots=True)
class StepResult:
    name: str
    seconds: float
    title: str = ""
    description: str = ""
    notes: tuple[str, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class PageTestReport:
    url: str
    mime_type: str
    received_bytes: int
    kept_bytes: int
    steps: tuple[StepResult, ...]
    terms: tuple[tuple[str, tuple[int, ...], float], ...]  # term, positions, weight of first
    region_weights: tuple[tuple[int, float], ...]
    meta_words: tuple[str, ...]
    links_kept: tuple[tuple[str, str, str], ...]           # url, text, kind
    links_dropped: tuple[tuple[str, str, str], ...]
    robot_metas: tuple[str, ...]
    lang: str
    errors: tuple[str, ...]
    total_seconds: float

    @property
    def truncated(self) -> bool:
        return self.kept_bytes < self.received_bytes


def _step(name: str, seconds: float, page: ProcessedPage, notes: tuple[str, ...] = ()
          ) -> StepResult:
    fields = tuple((str(k), str(v)[:500]) for k, v in page.fields.items())
    return StepResult(name, seconds, page.title, page.description, notes, fields)


def _weight_at(position: int, regions: tuple[tuple[int, float], ...]) -> float:
    for last, weight in regions:
        if position <= last:
            return weight
    return regions[-1][1] if regions else 1.0


def run_page_test(page: FetchedPage, config: PageProcessingConfig) -> PageTestReport:
    """Process ``page`` step by step under ``config`` (see the module docstring)."""
    started = time.perf_counter()
    kept = min(len(page.body), config.byte_range)

    def timed(processor: PageProcessor) -> tuple[ProcessedPage, float]:
        t0 = time.perf_counter()
        result = processor.process(page)
        return result, time.perf_counter() - t0

    no_plugins = replace(config, indexing_plugins=())
    plain, t_plain = timed(PageProcessor(replace(no_plugins, scrapers=(), page_rules="")))
    scraped, t_scraped = timed(PageProcessor(replace(no_plugins, page_rules="")))
    ruled, t_ruled = timed(PageProcessor(no_plugins))
    full, t_full = timed(PageProcessor(config))
    steps = [
        StepResult("byte range", 0.0, notes=(
            f"page truncated from {len(page.body)} to {kept} bytes" if kept < len(page.body)
            else f"all {len(page.body)} bytes kept (limit {config.byte_range})",)),
        _step("page processor", t_plain, plain, (f"MIME type {plain.mime_type}",
                                                 f"language {plain.lang} ({plain.lang_source})")),
        _step("scrapers", t_scraped, scraped,
              (f"scraper {scraped.scraper} matched" if scraped.scraper
               else "no scraper matched",)),
        _step("page rules", t_ruled, ruled,
              ("page rules applied" if config.page_rules.strip() else "no page rules",)),
        _step("indexing plugins", t_full, full,
              (f"plugins run: {', '.join(config.indexing_plugins)}" if config.indexing_plugins
               else "no indexing plugins",
               f"{len(full.subdocuments)} sub-documents")),
    ]
    extracted: list[Any] = []
    handler = processor_for(full.mime_type)
    if handler is not None:
        body = page.body[: config.byte_range]
        extracted = list(handler.extract(page, body, PageProcessor(config).context).links)
    kept_urls = {link.url for link in full.links}
    dropped = tuple((link.url, link.text, link.kind) for link in extracted
                    if link.url not in kept_urls)
    terms = tuple(sorted(
        ((term, tuple(positions), _weight_at(positions[0], full.region_weights))
         for term, positions in full.terms.items() if positions),
        key=lambda item: item[1][0]))
    return PageTestReport(
        url=full.url, mime_type=full.mime_type, received_bytes=len(page.body), kept_bytes=kept,
        steps=tuple(steps), terms=terms, region_weights=full.region_weights,
        meta_words=full.meta_words,
        links_kept=tuple((link.url, link.text, link.kind) for link in full.links),
        links_dropped=dropped, robot_metas=tuple(sorted(full.robot_metas)), lang=full.lang,
        errors=full.errors, total_seconds=time.perf_counter() - started)
