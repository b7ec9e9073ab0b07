"""Pages per second per core of the HTML processor, for each summarizer.

Reads the HTML pages of the local web's default tier straight from disk (the Debian doc
packages that ../shared/localweb/sites.py lists; no web server needed), takes an evenly spaced
sample, and times ``PageProcessor.process`` (decode, parse, extract, summarize, links, terms,
meta words) plus ``to_index_documents`` in this single process, so the rate is per core.
Each summarizer is timed over several runs; the median is printed. Then the basic summarizer
again with what a crawl adds by default (the built-in scrapers, ``builtin_scrapers``) and with
the shipped indexing plugin (``api_plugin``: ``crawler.core.processing.plugins.api_names``), so
their cost per page shows.

The classifier step (the seed's "run classifiers on the summary",
``crawler.core.processing.process`` step 9) is timed on its own: ``PageClassifiers.classify`` on
each processed page's title and summary, with N classifiers at once (logistic regressions trained on
the generated pages of ``bench/topic_pages.py``; the cost does not depend on what they learned), in
milliseconds per page (median of the runs).

The defaults (``api_plugin``: the built-in scrapers and the shipped indexing plugin, what a
crawl runs with) are then timed stage by stage: CPU milliseconds per page (``time.process_time``)
of parsing (lexbor's tree, or lxml's for the pages a scraper may match), the head and hash
text, scrapers (their pre-test on lexbor's tree included), boilerplate (furniture), text blocks
and summary,
language, links and link records, terms, meta words, plugins and index documents (the page's
and its link documents), each with its share of the whole; "other" is what no stage covers.
The stages are the pipeline's own functions, wrapped by this bench for one extra pass
(:func:`stage_times`), so production code carries no timing.

Usage: ``.venv/bin/python bench/process_bench.py [--pages N] [--runs R] [--classifiers 1,3,10]``
Prints ``name: value unit`` lines and one ``target:`` line: the rate at the defaults against
``TARGET_DEFAULTS`` (issue #31).
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from bench.topic_pages import topic_pages  # noqa: E402
from classifiers.core.apply import (  # noqa: E402
    ClassifierRef,
    PageClassifiers,
    TrainedClassifier,
)
from classifiers.core.features import page_text  # noqa: E402
from classifiers.core.training import train  # noqa: E402
from crawler.core.processing.builtin_scrapers import BUILTIN_SCRAPERS  # noqa: E402
from crawler.core.processing.config import PageProcessingConfig  # noqa: E402
from crawler.core.processing.indexing import to_index_documents  # noqa: E402
from crawler.core.processing.page import FetchedPage  # noqa: E402
from crawler.core.processing.process import PageProcessor  # noqa: E402
from indexer.core.text import TextAnalyzer  # noqa: E402

SHARED = os.environ.get("SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))
TARGET_DEFAULTS = 250.0  # pages/s/core at the crawl's defaults (issue #31)
DEFAULTS = "api_plugin"


def load_pages(limit: int) -> list[tuple[str, bytes]]:
    sys.path.insert(0, os.path.join(SHARED, "localweb"))
    import sites  # the local web's table of sites

    entries = []
    for site in sites.sites("default"):
        entries.extend(sites.walk_pages(site))
    if not entries:
        raise SystemExit(
            "no local-web pages on disk: install the default tier's packages "
            "(sh ../shared/localweb/setup.sh as root)"
        )
    entries.sort()
    step = max(1, len(entries) // limit)
    pages = []
    for url, path, _size in entries[::step][:limit]:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                body = handle.read()
        else:
            with open(path, "rb") as handle:
                body = handle.read()
        pages.append((url, body))
    return pages


API_PLUGIN = "crawler.core.processing.plugins.api_names.ApiNamesPlugin"


def config_of(name: str) -> PageProcessingConfig:
    """A summarizer's config, or ``builtin_scrapers`` (the basic summarizer with the scrapers
    every crawl uses) or ``api_plugin`` (the same with the shipped indexing plugin)."""
    if name == "builtin_scrapers":
        return PageProcessingConfig(scrapers=BUILTIN_SCRAPERS, indexing_plugins=())
    if name == "api_plugin":
        return PageProcessingConfig(scrapers=BUILTIN_SCRAPERS, indexing_plugins=(API_PLUGIN,))
    return PageProcessingConfig(summarizer=name, indexing_plugins=())


def run(pages: list[tuple[str, bytes]], summarizer: str) -> float:
    processor = PageProcessor(config_of(summarizer), TextAnalyzer())
    fetched = [
        FetchedPage(url, body, 200, {"Content-Type": "text/html"}, fetched_at=1.7e9)
        for url, body in pages
    ]
    start = time.process_time()
    for page in fetched:
        to_index_documents(processor.process(page), processor.analyzer)
    elapsed = time.process_time() - start
    return len(fetched) / elapsed


# (stage, where, attribute): the pipeline functions each stage's time is taken over. Pages are
# parsed by lexbor (lexbor_tree), those a scraper may match by lxml (lxml_tree): both trees'
# steps are listed.
_HTML = "crawler.core.processing.processors.html"
_LEXBOR = "crawler.core.processing.processors.lexbor_tree"
_LXML = "crawler.core.processing.processors.lxml_tree"
STAGES: tuple[tuple[str, str, str], ...] = (
    ("parse (decode, tree)", _HTML, "decode"),
    ("parse (decode, tree)", _HTML, "clean"),
    ("parse (decode, tree)", _HTML, "deep_or_large"),
    ("parse (decode, tree)", f"{_LEXBOR}.LexborTree", "parse"),
    ("parse (decode, tree)", f"{_LXML}.LxmlTree", "parse"),
    ("head, hash text", _HTML, "read_head"),
    ("head, hash text", _HTML, "hash_text"),
    ("head, hash text", f"{_LEXBOR}.LexborTree", "title"),
    ("head, hash text", f"{_LEXBOR}.LexborTree", "strip"),
    ("head, hash text", f"{_LEXBOR}.LexborTree", "text"),
    ("head, hash text", f"{_LEXBOR}.LexborTree", "first_heading"),
    ("head, hash text", f"{_LXML}.LxmlTree", "title"),
    ("head, hash text", f"{_LXML}.LxmlTree", "strip"),
    ("head, hash text", f"{_LXML}.LxmlTree", "text"),
    ("head, hash text", f"{_LXML}.LxmlTree", "first_heading"),
    ("links, link records", _HTML, "_collect_links"),
    ("links, link records", f"{_LEXBOR}.LexborTree", "link_records"),
    ("links, link records", f"{_LXML}.LxmlTree", "link_records"),
    ("links, link records", "crawler.core.processing.links.LinkCollector", "links"),
    ("links, link records", "crawler.core.processing.process", "_kept_links"),
    ("scrapers", "crawler.core.processing.scrapers.ScraperSet", "may_match"),
    ("scrapers", "crawler.core.processing.scrapers.ScraperSet", "choose"),
    ("scrapers", "crawler.core.processing.scrapers.ScraperSet", "apply"),
    ("boilerplate (furniture)", _LEXBOR, "drop_furniture"),
    ("boilerplate (furniture)", _LXML, "drop_furniture"),
    ("text blocks, summary", _LEXBOR, "block_stream"),
    ("text blocks, summary", _LEXBOR, "blocks_of_stream"),
    ("text blocks, summary", _LXML, "text_blocks"),
    ("text blocks, summary", _HTML, "summarize_and_index"),
    ("language", _HTML, "declared_language"),
    ("language", _HTML, "guess_language"),
    ("terms (tokenise, stem)", "crawler.core.processing.process.PageProcessor", "_terms"),
    ("meta words", "crawler.core.processing.process", "page_meta_words"),
    ("plugins", "crawler.core.processing.process", "apply_plugins"),
)


@contextmanager
def _timed_stages(spent: dict[str, float]) -> Iterator[None]:
    """Wrap each function of STAGES so that its CPU time adds to ``spent[stage]``; restored
    on exit. A wrapped call inside another wrapped one counts for the outer stage only."""
    import importlib

    depth = [0]
    saved: list[tuple[Any, str, Any]] = []

    def wrap(stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return function(*args, **kwargs)
            depth[0] += 1
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[stage] = spent.get(stage, 0.0) + time.process_time() - start
                depth[0] -= 1
        return timed

    try:
        for stage, where, name in STAGES:
            try:
                owner: Any = importlib.import_module(where)
            except ModuleNotFoundError:  # a class: module.Class
                module, _, cls = where.rpartition(".")
                owner = getattr(importlib.import_module(module), cls)
            original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            saved.append((owner, name, original))
            if isinstance(original, staticmethod):
                setattr(owner, name, staticmethod(wrap(stage, original.__func__)))
            elif isinstance(original, classmethod):
                setattr(owner, name, classmethod(wrap(stage, original.__func__)))
            else:
                setattr(owner, name, wrap(stage, original))
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def stage_times(pages: list[tuple[str, bytes]], config: str, runs: int
                ) -> tuple[dict[str, float], float]:
    """(stage -> CPU ms per page, total CPU ms per page) of ``config``, medians over
    ``runs`` passes; ``index documents`` is ``to_index_documents`` (the page's and its link
    documents), ``other`` the rest of ``process``."""
    per_run: list[dict[str, float]] = []
    totals = []
    for _ in range(runs):
        processor = PageProcessor(config_of(config), TextAnalyzer())
        fetched = [FetchedPage(url, body, 200, {"Content-Type": "text/html"}, fetched_at=1.7e9)
                   for url, body in pages]
        spent: dict[str, float] = {}
        with _timed_stages(spent):
            start = time.process_time()
            for page in fetched:
                processed = processor.process(page)
                mark = time.process_time()
                to_index_documents(processed, processor.analyzer)
                spent["index documents"] = (spent.get("index documents", 0.0)
                                            + time.process_time() - mark)
            total = time.process_time() - start
        spent["other"] = total - sum(spent.values())
        per_run.append(spent)
        totals.append(total)
    stages = {stage: statistics.median(run.get(stage, 0.0) for run in per_run) * 1000.0
              / len(pages) for stage in dict.fromkeys([*(s for s, _, _ in STAGES),
                                                       "index documents", "other"])}
    return stages, statistics.median(totals) * 1000.0 / len(pages)


def classifier_ms(pages: list[tuple[str, bytes]], count: int, runs: int) -> float:
    """Milliseconds per page of ``count`` classifiers on the processed pages' summaries."""
    trained = []
    for i in range(count):
        sample = topic_pages(0, 60, seed=100 + i)
        model = train([page_text(p.title, p.description) for p in sample],
                      [p.topic == "sports" for p in sample])
        trained.append(TrainedClassifier(ClassifierRef(i + 1, f"bench{i}", i, 1), model))
    runner = PageClassifiers(trained)
    processor = PageProcessor(PageProcessingConfig(), TextAnalyzer())
    processed = [processor.process(FetchedPage(url, body, 200, {"Content-Type": "text/html"},
                                               fetched_at=1.7e9)) for url, body in pages]
    times = []
    for _ in range(runs):
        start = time.process_time()
        for page in processed:
            runner.classify(page.title, page.description)
        times.append((time.process_time() - start) / len(processed) * 1000.0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400, help="sample size (default 400)")
    parser.add_argument("--runs", type=int, default=3, help="runs per summarizer (default 3)")
    parser.add_argument("--classifiers", default="1,3,10",
                        help="numbers of classifiers to time the classifier step with")
    args = parser.parse_args()
    pages = load_pages(args.pages)
    print(f"pages: {len(pages)} pages")
    print(f"bytes: {sum(len(b) for _, b in pages) / len(pages) / 1024:.1f} KiB/page (mean)")
    results = {}
    for summarizer in ("basic", "centroid", "centroid_weighted", "graph", "builtin_scrapers",
                       "api_plugin"):
        rates = [run(pages, summarizer) for _ in range(args.runs)]
        results[summarizer] = statistics.median(rates)
        print(f"{summarizer}: {results[summarizer]:.1f} pages/s/core")
    for count in (int(c) for c in args.classifiers.split(",") if c.strip()):
        print(f"classifier step, {count} classifiers: "
              f"{classifier_ms(pages, count, args.runs):.3f} ms/page")
    stages, total = stage_times(pages, DEFAULTS, args.runs)
    print(f"stages at the defaults ({DEFAULTS}), CPU ms per page (share):")
    for stage, ms in stages.items():
        print(f"stage {stage}: {ms:.3f} ms/page ({ms / total:.1%})")
    print(f"stage total (timed pass): {total:.3f} ms/page")
    rate = results[DEFAULTS]
    met = "met" if rate >= TARGET_DEFAULTS else "NOT met"
    print(f"target: page processing at the defaults {rate:.1f} pages/s/core "
          f"(goal >= {TARGET_DEFAULTS:.0f}) {met}")


if __name__ == "__main__":
    main()
