"""Benchmark of the on-disk index (indexer.core): append, close, sizes, open, decode.

Run with no arguments: ``.venv/bin/python bench/index_bench.py``.

Documents come from the local web (``../shared/localweb``): every HTML page of the installed
default-tier sites, read from disk (no crawl) and reduced to text the way
``../shared/peers/corpus.py`` does (body text without script/style). Other sources:
``--jsonl FILE`` (one ``{"url", "title", "text"}`` object a line, e.g. from
``peers/dump_docs.py``) or ``--html DIR`` (a folder of ``.html`` files).

Each page becomes an already-tokenised IndexDocument with a default-length summary: the title
and the first 2,000 characters of its text (Yioop's default maximum page length), analysed with
``indexer.core.text`` (a regex tokeniser if that package is unavailable), a ``site:`` meta word
and title/description region weights. Tokenising is done before timing: the index is measured,
not the analyser.

Each run builds a fresh bundle in a temporary folder: ``append`` in batches of 400 (one
fetcher shipment each; one partition), then ``close`` = ``close_partition()`` + the dictionary updater's merge. Figures are
medians over ``--runs`` runs (default 3). Output: one ``name: value unit`` line per figure, then
one ``target: ...`` line per target of issue 3.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from indexer.core.bundle import BundleConfig, IndexBundleWriter  # noqa: E402
from indexer.core.document import IndexDocument  # noqa: E402
from indexer.core.ids import DocType, hash7  # noqa: E402
from indexer.core.reader import IndexBundleReader  # noqa: E402
from indexer.core.updater import DictionaryUpdater  # noqa: E402

SHARED = ROOT.parent / "shared"
SUMMARY_CHARS = 2000
# a fetcher ships what it has every SEEN_URLS_BEFORE_UPDATE_SCHEDULER pages, "usually every four
# to five hundred urls" (seed 000): one append (one durable commit) per shipment
BATCH = 400


def localweb_pages() -> Iterator[tuple[str, str, str]]:
    import lxml.etree
    import lxml.html

    sys.path.insert(0, str(SHARED / "localweb"))
    import sites  # type: ignore[import-not-found]

    for site in sites.sites("default"):
        for url, path, _ in sites.walk_pages(site):
            raw = Path(path).read_bytes()
            if path.endswith(".gz"):
                import gzip

                raw = gzip.decompress(raw)
            if not raw.strip():
                continue
            try:
                doc = lxml.html.fromstring(raw)
            except (lxml.etree.ParserError, ValueError):
                continue
            title = " ".join(" ".join(doc.xpath("//title//text()")).split())
            lxml.etree.strip_elements(doc, "script", "style", with_tail=False)
            body = doc.xpath("//body")
            text = " ".join(" ".join(body[0].itertext()).split()) if body else ""
            yield url, title, text


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jsonl", help="documents as JSONL {url, title, text}")
    parser.add_argument("--html", help="a folder of HTML files")
    parser.add_argument("--limit", type=int, default=None, help="at most this many documents")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if args.jsonl:
        pages, source = jsonl_pages(args.jsonl), f"jsonl:{os.path.basename(args.jsonl)}"
    elif args.html:
        pages, source = html_pages(args.html), "html folder"
    else:
        pages, source = localweb_pages(), "localweb default tier (from disk)"
    docs, analyser = build_docs(pages, args.limit)
    if not docs:
        print("no documents found: is the local web installed? (see ../shared/localweb)")
        return 1
    runs = []
    with tempfile.TemporaryDirectory(prefix="index_bench_") as tmp:
        for _ in range(args.runs):
            runs.append(one_run(docs, Path(tmp)))

    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    print(f"source: {source}")
    print(f"tokeniser: {analyser}")
    print(f"runs: {len(runs)} (medians)")
    print(f"documents: {len(docs)} docs")
    print(f"postings: {int(med('postings'))} postings")
    print(f"positions: {int(med('positions'))} positions")
    print(f"append: {med('append'):.0f} docs/s")
    print(f"close (partition close + dictionary merge): {med('close'):.0f} docs/s")
    print(f"append+close: {med('both'):.0f} docs/s")
    print(f"append+close in process CPU time (no waiting for CPU or disk): "
          f"{med('both_cpu'):.0f} docs/s")
    print(f"append in process CPU time: {med('append_cpu'):.0f} docs/s")
    print(f"close (partition close + dictionary merge) in process CPU time: "
          f"{med('close_cpu'):.0f} docs/s")
    print(f"load average during the runs: {os.getloadavg()[0]:.2f} (2 cores)")
    print("append+close per run: " + ", ".join(f"{r['both']:.0f}" for r in runs) + " docs/s")
    print(f"bytes per posting: {med('bytes_per_posting'):.3f} bytes")
    print(f"bytes per position: {med('bytes_per_position'):.3f} bytes")
    print(f"postings+positions+dictionary per document: {med('index_per_doc'):.1f} bytes")
    print(f"doc_map per document: {med('doc_map_per_doc'):.1f} bytes")
    print(f"stored summaries (and caches) per document: {med('stored_per_doc'):.1f} bytes")
    print(f"open index: {med('open_ms'):.2f} ms")
    print(f"decode first {int(med('decoded'))} postings with positions "
          f"(term with {int(med('df'))} docs): {med('decode_ms'):.3f} ms")
    both, bpp, dec = med("both"), med("bytes_per_position"), med("decode_ms")
    print(f"target: append+close {both:.0f} docs/s (goal >= 2000) "
          f"{'met' if both >= 2000 else 'NOT met'}")
    print(f"target: bytes per position {bpp:.3f} (goal <= 1.5) "
          f"{'met' if bpp <= 1.5 else 'NOT met'}")
    print(f"target: decode 200 postings with positions {dec:.3f} ms (goal < 1) "
          f"{'met' if dec < 1 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
