"""Benchmark of the on-disk index (indexer.core): append, close, sizes, open, decode.

Run with no arguments: ``.venv/bin/python bench/index_bench.py``.

Documents come from the local web (``../shared/localweb``): every HTML page of the installed
default-tier sites, read from disk (no crawl) and processed by the engine's page processor
(``crawler.core.processing.process``) into the page document a crawl would index (link documents and
the cached copy of the page left out: neither depends on the profile),
twice: with Page Options' defaults (whole pages indexed: figures without a prefix, the targets)
and with the "Summary only" profile (``summary_only_`` figures), so the cost of whole-page
indexing is printed as ratios (``whole_page_cost_*``). Processing is done before timing: the
index is measured, not the processor. Other sources: ``--jsonl FILE`` (one
``{"url", "title", "text"}`` object a line, e.g. from ``peers/dump_docs.py``) or ``--html DIR``
(a folder of ``.html`` files), each page indexed as its title and first 2,000 characters.

Each run builds a fresh bundle in a temporary folder: ``append`` in batches of 400 (one
fetcher shipment each; one partition), then ``close`` = ``close_partition()`` + the dictionary updater's merge. Figures are
medians over ``--runs`` runs (default 3). Output: one ``name: value unit`` line per figure, tantivy's rate
on the same pages (title + indexed text, ``tantivy_docs_per_s`` and our rate over it,
``x_tantivy``; see :func:`tantivy_rate`), then one ``target: ...`` line per target (issue 3;
append+close: issue 31).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter  # noqa: E402
from indexer.core.dictionary.updater import DictionaryUpdater  # noqa: E402
from indexer.core.documents.document import IndexDocument  # noqa: E402
from indexer.core.ids import DocType, hash7  # noqa: E402

SHARED = ROOT.parent / "shared"
SUMMARY_CHARS = 2000
# a fetcher ships what it has every SEEN_URLS_BEFORE_UPDATE_SCHEDULER pages, "usually every four
# to five hundred urls" (seed 000): one append (one durable commit) per shipment
BATCH = 400
GOAL_DOCS_PER_S = 1700  # issue 31: append+close on whole pages


def processed_docs(limit: int | None, whole_page: bool,
                   texts: list[tuple[str, str, str]] | None = None) -> list[IndexDocument]:
    """Page documents of the default tier's pages as the engine's page processor makes them
    (Page Options' defaults; ``whole_page`` False: the "Summary only" profile), read from disk:
    what a crawl would index, minus the link documents. ``texts`` (optional) receives each
    indexed page's (url, title, indexed text), what tantivy is given (:func:`tantivy_rate`)."""
    from crawler.core.definition.crawl import CrawlTimeOptions
    from crawler.core.processing.config import PageProcessingConfig
    from crawler.core.processing.indexing import to_index_documents
    from crawler.core.processing.page import FetchedPage
    from crawler.core.processing.process import PageProcessor

    sys.path.insert(0, str(SHARED / "localweb"))
    import sites  # type: ignore[import-not-found]

    options = CrawlTimeOptions(index_whole_page=whole_page)
    processor = PageProcessor(PageProcessingConfig.from_options(options))
    docs: list[IndexDocument] = []
    for site in sites.sites("default"):
        for url, path, _ in sites.walk_pages(site):
            raw = Path(path).read_bytes()
            if path.endswith(".gz"):
                import gzip

                raw = gzip.decompress(raw)
            page = processor.process(FetchedPage(url, raw[:options.byte_range], 200,
                                                 {"Content-Type": "text/html"},
                                                 fetched_at=1_700_000_000.0))
            if page.indexable and page.length:  # the cached page is the same in both profiles
                docs.append(to_index_documents(replace(page, links=(), cached_page=None))[0])
                if texts is not None:
                    texts.append((page.url, page.title, page.body or page.description))
            if limit and len(docs) >= limit:
                return docs
    return docs


def jsonl_pages(path: str) -> Iterator[tuple[str, str, str]]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            d = json.loads(line)
            yield d["url"], d.get("title", ""), d.get("text", "")


def html_pages(folder: str) -> Iterator[tuple[str, str, str]]:
    import lxml.html

    for path in sorted(Path(folder).rglob("*.html")):
        doc = lxml.html.fromstring(path.read_bytes() or b"<html/>")
        title = " ".join(" ".join(doc.xpath("//title//text()")).split())
        text = " ".join(doc.text_content().split())
        yield f"file://{path}", title, text


def make_analyser() -> tuple[Callable[[str, str], tuple[dict[str, list[int]], list[int]]], str]:
    try:
        from indexer.core.text import TextAnalyzer

        analyser = TextAnalyzer()

        def positions(title: str, description: str) -> tuple[dict[str, list[int]], list[int]]:
            return analyser.positions([title, description], "en")

        return positions, "indexer.core.text"
    except ImportError:
        word = re.compile(r"\w+")

        def positions(title: str, description: str) -> tuple[dict[str, list[int]], list[int]]:
            terms: dict[str, list[int]] = {}
            ends = []
            pos = 0
            for piece in (title, description):
                for tok in word.findall(piece.lower()):
                    terms.setdefault(tok, []).append(pos)
                    pos += 1
                ends.append(pos)
            return terms, ends

        return positions, "regex"


def build_docs(pages: Iterator[tuple[str, str, str]], limit: int | None
               ) -> tuple[list[IndexDocument], str]:
    positions, analyser = make_analyser()
    docs = []
    seen = set()
    for url, title, text in pages:
        if url in seen:
            continue
        seen.add(url)
        description = text[:SUMMARY_CHARS]
        terms, ends = positions(title, description)
        length = ends[-1] if ends else 0
        if not length:
            continue
        host = url.split("/")[2] if "://" in url else "localhost"
        regions = tuple((end - 1, weight) for end, weight in zip(ends, (2.0, 1.0), strict=True)
                        if end > 0)
        docs.append(IndexDocument(
            url=url, host=host, doc_type=DocType.PAGE, text_hash=hash7(text),
            summary={"title": title, "description": description, "url": url, "lang": "en"},
            terms=terms, length=length, meta_words=(f"site:{host}",),
            region_weights=tuple(sorted(set(regions))), classifier_scores=()))
        if limit and len(docs) >= limit:
            break
    return docs, analyser


TANTIVY_SCRIPT = r"""
import json, statistics, sys, tempfile, time
import tantivy
docs = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
rates = []
for _ in range(int(sys.argv[2])):
    with tempfile.TemporaryDirectory(prefix="tantivy_bench_") as path:
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("url", stored=True, tokenizer_name="raw")
        sb.add_text_field("title")
        sb.add_text_field("body")
        index = tantivy.Index(sb.build(), path=path)
        t0 = time.perf_counter()
        writer = index.writer(heap_size=256 * 2**20, num_threads=1)
        for d in docs:
            writer.add_document(tantivy.Document(url=d["url"], title=d["title"],
                                                 body=d["text"]))
        writer.commit()
        writer.wait_merging_threads()
        rates.append(len(docs) / (time.perf_counter() - t0))
print(json.dumps({"docs_per_s": statistics.median(rates), "runs": rates}))
"""


def tantivy_rate(texts: list[tuple[str, str, str]], runs: int) -> float | None:
    """tantivy's append+commit rate (docs/s, median of ``runs``; single-threaded writer) on
    ``texts`` (url, title, text), run in the peers' venv (``PEERS_VENV``, default
    ``/tmp/yioopy-whoosh-venv``, with ``pip install tantivy``) in a subprocess, the documents
    passed as a JSONL temporary file; None when that venv or tantivy is missing."""
    import subprocess

    python = Path(os.environ.get("PEERS_VENV", "/tmp/yioopy-whoosh-venv")) / "bin" / "python"
    if not python.exists() or not texts:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as handle:
        for url, title, text in texts:
            handle.write(json.dumps({"url": url, "title": title, "text": text}) + "\n")
        handle.flush()
        done = subprocess.run([str(python), "-c", TANTIVY_SCRIPT, handle.name, str(runs)],
                              capture_output=True, text=True, check=False)
    if done.returncode:
        print(f"tantivy: not run ({done.stderr.strip().splitlines()[-1:]})")
        return None
    return float(json.loads(done.stdout)["docs_per_s"])


def dir_size(path: Path, pattern: str = "*") -> int:
    return sum(p.stat().st_size for p in path.rglob(pattern) if p.is_file())


def one_run(docs: list[IndexDocument], workdir: Path) -> dict[str, float]:
    path = workdir / "bundle"
    cfg = BundleConfig(max_partition_docs=max(len(docs) + 1, 50_000))
    writer = IndexBundleWriter(path, cfg)
    c0 = time.process_time()
    t0 = time.perf_counter()
    for start in range(0, len(docs), BATCH):
        writer.append(docs[start:start + BATCH])
    t1 = time.perf_counter()
    c1 = time.process_time()
    closed = writer.close_partition()
    DictionaryUpdater(path).update()
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    writer.close()
    assert closed == 0
    pdir = path / "positions_doc_map" / "0"
    manifest = json.loads((pdir / "MANIFEST").read_text().split("\n", 1)[1])
    n = len(docs)
    postings_bytes = (pdir / "postings").stat().st_size
    positions_bytes = (pdir / "positions").stat().st_size
    dictionary_bytes = dir_size(path / "dictionary", "*.btr")
    stored = dir_size(path / "documents", "partition_*")
    opens = []
    for _ in range(5):
        a = time.perf_counter()
        reader = IndexBundleReader(path)
        opens.append(time.perf_counter() - a)
        reader.close()
    reader = IndexBundleReader(path)
    term = max(reader.dictionary.items(), key=lambda kv: sum(r[1] for r in kv[1]))[0]
    target_df = reader.term_stats(term).docs

    def decode_200() -> int:
        cursor = reader.postings(term)
        got = 0
        while got < 200 and (block := cursor.next_block()) is not None:
            cursor.positions(block)
            got += block.doc_index.size
        return got

    decoded = decode_200()  # loads the partition's files once
    times = []
    for _ in range(200):
        a = time.perf_counter()
        decode_200()
        times.append(time.perf_counter() - a)
    reader.close()
    doc_map_bytes = (pdir / "doc_map").stat().st_size
    shutil.rmtree(path)
    return {
        "documents": n, "append": n / (t1 - t0), "close": n / (t2 - t1),
        "both": n / (t2 - t0), "both_cpu": n / cpu, "append_cpu": n / (c1 - c0),
        "close_cpu": n / (cpu - (c1 - c0)), "postings": manifest["postings"],
        "positions": manifest["positions"],
        "bytes_per_posting": postings_bytes / manifest["postings"],
        "bytes_per_position": positions_bytes / manifest["positions"],
        "index_per_doc": (postings_bytes + positions_bytes + dictionary_bytes) / n,
        "doc_map_per_doc": doc_map_bytes / n,
        "stored_per_doc": stored / n, "open_ms": 1000 * statistics.median(opens),
        "decode_ms": 1000 * statistics.median(times), "decoded": decoded,
        "df": target_df,
    }


def report(prefix: str, runs: list[dict[str, float]]) -> dict[str, float]:
    """Print one profile's medians (names prefixed by ``prefix``); return them."""

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    keys = ("documents", "postings", "positions", "append", "close", "both", "both_cpu",
            "append_cpu", "close_cpu", "bytes_per_posting", "bytes_per_position",
            "index_per_doc", "doc_map_per_doc", "stored_per_doc", "open_ms", "decode_ms",
            "decoded", "df")
    m = {k: med(k) for k in keys}
    print(f"{prefix}documents: {int(m['documents'])} docs")
    print(f"{prefix}postings: {int(m['postings'])} postings")
    print(f"{prefix}positions: {int(m['positions'])} positions")
    print(f"{prefix}append: {m['append']:.0f} docs/s")
    print(f"{prefix}close (partition close + dictionary merge): {m['close']:.0f} docs/s")
    print(f"{prefix}append+close: {m['both']:.0f} docs/s")
    print(f"{prefix}append+close in process CPU time (no waiting for CPU or disk): "
          f"{m['both_cpu']:.0f} docs/s")
    print(f"{prefix}append in process CPU time: {m['append_cpu']:.0f} docs/s")
    print(f"{prefix}close in process CPU time: {m['close_cpu']:.0f} docs/s")
    print(f"{prefix}append+close per run: " + ", ".join(f"{r['both']:.0f}" for r in runs)
          + " docs/s")
    print(f"{prefix}bytes per posting: {m['bytes_per_posting']:.3f} bytes")
    print(f"{prefix}bytes per position: {m['bytes_per_position']:.3f} bytes")
    print(f"{prefix}postings+positions+dictionary per document: {m['index_per_doc']:.1f} bytes")
    print(f"{prefix}doc_map per document: {m['doc_map_per_doc']:.1f} bytes")
    print(f"{prefix}stored summaries (and caches) per document: {m['stored_per_doc']:.1f} bytes")
    print(f"{prefix}open index: {m['open_ms']:.2f} ms")
    print(f"{prefix}decode first {int(m['decoded'])} postings with positions "
          f"(term with {int(m['df'])} docs): {m['decode_ms']:.3f} ms")
    return m


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jsonl", help="documents as JSONL {url, title, text}")
    parser.add_argument("--html", help="a folder of HTML files")
    parser.add_argument("--limit", type=int, default=None, help="at most this many documents")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    profiles: dict[str, list[IndexDocument]] = {}
    texts: list[tuple[str, str, str]] = []  # what tantivy indexes: (url, title, text)
    if args.jsonl or args.html:
        pages = jsonl_pages(args.jsonl) if args.jsonl else html_pages(args.html)
        source = f"jsonl:{os.path.basename(args.jsonl)}" if args.jsonl else "html folder"
        docs, analyser = build_docs(pages, args.limit)
        profiles[""] = docs
        texts.extend((d.url, d.summary["title"], d.summary["description"]) for d in docs)
    else:
        source = "localweb default tier (from disk), through the page processor"
        analyser = "indexer.core.text (crawler.core.processing.process)"
        profiles[""] = processed_docs(args.limit, whole_page=True, texts=texts)
        profiles["summary_only_"] = processed_docs(args.limit, whole_page=False)
    if not profiles[""]:
        print("no documents found: is the local web installed? (see ../shared/localweb)")
        return 1
    print(f"source: {source}")
    print(f"tokeniser: {analyser}")
    print("options: defaults (whole pages indexed)" + (
        "; summary_only_: the \"Summary only\" profile" if len(profiles) > 1 else ""))
    print(f"runs: {args.runs} (medians)")
    print(f"load average before the runs: {os.getloadavg()[0]:.2f} (2 cores)")
    results = {}
    with tempfile.TemporaryDirectory(prefix="index_bench_") as tmp:
        for prefix, docs in profiles.items():
            results[prefix] = report(prefix, [one_run(docs, Path(tmp))
                                              for _ in range(args.runs)])
    if "summary_only_" in results:
        whole, summary = results[""], results["summary_only_"]
        for key, name in (("index_per_doc", "index bytes"), ("stored_per_doc", "stored bytes"),
                          ("doc_map_per_doc", "doc_map bytes")):
            print(f"whole_page_cost_{key}: {whole[key] / summary[key]:.2f} x summary only "
                  f"({name} per document)")
        print(f"whole_page_cost_speed: {summary['both'] / whole['both']:.2f} x summary only "
              "(append+close time per document)")
    m = results[""]
    both, bpp, dec = m["both"], m["bytes_per_position"], m["decode_ms"]
    tantivy = tantivy_rate(texts, args.runs)
    if tantivy is not None:
        print(f"tantivy_docs_per_s: {tantivy:.0f} docs/s (title + indexed text, one writer "
              "thread, add_document + commit)")
        print(f"x_tantivy: {both / tantivy:.2f}")
    print(f"target: append+close {both:.0f} docs/s (goal >= {GOAL_DOCS_PER_S}) "
          f"{'met' if both >= GOAL_DOCS_PER_S else 'NOT met'}")
    print(f"target: bytes per position {bpp:.3f} (goal <= 1.5) "
          f"{'met' if bpp <= 1.5 else 'NOT met'}")
    print(f"target: decode 200 postings with positions {dec:.3f} ms (goal < 1) "
          f"{'met' if dec < 1 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
