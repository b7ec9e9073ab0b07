"""Relevance of the search the defaults give, on the local web's default tier, with the shared
scorer; Whoosh and tantivy on the same pages in the same run; both ways (issue 36): the local
web as it is, and with its back-of-book index pages hidden.

A crawl of the default tier by the engine's own in-process crawl
(``crawler.core.local_crawl.LocalCrawl``, as ``manage.py crawl`` runs it: queue server, Host
Budgeting scheduler, fetcher threads over HTTPS to the local web, robots.txt obeyed, the page
processor, the indexer), seeded with each site's root page ``https://<host>/`` and restricted
to the seeds' hosts, with Page Options' defaults (``CrawlTimeOptions()``, which a test keeps
equal to the admin's default profile). When it ends, what the engine does by itself: link
analysis (``run_link_analysis``: web graph, Loops, LinkRank, trust from the seeds, scores), then
each queue server orders its index by importance and rebuilds its phrase lexicon. The index is
cached under /tmp, keyed by a hash of crawler/core and indexer/core and by the crawl's options,
so reruns only search.

Two modes (``--modes``, default both), each with its own crawl, cached apart
(:mod:`relevance_modes`): ``as-is``, and ``hidden``, crawled from a copy of the local web (a
second nginx of our own on 127.0.1.N, started for that crawl only) whose index pages (Sphinx
``genindex``, the module indexes, PostgreSQL's ``bookindex``) answer 404; the shared local web
is never switched. The judged queries come from those pages, so the hidden mode measures
ranking by content.

For each mode it answers ../shared/judgments/dev.tsv as the search page does
(``SearchOptions()``, the zero-result fallback) and prints MRR@10, Success@1, Success@10,
nDCG@10, the share of queries without a result, the odd and even halves, figures per query kind
(the scorer's ``--by-kind``), and Whoosh (BM25F, words analyzer) and tantivy (BM25), AND and
OR, over the pages that mode's crawl indexed (../shared/peers/, in their own virtual
environment), then a table per kind of the engine beside the peers (the hidden mode's lines
start with ``hidden_``). Then the signal ledger (:mod:`signal_ledger`): the dev MRR@10 of each
mode with each default-on signal turned off, at query time where a Search Time option holds
it, by one more cached crawl per mode where it is build-time only (``--no-build-ledger``
leaves those out, ``--no-ledger`` the whole ledger).

``--option NAME=VALUE`` (repeatable) overrides a Crawl Time or Search Time option, or the
indexing plugins (``--option
indexing_plugins=crawler.core.processing.plugins.api_names.ApiNamesPlugin``,
comma-separated dotted paths, empty for none; unset: the engine's default,
``crawler.core.processing.config.DEFAULT_INDEXING_PLUGINS``): the figures then measure something
else, and the ``options:`` line and every ``target:`` line say so.

The semantic signal (``bench/semantic_eval.py``): MRR@10 overall and per query kind with it off
and on (``--semantic-weight W``, default 1), and the query p95 of each, after embedding the
as-is crawl's pages once (cached beside the index); ``--no-semantic`` leaves it out.

Usage: ``.venv/bin/python bench/relevance_eval.py`` (``--rebuild`` to crawl again, ``--misses``
to list the queries whose answer is not first, ``--cached`` to reuse the newest cached crawls
even if crawler/indexer code changed since, ``--no-peers``). Needs the local web
(sh ../shared/localweb/start.sh) and, for the hidden mode, nginx (run as root here).
Targets (issue 36, :mod:`relevance_report`): as is, MRR@10 >= 0.93; hidden, MRR@10 >= 0.91,
the concept kind >= 0.75 and no kind below Whoosh's (AND); both, Success@10 >= 0.95, no query
without a result, and MRR@10 at least each peer's (AND).
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
from dataclasses import fields, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from relevance_modes import MODES, VARIANT, check_as_is, hidden_web  # noqa: E402
from relevance_report import figure_lines, kind_table, mode_targets  # noqa: E402
from semantic_eval import DEFAULT_WEIGHT, semantic_lines  # noqa: E402
from signal_ledger import QUERY, SIGNALS, Signal, ledger_lines, measure  # noqa: E402

from crawler.core.definition.crawl import CrawlConfig, CrawlOrder, CrawlTimeOptions, SeedSpec  # noqa: E402
from crawler.core.definition.schedules import LOCAL_SCHEDULE_SIZE  # noqa: E402
from crawler.core.definition.siterules import SiteRules  # noqa: E402
from crawler.core.http import FetchConfig  # noqa: E402
from crawler.core.local_crawl import LocalCrawl  # noqa: E402
from crawler.core.processing.config import PageProcessingConfig  # noqa: E402
from crawler.core.processing.process import PageProcessor  # noqa: E402
from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.ids import DOC_TYPE, DocType  # noqa: E402
from indexer.core.policies import CrawlPolicy  # noqa: E402
from indexer.core.runtime.workdir import crawl_bundles, queue_server_number, scores_path  # noqa: E402
from indexer.core.urls import url_host  # noqa: E402
from linkgraph.core import TrustSeed  # noqa: E402
from linkgraph.core.analysis import (  # noqa: E402
    AnalysisConfig,
    LocalShardSource,
    run_link_analysis,
)
from ranking.core.options import SearchOptions  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.search.relax import search_with_fallback  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402

SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
sys.path.insert(0, str(SHARED / "localweb"))
sys.path.insert(0, str(SHARED / "judgments"))
import score  # noqa: E402
import sites  # noqa: E402

CACHE = Path(os.environ.get("BENCH_CACHE", "/tmp/yioopy-bench"))
JUDGMENTS = SHARED / "judgments" / "dev.tsv"  # the dev judgments (qid, query, urls, source, kind)
CA_BUNDLE = SHARED / "localweb" / "build" / "tls" / "cert.pem"
BUILD_VERSION = "4"
# The crawl and the search use the defaults a user gets: Page Options' defaults (whole pages
# indexed, the default links per page and byte range, "minimum results to group" 200...), the
# link analysis the engine runs by itself at the end of a crawl. ``--option NAME=VALUE`` (Crawl
# Time or Search Time option) measures something else, and every figure printed then says so
# on its ``options:`` line. The crawl is seeded with each site's root page, in Host Budgeting
# order, restricted to the seeds' hosts (the manuals' links to the real web cannot be fetched
# here): those are the crawl's settings, not Page Options.
OVERRIDES: dict[str, str] = {}
CRAWL_TIMESTAMP = 1_700_000_000
USER_AGENT = "YioopyBench/0.1"
FETCHERS = 4
MAX_CRAWL_SECONDS = 3600.0  # the large tier: 44,000 pages


def _coerce(value: str, default: object) -> object:
    if isinstance(default, bool):
        return value.lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    return type(default)(value) if default is not None else value


def _overridden(options: object, names: set[str]) -> object:
    values = {k: _coerce(v, getattr(options, k)) for k, v in OVERRIDES.items() if k in names}
    return replace(options, **values) if values else options  # type: ignore[type-var]


# options of page processing that are neither Crawl Time nor Search Time options (settings)
PROCESSING_OPTIONS = ("indexing_plugins",)


def processing_overrides() -> dict[str, object]:
    """``PageProcessingConfig`` overrides from ``--option``: the indexing plugins."""
    if "indexing_plugins" not in OVERRIDES:
        return {}
    return {"indexing_plugins": tuple(p.strip() for p in OVERRIDES["indexing_plugins"]
                                      .split(",") if p.strip())}


def search_options() -> SearchOptions:
    """Search Time options: the defaults, with ``--option`` overrides."""
    return _overridden(SearchOptions(), {f.name for f in fields(SearchOptions)})  # type: ignore


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
    """The Page Options (Crawl Time) of the bench's crawl: the defaults, with ``--option``
    overrides (the same for both tiers)."""
    return _overridden(CrawlTimeOptions(), {f.name for f in fields(CrawlTimeOptions)})  # type: ignore


def options_line() -> str:
    """What the figures were measured with: ``defaults`` or the overridden options."""
    if not OVERRIDES:
        return "defaults"
    return " ".join(f"{k}={v}" for k, v in sorted(OVERRIDES.items()))


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
                  cached: bool = False, processing: dict[str, object] | None = None) -> Path:
    # the crawl's Page Options are part of what it fetches and indexes
    processing = processing_overrides() if processing is None else processing
    key = hashlib.sha1(f"{_code_version()}|{tier}|{servers}|{' '.join(seeds)}|"
                       f"{crawl_options(tier)!r}{processing or ''}".encode()).hexdigest()[:10]
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
                cached: bool = False, processing: dict[str, object] | None = None,
                host_overrides: dict[str, str] | None = None
                ) -> tuple[list[Path], dict[str, float]]:
    """The cached index bundles (one per queue server) of a crawl of the tier by the engine's
    in-process crawler (crawled when missing) and the crawl's statistics. ``variant`` names
    another cache folder; ``prepare(folder)`` runs before its crawl starts; ``cached`` reuses
    the newest crawl of that name whatever the code version; ``processing``: page processing
    options (default: ``--option``'s, :func:`processing_overrides`); ``host_overrides``: host
    name -> address the fetchers use instead of /etc/hosts."""
    seeds = seed_urls(tier)
    if not seeds:
        raise SystemExit("no local-web pages on disk: install the tier's packages "
                         "(sh ../shared/localweb/setup.sh as root)")
    processing = processing_overrides() if processing is None else processing
    folder = _crawl_folder(tier, servers, seeds, variant, cached and not rebuild, processing)
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
                            url_host(url) for url in seeds)),
                        seeds=tuple(SeedSpec(url) for url in seeds), page_options=options)
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), ca_bundle=str(CA_BUNDLE),
                        user_agent=USER_AGENT, byte_range=options.byte_range,
                        host_overrides=dict(host_overrides or {}))
    processor = PageProcessor(replace(
        PageProcessingConfig.from_options(options, **processing),
        robot_name=USER_AGENT.split("/")[0]))
    # pages processed in one worker process per core, as manage.py crawl does
    runner = LocalCrawl(crawl, folder, fetch, processor, num_servers=servers, fetchers=FETCHERS,
                        schedule_size=LOCAL_SCHEDULE_SIZE, refresh_seconds=5.0, processes=None)
    try:
        result = runner.run(max_seconds=MAX_CRAWL_SECONDS)
    finally:
        runner.close()
    if not result.finished or not result.pages_fetched:
        raise SystemExit(f"the crawl did not finish ({result.pages_fetched} pages fetched in "
                         f"{result.elapsed:.0f}s): is the local web up? "
                         "(sh ../shared/localweb/start.sh)")
    # what the engine does by itself when a crawl ends: link analysis, then each queue
    # server orders its index by importance and rebuilds its phrase lexicon
    analysis = link_analysis(folder, tier)
    start = time.perf_counter()
    ordered = runner.order_indexes()
    analysis["order_s"] = time.perf_counter() - start
    analysis["ordered_partitions"] = len(ordered)
    stats = {"pages": result.pages_fetched, "documents": result.documents_indexed,
             "scored": scores_path(folder, CRAWL_TIMESTAMP).exists(), "analysis": analysis,
             "fetch_errors": sum(int(s.get("fetch_errors", 0)) for s in result.stats),
             "build_s": result.elapsed, "index": [str(p) for p in result.index_paths]}
    stamp.write_text(json.dumps(stats))
    return list(result.index_paths), stats


def work_of(bundle: Path) -> Path:
    """The crawl folder (the engine's work directory) of a ``<work>/qs<n>/IndexData<ts>``."""
    return bundle.parent.parent


def link_analysis(work: Path, tier: str = "default") -> dict[str, float]:
    """The engine's link analysis of the crawl in ``work`` (``run_link_analysis`` with the
    defaults the ``analysis`` worker uses: Loops on, trust from the seeds, all ``default``
    policy here). Returns timings and sizes."""
    bundles = crawl_bundles(work, CRAWL_TIMESTAMP)
    sources = [LocalShardSource(queue_server_number(path.parent.name), path) for path in bundles]
    seeds = [TrustSeed(url, CrawlPolicy.DEFAULT) for url in seed_urls(tier)]
    report = run_link_analysis(work, CRAWL_TIMESTAMP, sources, seeds, AnalysisConfig())
    return {"nodes": report.urls, "edges": report.edges, "analysis_s": report.seconds}


def load_queries(path: Path | None = None) -> list[tuple[str, str]]:
    """(qid, query) of every judged query of ``path`` (default :data:`JUDGMENTS`)."""
    out = []
    with open(path or JUDGMENTS, encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            qid, query = line.split("\t")[:2]
            out.append((qid, query))
    return out


def run_queries(searcher: Searcher, queries: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The top 10 urls of each query as the search page answers it: a query with no page
    holding every word falls back to the pages with most of them
    (:func:`ranking.core.search.relax.search_with_fallback`; the spelling correction, which reads the
    database's lexicon, is left out)."""
    return {qid: [r.url for r in search_with_fallback(searcher, q, num=10,
                                                      snippets=False).results]
            for qid, q in queries}


def write_run(run: dict[str, list[str]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for qid, urls in run.items():
            for rank, url in enumerate(urls, 1):
                handle.write(f"{qid}\t{rank}\t{url}\n")
    return path


def evaluate(run: dict[str, list[str]], path: Path, only: set[str] | None = None,
             judgments: Path | None = None) -> dict[str, float]:
    """The shared scorer's means of ``run`` (written to ``path``) against ``judgments``
    (default :data:`JUDGMENTS`), over the queries ``only`` when given."""
    write_run(run, path)
    qrels = score.load_qrels(str(judgments or JUDGMENTS))
    if only is not None:
        qrels = {qid: q for qid, q in qrels.items() if qid in only}
    mean, _ = score.score(qrels, score.load_run(str(path)))
    return mean


def by_kind(run_path: Path) -> dict[str, dict[str, float]]:
    """The scorer's means per query kind (``score.py --by-kind``), with each kind's size."""
    qrels = score.load_qrels(str(SHARED / "judgments" / "dev.tsv"))
    ranked = score.load_run(str(run_path))
    kinds: dict[str, dict[str, dict]] = {}
    for qid, q in qrels.items():
        kinds.setdefault(q["kind"], {})[qid] = q
    out = {}
    for kind, sub in sorted(kinds.items()):
        mean, _ = score.score(sub, ranked)
        out[kind] = dict(mean, n=len(sub))
    return out


def kinds_of(run: dict[str, list[str]], name: str) -> dict[str, dict[str, float]]:
    """A run's means over every query (``all``) and per query kind."""
    path = write_run(run, CACHE / "runs" / f"yioopy-{name}.run")
    qrels = score.load_qrels(str(SHARED / "judgments" / "dev.tsv"))
    mean, _ = score.score(qrels, score.load_run(str(path)))
    return {"all": dict(mean, n=len(qrels)), **by_kind(path)}


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
    mean["no_result"] = sum(1 for urls in run.values() if not urls) / max(len(run), 1)
    return mean


def crawled_urls(bundle: Path) -> set[str]:
    """The urls of the page documents the crawl indexed."""
    reader = IndexBundleReader(bundle)
    urls: set[str] = set()
    try:
        for part in reader.partitions:
            ids = part.doc_map.member_ids
            for row in ids[ids[:, DOC_TYPE] == DocType.PAGE]:
                summary = reader.summary(bytes(row))
                if summary and summary.get("url"):
                    urls.add(str(summary["url"]))
    finally:
        reader.close()
    return urls


def peers_on(bundle: Path, tier: str = "default") -> dict[str, dict]:
    """Whoosh (BM25F, words analyzer) and tantivy (BM25) on the pages this crawl indexed, as
    ../shared/peers/ measures them (AND and OR; the AND figures are the comparison), with
    their AND run's means per query kind (``kinds``)."""
    import query_bench as qb  # the peers' venv and corpus extraction live there

    crawled = crawled_urls(bundle)
    docs = CACHE / f"docs-crawled-{bundle.parent.parent.name}.jsonl"
    if not docs.exists():
        every = qb.docs_jsonl(tier)
        with open(every, encoding="utf-8") as src, \
                open(docs.with_suffix(".tmp"), "w", encoding="utf-8") as out:
            for line in src:
                if json.loads(line)["url"] in crawled:
                    out.write(line)
        os.replace(docs.with_suffix(".tmp"), docs)
    # Whoosh with its "words" analyzer (every non-word character splits: os.path.join is
    # three words), the stronger of its two on these pages (../shared/judgments/README.md)
    peers = {name: result for name, extra in (("whoosh", ("--analyzer", "words")),
                                              ("tantivy", ()))
             if (result := qb.peer_eval(name, docs, tier, extra)) is not None}
    for result in peers.values():  # the AND run's means per kind, beside the whole run's
        result["kinds"] = {"all": dict(result["and"], n=len(load_queries())),
                           **by_kind(SHARED / result["and"]["run"])}
    return peers


def parse_args() -> argparse.Namespace:
    """The command line; ``--option`` overrides go into ``OVERRIDES`` (unknown names exit)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rebuild", action="store_true", help="crawl again")
    ap.add_argument("--cached", action="store_true",
                    help="reuse the newest cached crawls even if the crawler code changed")
    ap.add_argument("--misses", action="store_true",
                    help="list the queries whose first result is not a right answer")
    ap.add_argument("--no-peers", action="store_true", help="leave Whoosh and tantivy out")
    ap.add_argument("--no-semantic", action="store_true",
                    help="leave out the comparison with the semantic signal on")
    ap.add_argument("--semantic-weight", type=float, default=DEFAULT_WEIGHT, metavar="W",
                    help=f"the semantic signal's weight when on (default {DEFAULT_WEIGHT:g})")
    ap.add_argument("--modes", choices=("both", *MODES), default="both",
                    help="the local web as it is, with its index pages hidden, or both")
    ap.add_argument("--no-ledger", action="store_true", help="leave out the signal ledger")
    ap.add_argument("--no-build-ledger", action="store_true",
                    help="leave the build-time signals out of the ledger (one crawl each)")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="override a Crawl Time or Search Time option, or indexing_plugins "
                         "(dotted paths, comma-separated) (not the defaults!)")
    args = ap.parse_args()
    for item in args.option:
        name, _, value = item.partition("=")
        OVERRIDES[name.strip()] = value.strip()
    unknown = set(OVERRIDES) - {f.name for f in fields(CrawlTimeOptions)} - {
        f.name for f in fields(SearchOptions)} - set(PROCESSING_OPTIONS)
    if unknown:
        raise SystemExit(f"unknown options: {sorted(unknown)}")
    return args


def run_label(mode: str = "as-is") -> str:
    """The name of the run file of the main configuration (``defaults`` or ``options``, and
    ``-hidden`` for the mode with the index pages hidden)."""
    return ("defaults" if not OVERRIDES else "options") + VARIANT[mode]


def mode_crawl(mode: str, rebuild: bool = False, cached: bool = False,
               processing: dict[str, object] | None = None, variant: str = ""
               ) -> tuple[list[Path], dict[str, float]]:
    """The cached crawl of the default tier in ``mode`` (:data:`relevance_modes.MODES`),
    crawled when missing: in the hidden mode from a copy of the local web that hides its
    index pages, started for the time of the crawl only (:func:`relevance_modes.hidden_web`),
    in the as-is mode after checking that the local web serves them. Each mode (and ``variant``) has its own cache folder."""
    name = VARIANT[mode] + variant
    processing = processing_overrides() if processing is None else processing
    folder = _crawl_folder("default", 1, seed_urls(), name, cached and not rebuild, processing)
    if (folder / "BUILT.json").exists() and not rebuild:
        return crawl_index("default", 1, False, name, cached=cached, processing=processing)
    if mode == "hidden":
        with hidden_web() as hosts:
            return crawl_index("default", 1, True, name, processing=processing,
                               host_overrides=hosts)
    check_as_is()
    return crawl_index("default", 1, True, name, processing=processing)


class Mode:
    """One mode's crawl, its shard and the main run's figures."""

    def __init__(self, mode: str, args: argparse.Namespace, options: SearchOptions) -> None:
        self.mode, self.args, self.options = mode, args, options
        paths, self.stats = mode_crawl(mode, args.rebuild, args.cached)
        self.bundle = paths[0]
        self.reader = IndexBundleReader(self.bundle)
        self.shard = LocalShard(self.reader)
        self.queries = load_queries()
        start = time.perf_counter()
        self.run = run_queries(Searcher([self.shard], options), self.queries)
        self.elapsed = time.perf_counter() - start
        self.mean = _report(run_label(mode), self.run, self.queries)
        self.kinds = kinds_of(self.run, run_label(mode))
        self.peers = {} if args.no_peers else peers_on(self.bundle)

    def prefix(self, lines: list[str]) -> list[str]:
        """``lines`` named for the mode: the as-is figures keep their names, the hidden
        mode's start with ``hidden_``."""
        return lines if self.mode == "as-is" else [f"hidden_{line}" for line in lines]

    def lines(self) -> list[str]:
        lines = figure_lines(options_line(), self.stats, self.reader, self.queries, self.elapsed,
                             self.mean, self.kinds)
        for name, result in self.peers.items():
            for way in ("and", "or"):
                lines.append(f"{name}_{way}_MRR@10: {result[way]['MRR@10']:.4f} score")
            lines.append(f"{name}_and_Success@10: {result['and']['S@10']:.4f} score")
            lines.append(f"{name}_docs: {result['docs']} documents")
        return self.prefix(lines)

    def table(self) -> list[str]:
        systems = {"this engine": self.kinds, **{f"{name} AND": result["kinds"]
                                                 for name, result in self.peers.items()}}
        return kind_table(f"{self.mode} [options: {options_line()}]", systems)

    def off_mrr(self, signal: Signal) -> float:
        """MRR@10 with ``signal`` off: searched again (query time) or on its own crawl."""
        name = f"ledger-{signal.slug}{VARIANT[self.mode]}"
        if signal.when == QUERY:
            shard, options = self.shard, replace(self.options, **signal.off)
        else:
            paths, _ = mode_crawl(self.mode, self.args.rebuild, self.args.cached,
                                  {**processing_overrides(), **signal.off}, signal.variant)
            shard, options = LocalShard(IndexBundleReader(paths[0])), self.options
        return evaluate(run_queries(Searcher([shard], options), self.queries),
                        CACHE / "runs" / f"yioopy-{name}.run")["MRR@10"]


def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    args = parse_args()
    options = search_options()
    modes = {m: Mode(m, args, options) for m in (MODES if args.modes == "both" else
                                                 (args.modes,))}
    lines: list[str] = []
    for mode in modes.values():
        lines += mode.lines()
        if mode.mode == "as-is" and not args.no_semantic:
            lines += semantic_lines(mode.shard, options, mode.queries, args.semantic_weight,
                                    kinds_of)
    sys.stdout.write("\n".join(lines) + "\n\n")
    for mode in modes.values():
        sys.stdout.write("\n".join(mode.table()) + "\n")
    if not args.no_ledger:
        signals = [s for s in SIGNALS if s.when == QUERY or not args.no_build_ledger]
        entries = measure(list(modes), lambda m, s: modes[m].off_mrr(s), signals)
        base = {m: mode.mean["MRR@10"] for m, mode in modes.items()}
        sys.stdout.write("\n".join(ledger_lines(entries, base)) + "\n")
    for mode in modes.values():
        if args.misses:
            report_misses(mode.mode)
        report_targets(mode)
    return 0


def report_misses(mode: str = "as-is") -> None:
    """One ``#`` line per query whose first result is not a right answer."""
    qrels = score.load_qrels(str(SHARED / "judgments" / "dev.tsv"))
    ranked = score.load_run(str(CACHE / "runs" / f"yioopy-{run_label(mode)}.run"))
    for qid, q in qrels.items():
        got = ranked.get(qid, [])
        hit = next((i + 1 for i, u in enumerate(got[:10]) if u in q["rel"]), None)
        if hit != 1:
            sys.stdout.write(f"# {mode} {qid} [{q['kind']}] {q['query']!r} rank={hit} "
                             f"want={sorted(q['rel'])[:1]} top={got[:2]}\n")


def report_targets(mode: Mode) -> None:
    """The ``target:`` lines of a mode (:func:`mode_targets`)."""
    label = f" [{mode.mode}" + ("]" if not OVERRIDES else f"; options: {options_line()}]")
    for name, value, goal, met in mode_targets(mode.mode, mode.mean, mode.kinds, mode.peers):
        sys.stdout.write(f"target: {name}{label} {value:.4f} (goal {goal}) "
                         f"{'met' if met else 'NOT met'}\n")


if __name__ == "__main__":
    sys.exit(main())
