"""Relevance of the search pipeline on the local web's default tier, with the shared scorer.

Indexes the local web's default tier by a crawl: the engine's own in-process crawl
(``crawler.core.local_crawl.LocalCrawl``: queue server, Host Budgeting scheduler, fetcher
threads over HTTPS to the local web, robots.txt obeyed, the page processor, the indexer), seeded
with each default-tier site's root page ``https://<host>/``, so Doc Rank reflects the crawl's
order. The index is cached under /tmp, keyed by a hash of crawler/core and indexer/core (the
code that decides what is fetched and indexed), so reruns only search. The Page Options used
(crawl and search time) are documented at ``MAX_SUMMARY_LENGTH`` below. Then it answers
../shared/judgments/dev.tsv with
:class:`ranking.core.pipeline.Searcher` and prints MRR@10, Success@1, Success@10 and nDCG@10 from
../shared/judgments/score.py, for all queries and for the odd and even halves of dev.tsv.

Link analysis (issue 8), on and off. After the crawl the bench runs what an admin would run
(``manage.py webgraph``, ``linkrank`` and ``score_update``, through the same core functions):
the web graph of the crawl's link documents, LinkRank (damping 0.85 with the default same-host
discount) and trust from the seeds (all ``default`` policy here), written to
``<crawl>/linkgraph/<ts>/scores.npz``. Then:

* **off**: the crawl's index, Page Options' link score weight 0;
* **on**: the same index with the link score beside Doc Rank at the default weight
  (``SearchOptions.link_score_weight``, or 1 when the default is 0), representative urls
  included;
* with ``--anchors``, also **on_anchors**: a second crawl of the same web into a folder that
  already holds those scores (a recrawl after link analysis, as in Nutch's cycle), so its
  indexer boosts every anchor text by its source page's LinkRank (AnchorFields), searched like
  "on". It doubles the crawl time, hence not by default.

The headline figures (MRR@10, Success@1, ...) are those of the configuration the defaults
give, i.e. "on" when the default weight is above 0, else "off"; both MRR@10 figures are
printed, with a ``target:`` line that the default is the better of the two.

Usage: ``.venv/bin/python bench/relevance_eval.py`` (``--rebuild`` to crawl again, ``--misses``
to list the queries whose answer is not first, ``--cached`` to reuse the newest cached crawls
even if crawler/indexer code changed since, for ranking-only work). Needs the local web running
(sh ../shared/localweb/start.sh). Prints ``name: value unit`` lines and ``target:`` lines
(MRR@10 >= 0.85; the default link weight is the better of on and off).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import logging
import os
import re
import shutil
import sys
import time
import urllib.robotparser
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from crawler.core.config import MAX_LINKS_LIMIT, PageProcessingConfig  # noqa: E402
from crawler.core.crawl import CrawlConfig, CrawlOrder, CrawlTimeOptions, SeedSpec  # noqa: E402
from crawler.core.fetch import FetchConfig  # noqa: E402
from crawler.core.local_crawl import LocalCrawl  # noqa: E402
from crawler.core.process import PageProcessor  # noqa: E402
from crawler.core.siterules import SiteRules  # noqa: E402
from indexer.core.reader import IndexBundleReader  # noqa: E402
from ranking.core.linkgraph import (  # noqa: E402
    LinkRankConfig,
    Policy,
    TrustSeed,
    WebGraphBuilder,
    crawl_bundles,
    graph_dir,
    linkrank,
    propagate_trust,
    read_bundle_links,
    save_graph,
    scores_path,
    write_scores,
)
from ranking.core.linkgraph.scores import cached_link_scores  # noqa: E402
from ranking.core.options import SearchOptions  # noqa: E402
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
# * "Max links to keep per page" 100,000 (the most the form allows: every link; default 50):
#   manuals' contents and back-of-book index pages (PostgreSQL's bookindex, the Sphinx
#   genindex pages) link to hundreds or thousands of pages, each with the entry's words as
#   anchor text; with a smaller limit the pruning drops most of those links, so their anchor
#   text is never indexed and pages are found later (at 300: MRR@10 0.83-0.84, 0.87 with every
#   link). On the large tier also "Byte range to download" 4,000,000 (default 1,000,000; as
#   crawl_bench): the Rust API reference reaches most of its 32,000 pages only through index
#   pages with thousands of links, 3 MB long, and with 300 links of the first 1,000,000 bytes
#   the crawl ends at 17,000 of the tier's 44,000 pages (30,000 with every link), which the
#   peers index in full.
# Every other option keeps its default (byte range 1,000,000 on the default tier, basic
# summarizer, robots.txt always followed). The crawl is seeded with each site's root page, in Host Budgeting order,
# restricted to the seeds' hosts (the manuals' links to the real web cannot be fetched here).
#
# Page Options > Search Time: the defaults, except "Minimum results to group" 1,000 (default
# 200): the first n matches are taken in Doc Rank order, which follows the crawl order, and a
# manual's answer page is often crawled late, so with 200 it is not among the candidates at
# all (MRR@10 0.80 instead of 0.84 here). The queries this decides have common words (ALTER
# TYPE, ROW, binary string, default value, ...): their first 200 matches are all pages (link
# documents are at most one of them), so it is the seed's early termination in crawl order, not
# grouping, that leaves the answer out; 1,000 and 5,000 give the same results. On an index of
# a few thousand pages 1,000 costs little. Both the default and this value are within the
# form's range (10 to 10,000).
MAX_SUMMARY_LENGTH = 1_000_000
MAX_LINKS_PER_PAGE = MAX_LINKS_LIMIT
LARGE_BYTE_RANGE = 4_000_000
MIN_RESULTS_TO_GROUP = 1000
TARGET_MRR = 0.85
CRAWL_TIMESTAMP = 1_700_000_000
USER_AGENT = "YioopyBench/0.1"
FETCHERS = 4
MAX_CRAWL_SECONDS = 3600.0  # the large tier: 44,000 pages


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


def crawl_options(tier: str = "default") -> CrawlTimeOptions:
    """The Page Options (Crawl Time) of the bench's crawl of ``tier``; see the comment above
    ``MAX_SUMMARY_LENGTH``."""
    if tier == "default":
        return replace(CrawlTimeOptions(), max_description_len=MAX_SUMMARY_LENGTH,
                       max_links_to_extract=MAX_LINKS_PER_PAGE)
    return replace(CrawlTimeOptions(), max_description_len=MAX_SUMMARY_LENGTH,
                   max_links_to_extract=MAX_LINKS_PER_PAGE, byte_range=LARGE_BYTE_RANGE)


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


def _crawl_folder(tier: str, servers: int, seeds: list[str], variant: str = "",
                  cached: bool = False) -> Path:
    # the crawl's Page Options are part of what it fetches and indexes
    key = hashlib.sha1(f"{_code_version()}|{tier}|{servers}|{' '.join(seeds)}|"
                       f"{crawl_options(tier)!r}".encode()).hexdigest()[:10]
    name = f"crawl-{tier}-{servers}{variant}"
    folder = CACHE / f"{name}-{key}"
    if cached and not (folder / "BUILT.json").exists():
        built = sorted((p.parent for p in CACHE.glob(f"{name}-*/BUILT.json")
                        if re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{10}}", p.parent.name)),
                       key=lambda p: (p / "BUILT.json").stat().st_mtime)
        if built:
            return built[-1]
    return folder


def crawl_index(tier: str = "default", servers: int = 1, rebuild: bool = False,
                variant: str = "", prepare: Callable[[Path], None] | None = None,
                cached: bool = False
                ) -> tuple[list[Path], dict[str, float]]:
    """The cached index bundles (one per queue server) of a crawl of the tier by the engine's
    in-process crawler (crawled when missing) and the crawl's statistics. ``variant`` names
    another cache folder; ``prepare(folder)`` runs before its crawl starts; ``cached`` reuses
    the newest crawl of that name whatever the code version."""
    seeds = seed_urls(tier)
    if not seeds:
        raise SystemExit("no local-web pages on disk: install the tier's packages "
                         "(sh ../shared/localweb/setup.sh as root)")
    folder = _crawl_folder(tier, servers, seeds, variant, cached and not rebuild)
    stamp = folder / "BUILT.json"
    if stamp.exists() and not rebuild:
        stats = json.loads(stamp.read_text())
        return [Path(p) for p in stats["index"]], stats
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    if prepare is not None:
        prepare(folder)
    options = crawl_options(tier)
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


def work_of(bundle: Path) -> Path:
    """The crawl folder (the engine's work directory) of a ``<work>/qs<n>/IndexData<ts>``."""
    return bundle.parent.parent


def link_analysis(work: Path, tier: str = "default") -> dict[str, float]:
    """webgraph + linkrank + score_update of the crawl in ``work`` (cached beside it): the
    graph of its link records, LinkRank, trust from its seeds (default policy), the scores
    file. Returns timings and sizes."""
    path = scores_path(work, CRAWL_TIMESTAMP)
    stamp = path.with_suffix(".json")
    if path.exists() and stamp.exists():
        return json.loads(stamp.read_text())
    start = time.perf_counter()
    links = read_bundle_links(crawl_bundles(work, CRAWL_TIMESTAMP))
    builder = WebGraphBuilder()
    builder.add_all(links.records)
    graph = save_graph(builder.build(), graph_dir(work, CRAWL_TIMESTAMP))
    built = time.perf_counter() - start
    start = time.perf_counter()
    result = linkrank(graph, LinkRankConfig())
    seeds = [TrustSeed(url, Policy.DEFAULT) for url in seed_urls(tier)]
    trust = propagate_trust(graph, seeds)
    scored = save_graph(graph.with_scores(score=result.scores, trust=trust.trust),
                        graph_dir(work, CRAWL_TIMESTAMP), changed=["score", "trust"])
    ranked = time.perf_counter() - start
    write_scores(path, scored, {"crawl": CRAWL_TIMESTAMP, "nodes": scored.n,
                                "edges": scored.edges})
    stats = {"nodes": scored.n, "edges": scored.edges, "redirects": len(links.redirects),
             "graph_s": built, "linkrank_s": ranked, "iterations": result.iterations}
    stamp.write_text(json.dumps(stats))
    return stats


def anchored_index(first: Path, tier: str = "default", rebuild: bool = False,
                   cached: bool = False) -> tuple[Path, dict[str, float]]:
    """The index of a second crawl of the tier whose indexer has the first crawl's link scores
    (so anchor texts are boosted by their source's LinkRank)."""
    scores = scores_path(work_of(first), CRAWL_TIMESTAMP)

    def prepare(folder: Path) -> None:
        target = scores_path(folder, CRAWL_TIMESTAMP)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(scores, target)

    paths, stats = crawl_index(tier, 1, rebuild, variant="-anchors", prepare=prepare,
                               cached=cached)
    return paths[0], stats


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


def _report(name: str, run: dict[str, list[str]], queries: list[tuple[str, str]]
            ) -> dict[str, float]:
    mean = evaluate(run, CACHE / "runs" / f"yioopy-{name}.run")
    mean["odd"] = _half(run, queries, 1, f"{name}-odd")["MRR@10"]
    mean["even"] = _half(run, queries, 0, f"{name}-even")["MRR@10"]
    return mean


def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rebuild", action="store_true", help="crawl again")
    ap.add_argument("--cached", action="store_true",
                    help="reuse the newest cached crawls even if the crawler code changed")
    ap.add_argument("--anchors", action="store_true",
                    help="also crawl again with the link scores in place (anchor boosts)")
    ap.add_argument("--misses", action="store_true",
                    help="list the queries whose first result is not a right answer")
    args = ap.parse_args()
    paths, stats = crawl_index("default", 1, args.rebuild, cached=args.cached)
    bundle = paths[0]
    links = link_analysis(work_of(bundle))
    defaults = replace(SearchOptions(), min_results_to_group=MIN_RESULTS_TO_GROUP)
    weight = defaults.link_score_weight or 1.0
    off_options = replace(defaults, link_score_weight=0.0)
    on_options = replace(defaults, link_score_weight=weight)
    reader = IndexBundleReader(bundle)
    queries = load_queries()
    shard = LocalShard(reader)
    start = time.perf_counter()
    off_run = run_queries(Searcher([shard], off_options), queries)
    elapsed = time.perf_counter() - start
    scores = cached_link_scores(scores_path(work_of(bundle), CRAWL_TIMESTAMP))
    on_run = run_queries(Searcher([shard], on_options, link_scores=scores), queries)
    off = _report("off", off_run, queries)
    on = _report("on", on_run, queries)
    anchored_line = ""
    if args.anchors:
        anchored, anchored_stats = anchored_index(bundle, "default", args.rebuild, args.cached)
        a_scores = cached_link_scores(scores_path(work_of(anchored), CRAWL_TIMESTAMP))
        a_run = run_queries(Searcher([LocalShard(IndexBundleReader(anchored))], on_options,
                                     link_scores=a_scores), queries)
        a_mean = _report("on-anchors", a_run, queries)
        anchored_line = (f"crawl_time_anchors: {anchored_stats['build_s']:.1f} s\n"
                         f"MRR@10_links_on_anchors: {a_mean['MRR@10']:.4f} score\n"
                         f"Success@1_links_on_anchors: {a_mean['S@1']:.4f} score\n")
    default_on = defaults.link_score_weight > 0
    mean, run_name = (on, "on") if default_on else (off, "off")
    sys.stdout.write(
        f"pages: {stats['pages']} pages\n"
        f"index_documents: {stats['documents']} documents\n"
        f"crawl_time: {stats['build_s']:.1f} s\n"
        f"doc_map_entries: {reader.collection_stats().documents} entries\n"
        f"webgraph_nodes: {links['nodes']} nodes\n"
        f"webgraph_links: {links['edges']} links\n"
        f"webgraph_time: {links['graph_s']:.2f} s\n"
        f"linkrank_time: {links['linkrank_s']:.2f} s\n"
        f"link_score_weight: {weight:g} weight\n"
        f"queries: {len(queries)} queries\n"
        f"eval_time: {elapsed:.2f} s\n"
        f"MRR@10: {mean['MRR@10']:.4f} score\n"
        f"Success@1: {mean['S@1']:.4f} score\n"
        f"Success@10: {mean['S@10']:.4f} score\n"
        f"nDCG@10: {mean['nDCG@10']:.4f} score\n"
        f"MRR@10_odd: {mean['odd']:.4f} score\n"
        f"MRR@10_even: {mean['even']:.4f} score\n"
        f"MRR@10_links_off: {off['MRR@10']:.4f} score\n"
        f"MRR@10_links_on: {on['MRR@10']:.4f} score\n"
        f"Success@1_links_off: {off['S@1']:.4f} score\n"
        f"Success@1_links_on: {on['S@1']:.4f} score\n" + anchored_line)
    if args.misses:
        qrels = score.load_qrels(str(SHARED / "judgments" / "dev.tsv"))
        ranked = score.load_run(str(CACHE / "runs" / f"yioopy-{run_name}.run"))
        for qid, q in qrels.items():
            got = ranked.get(qid, [])
            hit = next((i + 1 for i, u in enumerate(got[:10]) if u in q["rel"]), None)
            if hit != 1:
                sys.stdout.write(f"# {qid} {q['query']!r} rank={hit} "
                                 f"want={sorted(q['rel'])[:1]} top={got[:2]}\n")
    met = mean["MRR@10"] >= TARGET_MRR
    sys.stdout.write(f"target: MRR@10 {mean['MRR@10']:.4f} (goal {TARGET_MRR}) "
                     f"{'met' if met else 'NOT met'}\n")
    better = max(on["MRR@10"], off["MRR@10"])
    sys.stdout.write(f"target: default link score weight ({defaults.link_score_weight:g}) "
                     f"MRR@10 {mean['MRR@10']:.4f} (goal the better of on and off, "
                     f"{better:.4f}) {'met' if mean['MRR@10'] >= better else 'NOT met'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
