"""Near-duplicate detection (issue 38): precision and recall on labelled page pairs of the local
web, and what the near-duplicate gate and clusters do on a crawl of it.

    .venv/bin/python bench/near_duplicates_bench.py        # no arguments needed

1. The labelled pairs, ``bench/data/near_duplicates.tsv`` (url_a, url_b, label, note): 360 pairs
   of pages of the local web's large tier, labelled by reading them side by side (their main
   text as a word diff). Label 1, near-duplicate: the two pages present the same item (the
   same page under two urls, a re-export such as ``std::x`` / ``core::x``, the same guide on
   two sites, release notes of parallel releases that carry the same text) and at least 95 %
   of their words are in common. Label 0: pages about different items, however much of a
   generated template they share (two iterator types, two methods of a class, an inherited
   docstring), and pages of one item that were rewritten or extended. The pairs: candidates
   found by a cheap SimHash search (within 3 bits, 4-6 bits, 7-10 bits, by host and
   directory), siblings of one directory, random pairs of a host and across hosts, and
   ``std``/``core``/``alloc`` twins.
2. Every page of the pairs is read from disk (the files nginx serves) and processed by the
   engine's own :class:`~crawler.core.processing.process.PageProcessor` (its SimHash is of the
   text without furniture), cached in ``$BENCH_CACHE``.
3. Rules compared: SimHash within k bits alone; SimHash within k bits with equal title keys
   (:func:`indexer.core.signals.simhash.title_key`: the engine's rule); MinHash (128
   permutations of the same shingles) Jaccard >= t with equal title keys. Tuning is honest:
   the pairs are split in two halves by a hash of their urls; k (or t) is chosen on the first
   half (the largest recall with precision >= 0.90), and reported on the second.
4. A crawl of the large tier (``--work``: its work directory; default: the newest one the
   bench finds, see :func:`default_work`): its queue servers' counters (near-duplicate pages,
   links left out, fetches saved) and its clusters (formed again from the stored summaries
   with the engine's rule): pages folded, clusters, clusters across hosts.

Prints ``name: value unit`` lines and ``target:`` lines.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from crawler.core.processing.page import FetchedPage  # noqa: E402
from crawler.core.processing.process import PageProcessor  # noqa: E402
from indexer.core.bundle.member_scan import iter_member_summaries  # noqa: E402
from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.ids import DocType  # noqa: E402
from indexer.core.runtime.workdir import crawl_bundles, crawl_timestamps  # noqa: E402
from indexer.core.signals.near_clusters import (  # noqa: E402
    DEFAULT_DISTANCE,
    PageSignature,
    form_clusters,
)
from indexer.core.signals.simhash import (  # noqa: E402
    from_hex,
    hamming,
    shingle_hashes,
    title_key,
    words,
)

SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
sys.path.insert(0, str(SHARED / "localweb"))
import sites  # noqa: E402

CACHE = Path(os.environ.get("BENCH_CACHE", "/tmp/yioopy-bench"))
PAIRS = ROOT / "bench" / "data" / "near_duplicates.tsv"
PRECISION_GOAL = 0.90
MINHASH_PERMUTATIONS = 128
_PRIME = (1 << 61) - 1


def url_file(url: str) -> Path | None:
    """The file nginx serves for ``url`` (sites.py: host, prefix, root)."""
    for site in sites.SITES:
        base = f"https://{site['host']}{site['prefix']}"
        if url.startswith(base):
            return Path(site["root"]) / url[len(base):]
    return None


def read_pairs() -> list[tuple[str, str, int]]:
    rows = []
    for line in PAIRS.read_text().splitlines()[1:]:
        a, b, label, _ = line.split("\t", 3)
        rows.append((a, b, int(label)))
    return rows


def minhash(text: str) -> np.ndarray:
    """128 minima of (a x + b) mod p over the text's shingle hashes."""
    features = shingle_hashes(words(text)).astype(object)
    rng = np.random.default_rng(38)
    a = rng.integers(1, _PRIME, MINHASH_PERMUTATIONS).astype(object)
    b = rng.integers(0, _PRIME, MINHASH_PERMUTATIONS).astype(object)
    if features.size == 0:
        return np.zeros(MINHASH_PERMUTATIONS, dtype=object)
    return np.array([min((ai * features + bi) % _PRIME) for ai, bi in zip(a, b, strict=True)],
                    dtype=object)


def page_signatures(urls: list[str]) -> dict[str, dict]:
    """url -> {simhash, title, minhash} by the engine's processor, cached by code version."""
    code = hashlib.sha1()
    for path in sorted((ROOT / "crawler/core/processing").rglob("*.py")):
        code.update(path.read_bytes())
    cache = CACHE / f"near-duplicate-pages-{code.hexdigest()[:10]}.json"
    known = json.loads(cache.read_text()) if cache.exists() else {}
    processor = PageProcessor()
    missing = [u for u in urls if u not in known]
    for number, url in enumerate(missing):
        path = url_file(url)
        body = path.read_bytes() if path is not None and path.exists() else b""
        page = processor.process(FetchedPage(url, body, 200, {"content-type": "text/html"}))
        text = page.body or page.description
        known[url] = {"simhash": f"{page.simhash:016x}", "title": page.title,
                      "minhash": [str(v) for v in minhash(text)]}
        if number % 50 == 49:
            CACHE.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(known))
    CACHE.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(known))
    return known


def scores(predicted: list[bool], labels: list[int]) -> tuple[float, float, int]:
    tp = sum(1 for p, y in zip(predicted, labels, strict=True) if p and y)
    fp = sum(1 for p, y in zip(predicted, labels, strict=True) if p and not y)
    fn = sum(1 for p, y in zip(predicted, labels, strict=True) if not p and y)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, tp + fp


def tune(features: list[tuple[int, bool, float]], labels: list[int], half: list[bool],
         rule: str) -> tuple[float, list[bool]]:
    """The threshold chosen on the first half (largest recall with precision >= goal, ties:
    the stricter) and the predictions with it."""
    grid = [float(k) for k in range(11)] if rule != "minhash" else \
        [t / 100 for t in range(50, 100, 2)]

    def predict(threshold: float) -> list[bool]:
        out = []
        for distance, same_title, jaccard in features:
            if rule == "simhash":
                out.append(distance <= threshold)
            elif rule == "simhash+title":
                out.append(distance <= threshold and same_title)
            else:
                out.append(jaccard >= threshold and same_title)
        return out

    best, best_recall = grid[0] if rule != "minhash" else grid[-1], -1.0
    for threshold in grid:
        predicted = predict(threshold)
        first = [(p, y) for p, y, h in zip(predicted, labels, half, strict=True) if h]
        precision, recall, _ = scores([p for p, _ in first], [y for _, y in first])
        if precision >= PRECISION_GOAL and recall > best_recall:
            best, best_recall = threshold, recall
    return best, predict(best)


def labelled(args: argparse.Namespace) -> None:
    pairs = read_pairs()
    urls = sorted({u for a, b, _ in pairs for u in (a, b)})
    started = time.perf_counter()
    pages = page_signatures(urls)
    print(f"pairs: {len(pairs)} pairs")
    print(f"pairs_near_duplicate: {sum(y for _, _, y in pairs)} pairs")
    print(f"pages_processed: {len(urls)} pages in {time.perf_counter() - started:.1f} s")
    labels = [y for _, _, y in pairs]
    half = [zlib.crc32(f"{a} {b}".encode()) % 2 == 0 for a, b, _ in pairs]
    features = []
    for a, b, _ in pairs:
        pa, pb = pages[a], pages[b]
        ha, hb = from_hex(pa["simhash"]), from_hex(pb["simhash"])
        distance = hamming(ha, hb) if ha and hb else 64
        ma, mb = np.array(pa["minhash"]), np.array(pb["minhash"])
        jaccard = float(np.mean(ma == mb))
        features.append((distance, title_key(pa["title"]) == title_key(pb["title"]), jaccard))
    for rule in ("simhash", "simhash+title", "minhash"):
        threshold, predicted = tune(features, labels, half, rule)
        unit = "bits" if rule != "minhash" else "jaccard"
        for name, keep in (("tuning_half", True), ("held_out_half", False)):
            chosen = [(p, y) for p, y, h in zip(predicted, labels, half, strict=True)
                      if h == keep]
            precision, recall, flagged = scores([p for p, _ in chosen], [y for _, y in chosen])
            print(f"{rule}_{name}_precision: {precision:.3f} ratio (threshold {threshold:g} "
                  f"{unit}, {flagged} pairs flagged)")
            print(f"{rule}_{name}_recall: {recall:.3f} ratio")
        precision, recall, flagged = scores(predicted, labels)
        print(f"{rule}_all_precision: {precision:.3f} ratio (threshold {threshold:g} {unit})")
        print(f"{rule}_all_recall: {recall:.3f} ratio")
    # the engine's rule (equal title keys) at every distance, on every pair
    for k in range(8):
        at_k = [d <= k and same for d, same, _ in features]
        precision, recall, flagged = scores(at_k, labels)
        print(f"simhash+title_at_{k}_bits_precision: {precision:.3f} ratio ({flagged} flagged)")
        print(f"simhash+title_at_{k}_bits_recall: {recall:.3f} ratio")
    # the engine's rule at its default distance, on every pair
    engine = [d <= DEFAULT_DISTANCE and same for d, same, _ in features]
    precision, recall, flagged = scores(engine, labels)
    print(f"engine_rule_precision: {precision:.3f} ratio (SimHash <= {DEFAULT_DISTANCE} bits and "
          f"equal title keys, {flagged} pairs flagged)")
    print(f"engine_rule_recall: {recall:.3f} ratio")
    held = [(p, y) for p, y, h in zip(engine, labels, half, strict=True) if not h]
    held_precision, _, _ = scores([p for p, _ in held], [y for _, y in held])
    print(f"target: precision of the engine's rule on the labelled pairs {precision:.3f} "
          f"(goal >= {PRECISION_GOAL}) {'met' if precision >= PRECISION_GOAL else 'NOT met'}")
    print(f"target: precision on the held-out half {held_precision:.3f} "
          f"(goal >= {PRECISION_GOAL}) {'met' if held_precision >= PRECISION_GOAL else 'NOT met'}")


def default_work() -> Path | None:
    """The newest crawl work directory the bench knows of: ``$NEAR_DUPLICATES_WORK``, else a
    large-tier crawl in the relevance bench's cache."""
    named = os.environ.get("NEAR_DUPLICATES_WORK")
    if named:
        return Path(named)
    found = sorted(CACHE.glob("crawl-large-*/BUILT.json"), key=lambda p: p.stat().st_mtime)
    return found[-1].parent if found else None


def crawl_figures(work: Path) -> None:
    timestamps = crawl_timestamps(work)
    if not timestamps:
        print(f"crawl: none at {work}")
        return
    timestamp = timestamps[-1]
    counters: dict[str, int] = {}
    for state in work.glob(f"qs*/state{timestamp}.json"):
        for key, value in json.loads(state.read_text()).items():
            if isinstance(value, int):
                counters[key] = counters.get(key, 0) + value
    print(f"crawl_pages_fetched: {counters.get('pages_fetched', 0)} pages ({work})")
    print(f"crawl_near_duplicate_pages: {counters.get('near_duplicate_pages', 0)} pages "
          "(found by the queue servers while crawling)")
    print(f"crawl_links_left_out: {counters.get('near_duplicate_links_skipped', 0)} links")
    print(f"crawl_fetches_saved: {counters.get('near_duplicate_fetches_saved', 0)} fetches "
          "(urls left out and never fetched)")
    signatures: dict[str, PageSignature] = {}
    for bundle in crawl_bundles(work, timestamp):
        with IndexBundleReader(bundle) as reader:
            for doc_type, _, summary in iter_member_summaries(reader):
                if doc_type != DocType.PAGE or not summary:
                    continue
                fingerprint = from_hex(summary.get("simhash"))
                if fingerprint:
                    url = str(summary["url"])
                    signatures[url] = PageSignature(url, fingerprint,
                                                    str(summary.get("canonical") or ""),
                                                    title_key=title_key(str(summary.get(
                                                        "title") or "")))
    clusters = form_clusters(list(signatures.values()))
    folded = sum(len(c.urls) - 1 for c in clusters)
    print(f"crawl_pages_with_simhash: {len(signatures)} pages")
    print(f"crawl_clusters: {len(clusters)} clusters")
    print(f"crawl_pages_folded: {folded} pages")
    print(f"crawl_clusters_across_hosts: {sum(1 for c in clusters if c.cross_host)} clusters")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None,
                        help="work directory of a crawl to measure (default: see default_work)")
    parser.add_argument("--no-crawl", action="store_true", help="the labelled pairs only")
    args = parser.parse_args()
    labelled(args)
    if not args.no_crawl:
        work = args.work or default_work()
        if work is None:
            print("crawl: none found (give --work or set NEAR_DUPLICATES_WORK)")
        else:
            crawl_figures(work)


if __name__ == "__main__":
    main()
