"""Pages per second per core of the HTML processor, for each summarizer.

Reads the HTML pages of the local web's default tier straight from disk (the Debian doc
packages that ../shared/localweb/sites.py lists; no web server needed), takes an evenly spaced
sample, and times ``PageProcessor.process`` (decode, parse, extract, summarize, links, terms,
meta words) plus ``to_index_documents`` in this single process, so the rate is per core.
Each summarizer is timed over several runs; the median is printed. Then the basic summarizer
again with what a crawl adds by default (the built-in scrapers, ``builtin_scrapers``) and with
the shipped indexing plugin (``api_plugin``: ``crawler.core.plugins.api_names``), so their cost
per page shows.

Usage: ``.venv/bin/python bench/process_bench.py [--pages N] [--runs R]``
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400, help="sample size (default 400)")
    parser.add_argument("--runs", type=int, default=3, help="runs per summarizer (default 3)")
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
    met = "met" if results["basic"] >= TARGET_BASIC else "NOT met"
    print(f"target: basic summarizer throughput {results['basic']:.1f} pages/s/core "
          f"(goal >= {TARGET_BASIC:.0f}) {met}")


if __name__ == "__main__":
    main()
