"""The HTML processor's two trees give the same index documents: lexbor's (every page's) and
lxml's (the pages a scraper may match), over the local web.

Processes each HTML page of the local web's default tier (the pages ``process_bench.py``
reads; ``--pages N`` for an evenly spaced sample, all of them by default) twice with the crawl's
defaults (the built-in scrapers and the shipped indexing plugin): as the HTML processor
does (lexbor, lxml where a scraper may match) and with every page parsed by lxml, the
reference the processor's results were made on. Compares the index documents of the two (the
page's and its link documents: url, type, hash, summary with description, body and links,
terms with positions in order, length, meta words, region weights) and prints the number of
pages that differ, with the fields that do, and ``equal: N of M pages``. Exits 1 when a page
differs.

Usage: ``.venv/bin/python bench/parse_equality.py [--pages N] [--show K]``
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench.process_bench import config_of, load_pages  # noqa: E402
from crawler.core.processing.indexing import to_index_documents  # noqa: E402
from crawler.core.processing.page import FetchedPage  # noqa: E402
from crawler.core.processing.process import PageProcessor  # noqa: E402
from crawler.core.processing.processors import html  # noqa: E402
from crawler.core.processing.processors.lxml_tree import LxmlTree  # noqa: E402
from indexer.core.text import TextAnalyzer  # noqa: E402


@contextmanager
def lxml_only() -> Iterator[None]:
    """Every page parsed by lxml while inside (the HTML processor's reference tree)."""
    original = html.parse_tree
    html.parse_tree = lambda data, fast, scrapers, text: LxmlTree.parse(data, fast)
    try:
        yield
    finally:
        html.parse_tree = original


def documents(pages: list[tuple[str, bytes]], config: str = "api_plugin"
              ) -> dict[str, list[dict[str, Any]]]:
    """url -> the page's index documents as plain values."""
    processor = PageProcessor(config_of(config), TextAnalyzer())
    out = {}
    for url, body in pages:
        page = processor.process(FetchedPage(url, body, 200, {"Content-Type": "text/html"},
                                             fetched_at=1.7e9))
        out[url] = [plain(doc) for doc in to_index_documents(page, processor.analyzer)]
    return out


def plain(doc: Any) -> dict[str, Any]:
    """An index document's fields as comparable values (terms: their order too)."""
    return {
        "url": doc.url, "host": doc.host, "doc_type": int(doc.doc_type),
        "text_hash": doc.text_hash, "summary": dict(doc.summary),
        "terms": [(t, tuple(p)) for t, p in doc.terms.items()], "length": doc.length,
        "meta_words": doc.meta_words, "region_weights": doc.region_weights,
        "cached_page": doc.cached_page,
    }


def differences(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[str]:
    """The fields in which two pages' documents differ."""
    if len(a) != len(b):
        return ["number of documents"]
    fields: list[str] = []
    for x, y in zip(a, b, strict=True):
        for key in x:
            if x[key] != y[key]:
                if key == "summary":
                    fields += [f"summary.{k}" for k in x[key] if x[key][k] != y[key].get(k)]
                else:
                    fields.append(key)
    return sorted(set(fields))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=0, help="sample size (default: all)")
    parser.add_argument("--show", type=int, default=20, help="differing urls to print")
    args = parser.parse_args()
    pages = load_pages(args.pages or 1_000_000)
    new = documents(pages)
    with lxml_only():
        reference = documents(pages)
    fields: collections.Counter[str] = collections.Counter()
    differing = []
    for url, _ in pages:
        found = differences(reference[url], new[url])
        if found:
            differing.append((url, found))
            fields.update(found)
    print(f"pages: {len(pages)}")
    print(f"differing pages: {len(differing)}")
    for field, count in fields.most_common():
        print(f"field {field}: {count} pages")
    for url, found in differing[:args.show]:
        print(f"differs: {url} ({', '.join(found)})")
    print(f"equal: {len(pages) - len(differing)} of {len(pages)} pages")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
