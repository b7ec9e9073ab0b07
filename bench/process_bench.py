"""Pages per second per core of the HTML processor, for each summarizer.

Reads the HTML pages of the local web's default tier straight from disk (the Debian doc
packages that ../shared/localweb/sites.py lists; no web server needed), takes an evenly spaced
sample, and times ``PageProcessor.process`` (decode, parse, extract, summarize, links, terms,
meta words) plus ``to_index_documents`` in this single process, so the rate is per core.
Each summarizer is timed over several runs; the median is printed. Then the basic summarizer
again with what a crawl adds by default (the built-in scrapers, ``builtin_scrapers``) and with
the shipped indexing plugin (``api_plugin``: ``crawler.core.plugins.api_names``), so their cost
per page shows.

The classifier step (the seed's "run classifiers on the summary", ``crawler.core.process``
step 9) is timed on its own: ``PageClassifiers.classify`` on each processed page's title and
summary, with N classifiers at once (logistic regressions trained on the generated pages of
``bench/topic_pages.py``; the cost does not depend on what they learned), in milliseconds per
page (median of the runs).

Usage: ``.venv/bin/python bench/process_bench.py [--pages N] [--runs R] [--classifiers 1,3,10]``
Prints ``name: value unit`` lines and one ``target:`` line.
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import sys
import time

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
from crawler.core.builtin_scrapers import BUILTIN_SCRAPERS  # noqa: E402
from crawler.core.config import PageProcessingConfig  # noqa: E402
from crawler.core.indexing import to_index_documents  # noqa: E402
from crawler.core.page import FetchedPage  # noqa: E402
from crawler.core.process import PageProcessor  # noqa: E402
from indexer.core.text import TextAnalyzer  # noqa: E402

SHARED = os.environ.get("SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))
TARGET_BASIC = 100.0


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


API_PLUGIN = "crawler.core.plugins.api_names.ApiNamesPlugin"


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
    met = "met" if results["basic"] >= TARGET_BASIC else "NOT met"
    print(f"target: basic summarizer throughput {results['basic']:.1f} pages/s/core "
          f"(goal >= {TARGET_BASIC:.0f}) {met}")


if __name__ == "__main__":
    main()
