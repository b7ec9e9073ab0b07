"""Relevance of the search pipeline on the local web's default tier, with the shared scorer.

Indexes the local web's default tier by a crawl: the engine's own in-process crawl
(``crawler.core.local_crawl.LocalCrawl``: queue server, Host Budgeting scheduler, fetcher
threads over HTTPS to the local web, robots.txt obeyed, the page processor, the indexer), seeded
with each default-tier site's root page ``https://<host>/``, so Doc Rank reflects the crawl's
order. The index is cached under /tmp, keyed by a hash of crawler/core and indexer/core (the
code that decides what is fetched and indexed), so reruns only search. The Page Options used are
documented at ``MAX_SUMMARY_LENGTH`` below. Then it answers ../shared/judgments/dev.tsv with
:class:`ranking.core.pipeline.Searcher` and prints MRR@10, Success@1, Success@10 and nDCG@10 from
../shared/judgments/score.py, for all queries and for the odd and even halves of dev.tsv.

Usage: ``.venv/bin/python bench/relevance_eval.py`` (``--rebuild`` to crawl again, ``--misses``
to list the queries whose answer is not first). Needs the local web running
(sh ../shared/localweb/start.sh). Prints ``name: value unit`` lines and a ``target:`` line
(MRR@10 >= 0.85).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import logging
import os
import shutil
import sys
import time
import urllib.robotparser
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from crawler.core.config import PageProcessingConfig  # noqa: E402
from crawler.core.crawl import CrawlConfig, CrawlOrder, CrawlTimeOptions, SeedSpec  # noqa: E402
from crawler.core.fetch import FetchConfig  # noqa: E402
from crawler.core.local_crawl import LocalCrawl  # noqa: E402
from crawler.core.process import PageProcessor  # noqa: E402
from crawler.core.siterules import SiteRules  # noqa: E402
from indexer.core.reader import IndexBundleReader  # noqa: E402
from ranking.core.pipeline import Searcher  # noqa: E402
from ranking.core.shard import LocalShard  # noqa: E402

SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
sys.path.insert(0, str(SHARED / "localweb"))
sys.path.insert(0, str(SHARED / "judgments"))
import score  # noqa: E402
import sites  # noqa: E402

CACHE = Path(os.environ.get("BENCH_CACHE", "/tmp/yioopy-bench"))
CA_BUNDLE = SHARED / "localweb" / "build" / "tls" / "cert.pem"
BUILD_VERSION = "3"
# Page Options > Crawl Time, as an admin would set them for a crawl of software manuals:
# * "Max page summary length" 1,000,000 (= the byte range): the whole text of a manual page is
#   indexed, as the peers index it; the default 2,000 keeps only the summarizer's top
#   sentences, and a reference page's answer is rarely among them;
# * "Max links to keep per page" 300 (the most the form allows; default 50): manuals' contents
#   and index pages link to hundreds of pages, and the pruning to 50 drops most of those links,
#   so most pages would only be found late and their anchor text would never be indexed.
# Every other option keeps its default (byte range 1,000,000, basic summarizer, robots.txt
# always followed). The crawl is seeded with each site's root page, in Host Budgeting order,
# restricted to the seeds' hosts (the manuals' links to the real web cannot be fetched here).
MAX_SUMMARY_LENGTH = 1_000_000
MAX_LINKS_PER_PAGE = 300
TARGET_MRR = 0.85
CRAWL_TIMESTAMP = 1_700_000_000
USER_AGENT = "YioopyBench/0.1"
FETCHERS = 4
MAX_CRAWL_SECONDS = 1800.0


def _code_version() -> str:
    """A hash of the code that decides what the crawl fetches and indexes (crawler.core,
    indexer.core), so a change there rebuilds the cached index and nothing else does."""
    digest = hashlib.sha1(BUILD_VERSION.encode())
    for package in ("crawler/core", "indexer/core"):
        for path in sorted((ROOT / package).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def seed_urls(tier: str = "default") -> list[str]:
    """The root page of every installed site of the tier: what an admin would seed."""
    return [f"https://{site['host']}/" for site in sites.sites(tier)]


def crawl_options() -> CrawlTimeOptions:
    """The Page Options (Crawl Time) of the bench's crawl; see the module docstring."""
    return replace(CrawlTimeOptions(), max_description_len=MAX_SUMMARY_LENGTH,
                   max_links_to_extract=MAX_LINKS_PER_PAGE)


def _read(path: str) -> bytes:
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as handle:
            return handle.read()
    with open(path, "rb") as handle:
        return handle.read()


def tier_pages(tier: str = "default") -> dict[str, str]:
    """url -> file of every robots-allowed HTML page of the tier (the peers' corpus)."""
    pages: dict[str, str] = {}
    for site in sites.sites(tier):
        robots = urllib.robotparser.RobotFileParser()
        robots.parse(sites.ROBOTS.get(site["host"], sites.ALLOW_ALL).splitlines())
        for url, path, _ in sites.walk_pages(site):
            if robots.can_fetch("*", url):
                pages[url] = path
    return pages


def build_index(tier: str = "default", rebuild: bool = False) -> tuple[Path, dict[str, float]]:
    """The cached index of a crawl of the tier (crawled when missing) and its statistics."""
    paths, stats = crawl_index(tier, 1, rebuild)
    return paths[0], stats


def crawl_index(tier: str = "default", servers: int = 1, rebuild: bool = False
                ) -> tuple[list[Path], dict[str, float]]:
    """The cached index bundles (one per queue server) of a crawl of the tier by the engine's
    in-process crawler (crawled when missing) and the crawl's statistics."""
    seeds = seed_urls(tier)
    if not seeds:
        raise SystemExit("no local-web pages on disk: install the tier's packages "
                         "(sh ../shared/localweb/setup.sh as root)")
    key = hashlib.sha1(f"{_code_version()}|{tier}|{servers}|{' '.join(seeds)}".encode()
                       ).hexdigest()[:10]
    folder = CACHE / f"crawl-{tier}-{servers}-{key}"
    stamp = folder / "BUILT.json"
    if stamp.exists() and not rebuild:
        stats = json.loads(stamp.read_text())
        return [Path(p) for p in stats["index"]], stats
    shutil.rmtree(folder, ignore_errors=True)
    options = crawl_options()
    crawl = CrawlConfig(crawl_id=1, timestamp=CRAWL_TIMESTAMP, name=f"relevance-{tier}",
                        order=CrawlOrder.HOST_BUDGETING, restrict_to_seeds=True,
                        site_rules=SiteRules(restrict=True, seed_hosts=frozenset(
                            urlsplit(url).hostname or "" for url in seeds)),
                        seeds=tuple(SeedSpec(url) for url in seeds), page_options=options)
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), ca_bundle=str(CA_BUNDLE),
                        user_agent=USER_AGENT, byte_range=options.byte_range)
    processor = PageProcessor(replace(PageProcessingConfig.from_options(options),
                                      robot_name=USER_AGENT.split("/")[0]))
    runner = LocalCrawl(crawl, folder, fetch, processor, num_servers=servers, fetchers=FETCHERS,
                        schedule_size=500, refresh_seconds=5.0)
    try:
        result = runner.run(max_seconds=MAX_CRAWL_SECONDS)
    finally:
        runner.close()
    if not result.finished or not result.pages_fetched:
        raise SystemExit(f"the crawl did not finish ({result.pages_fetched} pages fetched in "
                         f"{result.elapsed:.0f}s): is the local web up? "
                         "(sh ../shared/localweb/start.sh)")
    stats = {"pages": result.pages_fetched, "documents": result.documents_indexed,
             "fetch_errors": sum(int(s.get("fetch_errors", 0)) for s in result.stats),
             "build_s": result.elapsed, "index": [str(p) for p in result.index_paths]}
    stamp.write_text(json.dumps(stats))
    return list(result.index_paths), stats


def load_queries() -> list[tuple[str, str]]:
    out = []
    with open(SHARED / "judgments" / "dev.tsv", encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, query = line.split("\t")[:2]
            out.append((qid, query))
    return out


def run_queries(searcher: Searcher, queries: list[tuple[str, str]]) -> dict[str, list[str]]:
    return {qid: [r.url for r in searcher.search(q, num=10, snippets=False).results]
            for qid, q in queries}


def evaluate(run: dict[str, list[str]], path: Path, only: set[str] | None = None
             ) -> dict[str, float]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for qid, urls in run.items():
            for rank, url in enumerate(urls, 1):
                handle.write(f"{qid}\t{rank}\t{url}\n")
    qrels = score.load_qrels(str(SHARED / "judgments" / "dev.tsv"))
    if only is not None:
        qrels = {qid: q for qid, q in qrels.items() if qid in only}
    mean, _ = score.score(qrels, score.load_run(str(path)))
    return mean


def _half(run: dict[str, list[str]], queries: list[tuple[str, str]], parity: int,
          name: str) -> dict[str, float]:
    """Scores of the odd (``parity`` 1: dev.tsv's 1st, 3rd ... query) or even half."""
    ids = {qid for i, (qid, _) in enumerate(queries, 1) if i % 2 == parity}
    return evaluate({q: urls for q, urls in run.items() if q in ids},
                    CACHE / "runs" / f"yioopy-{name}.run", ids)


def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rebuild", action="store_true", help="crawl again")
    ap.add_argument("--misses", action="store_true",
                    help="list the queries whose first result is not a right answer")
    args = ap.parse_args()
    bundle, stats = build_index("default", args.rebuild)
    reader = IndexBundleReader(bundle)
    searcher = Searcher([LocalShard(reader)])
    queries = load_queries()
    start = time.perf_counter()
    run = run_queries(searcher, queries)
    elapsed = time.perf_counter() - start
    mean = evaluate(run, CACHE / "runs" / "yioopy.run")
    odd = _half(run, queries, 1, "odd")
    even = _half(run, queries, 0, "even")
    sys.stdout.write(
        f"pages: {stats['pages']} pages\n"
        f"index_documents: {stats['documents']} documents\n"
        f"crawl_time: {stats['build_s']:.1f} s\n"
        f"doc_map_entries: {reader.collection_stats().documents} entries\n"
        f"queries: {len(queries)} queries\n"
        f"eval_time: {elapsed:.2f} s\n"
        f"MRR@10: {mean['MRR@10']:.4f} score\n"
        f"Success@1: {mean['S@1']:.4f} score\n"
        f"Success@10: {mean['S@10']:.4f} score\n"
        f"nDCG@10: {mean['nDCG@10']:.4f} score\n"
        f"MRR@10_odd: {odd['MRR@10']:.4f} score\n"
        f"MRR@10_even: {even['MRR@10']:.4f} score\n")
    if args.misses:
        qrels = score.load_qrels(str(SHARED / "judgments" / "dev.tsv"))
        ranked = score.load_run(str(CACHE / "runs" / "yioopy.run"))
        for qid, q in qrels.items():
            got = ranked.get(qid, [])
            hit = next((i + 1 for i, u in enumerate(got[:10]) if u in q["rel"]), None)
            if hit != 1:
                sys.stdout.write(f"# {qid} {q['query']!r} rank={hit} "
                                 f"want={sorted(q['rel'])[:1]} top={got[:2]}\n")
    met = mean["MRR@10"] >= TARGET_MRR
    sys.stdout.write(f"target: MRR@10 {mean['MRR@10']:.4f} (goal {TARGET_MRR}) "
                     f"{'met' if met else 'NOT met'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
