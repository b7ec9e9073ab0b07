#!/usr/bin/env python
"""Archive crawls against the web crawl of the same pages, in one run (issue 21).

    .venv/bin/python bench/archive_bench.py [--fetchers 4] [--max-pages N] [--keep DIR]
                                            [--no-check] [--processes N]

In a fresh folder, with the engine's in-process crawl (``crawler.core.local_crawl.LocalCrawl``:
queue server, fetcher threads, the page processors, the indexer), as bench/relevance_eval.py
crawls (the local web's default tier, seeded with each site's root page, restricted to the
seeds' hosts, Page Options' defaults, ``--fetchers`` concurrent schedules, pages processed in
``--processes`` worker processes: by default one per core, as ``manage.py crawl`` does):

1. a web crawl of the tier, then what the engine does when a crawl ends (link analysis, index
   ordered by importance);
2. its WARC export (``crawler.core.archive.export``: WARC 1.1, a gzip member per record, CDXJ
   beside it), checked with ``warcio check`` and ``warcio index`` (``--no-check`` skips them);
3. an archive crawl of that WARC file, and 4. an archive crawl of the web crawl's stored pages,
   each with the same fetchers, schedules, seeds (link analysis' trust) and Page Options, each
   followed by link analysis and ordering;
5. the archive crawl of the WARC file again with its pages processed in the fetcher threads
   (one process), to show what the worker processes bring: ``from_warc_x_one_process``, the
   same pages over each crawl's time (target: at least 1.8x on two cores).

``--max-pages N`` stops the web crawl after N pages (a quicker run on part of the tier: the
archive crawls read what it stored). Printed (``name: value unit``): pages per second of each
crawl (records read per second for the archive crawls: nothing is downloaded; a redirect the
web crawl followed in one download is two records, so the targets compare the web crawl's pages
over each crawl's time: the same pages, the same documents indexed) and the CPU
seconds this process spent on it, export MB/s (MB of page bodies per second, and of
the file), sizes of the WARC file and of each index, and how many of the dev queries
(../shared/judgments/dev.tsv, answered as bench/relevance_eval.py answers them: the search
page's defaults and zero-result fallback) have the same top-10 urls in each archive crawl's
index as in the web crawl's. Targets: each archive crawl at least 2x the web crawl's pages per
second; the same top-10 for every dev query in both; warcio accepts the file; the archive crawl
of the WARC file with worker processes at least 1.8x as fast as in one process. CPU seconds
count this process and its worker processes.

Needs the local web (sh ../shared/localweb/start.sh; started here when it is not up).
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import relevance_eval as rel  # noqa: E402  (the local web, the queries, the search)

from crawler.core.archive.export import export_crawl  # noqa: E402
from crawler.core.archive.source import ArchiveKind, ArchiveSource  # noqa: E402
from crawler.core.definition.crawl import CrawlConfig, CrawlOrder, SeedSpec  # noqa: E402
from crawler.core.definition.schedules import LOCAL_SCHEDULE_SIZE  # noqa: E402
from crawler.core.definition.siterules import SiteRules  # noqa: E402
from crawler.core.http import FetchConfig  # noqa: E402
from crawler.core.local_crawl import LocalCrawl, LocalCrawlResult  # noqa: E402
from crawler.core.processing.config import PageProcessingConfig  # noqa: E402
from crawler.core.processing.process import PageProcessor  # noqa: E402
from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.policies import CrawlPolicy  # noqa: E402
from indexer.core.runtime.workdir import crawl_bundles, queue_server_number  # noqa: E402
from indexer.core.urls import url_host  # noqa: E402
from linkgraph.core import TrustSeed  # noqa: E402
from linkgraph.core.analysis import AnalysisConfig, LocalShardSource, run_link_analysis  # noqa: E402
from ranking.core.options import SearchOptions  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402

WEB, FROM_WARC, FROM_CRAWL, FROM_WARC_ONE = 1_700_000_000, 1_700_000_001, 1_700_000_002, \
    1_700_000_003
TARGET_SPEEDUP = 2.0
TARGET_PROCESSES_SPEEDUP = 1.8  # worker processes over one process, on two cores
MAX_SECONDS = 3600.0
WARCIO = Path(sys.executable).parent / "warcio"


def localweb_up() -> None:
    """Start the local web when nothing answers on its first host's address."""
    try:
        with socket.create_connection(("127.0.0.11", 443), timeout=2):
            return
    except OSError:
        subprocess.run(["sh", str(rel.SHARED / "localweb" / "start.sh")], check=True,
                       stdout=subprocess.DEVNULL)


def crawl_config(timestamp: int, name: str, archive: ArchiveSource | None,
                 max_pages: int = 0) -> CrawlConfig:
    seeds = rel.seed_urls("default")
    return CrawlConfig(crawl_id=timestamp - WEB + 1, timestamp=timestamp, name=name,
                       max_pages=max_pages,
                       order=CrawlOrder.HOST_BUDGETING, restrict_to_seeds=True,
                       site_rules=SiteRules(restrict=True, seed_hosts=frozenset(
                           url_host(url) for url in seeds)),
                       seeds=tuple(SeedSpec(url) for url in seeds),
                       page_options=rel.crawl_options("default"), archive=archive)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (the worker
    processes of a crawl's pool, once the crawl is closed)."""
    return sum(usage.ru_utime + usage.ru_stime for usage in (
        resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))


def run_crawl(work: Path, crawl: CrawlConfig, fetchers: int,
              processes: int | None) -> tuple[LocalCrawlResult, float]:
    """One crawl to its end, then link analysis and the index ordered by importance (what the
    engine does when a crawl ends); the crawl's own time is the result's ``elapsed``, and the
    CPU seconds the crawl took (its worker processes included) are returned with it."""
    options = crawl.page_options
    fetch = FetchConfig(allowed_networks=("127.0.0.0/8",), ca_bundle=str(rel.CA_BUNDLE),
                        user_agent=rel.USER_AGENT, byte_range=options.byte_range)
    processor = PageProcessor(replace(PageProcessingConfig.from_options(options),
                                      robot_name=rel.USER_AGENT.split("/")[0]))
    cpu = cpu_seconds()
    runner = LocalCrawl(crawl, work, fetch, processor, num_servers=1, fetchers=fetchers,
                        schedule_size=LOCAL_SCHEDULE_SIZE, refresh_seconds=5.0, processes=processes)
    try:
        result = runner.run(max_seconds=MAX_SECONDS)
    finally:
        runner.close()
    cpu = cpu_seconds() - cpu
    if not result.finished or not result.pages_fetched:
        raise SystemExit(f"{crawl.name}: the crawl did not finish ({result.pages_fetched} "
                         f"pages in {result.elapsed:.0f}s): is the local web up?")
    sources = [LocalShardSource(queue_server_number(p.parent.name), p)
               for p in crawl_bundles(work, crawl.timestamp)]
    seeds = [TrustSeed(s.url, CrawlPolicy.DEFAULT) for s in crawl.seeds]
    run_link_analysis(work, crawl.timestamp, sources, seeds, AnalysisConfig())
    runner.order_indexes()
    return result, cpu


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def top10(work: Path, timestamp: int, queries: list[tuple[str, str]]) -> dict[str, list[str]]:
    reader = IndexBundleReader(crawl_bundles(work, timestamp)[0])
    try:
        return rel.run_queries(Searcher([LocalShard(reader)], SearchOptions()), queries)
    finally:
        reader.close()


def warcio_accepts(path: Path) -> tuple[bool, bool, int]:
    """(``warcio check`` passes, ``warcio index`` lists every record, records listed)."""
    check = subprocess.run([str(WARCIO), "check", str(path)], capture_output=True, text=True)
    index = subprocess.run([str(WARCIO), "index", str(path)], capture_output=True, text=True)
    records = [json.loads(line) for line in index.stdout.splitlines() if line.strip()]
    return check.returncode == 0, index.returncode == 0 and bool(records), len(records)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fetchers", type=int, default=rel.FETCHERS,
                    help="concurrent schedules of every crawl (default: relevance_eval's)")
    ap.add_argument("--max-pages", type=int, default=0,
                    help="stop the web crawl after this many pages (0: the whole tier)")
    ap.add_argument("--keep", type=Path, default=None, help="work in this folder, kept")
    ap.add_argument("--no-check", action="store_true", help="skip warcio check and index")
    ap.add_argument("--processes", type=int, default=None,
                    help="worker processes of each crawl's page processing (default: one per "
                         "core, as manage.py crawl)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    localweb_up()
    work = args.keep or Path(tempfile.mkdtemp(prefix="archive-bench-"))
    if args.keep:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    try:
        return measure(work, args)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def measure(work: Path, args: argparse.Namespace) -> int:
    web, web_cpu = run_crawl(work, crawl_config(WEB, "web", None, args.max_pages),
                             args.fetchers, args.processes)
    warc = work / "export" / "web.warc.gz"
    report = export_crawl(crawl_bundles(work, WEB), warc, {"isPartOf": "archive_bench"})
    checked = warcio_accepts(warc) if not args.no_check else None
    from_warc, warc_cpu = run_crawl(work, crawl_config(FROM_WARC, "from-warc", ArchiveSource(
        ArchiveKind.WARC, str(warc))), args.fetchers, args.processes)
    from_crawl, crawl_cpu = run_crawl(work, crawl_config(FROM_CRAWL, "from-crawl", ArchiveSource(
        ArchiveKind.CRAWL, str(work), WEB)), args.fetchers, args.processes)
    one_process, one_cpu = run_crawl(work, crawl_config(FROM_WARC_ONE, "from-warc-1",
                                                        ArchiveSource(ArchiveKind.WARC,
                                                                      str(warc))),
                                     args.fetchers, 1)
    queries = rel.load_queries()
    runs = {ts: top10(work, ts, queries) for ts in (WEB, FROM_WARC, FROM_CRAWL)}
    same = {ts: sum(runs[ts][q] == runs[WEB][q] for q, _ in queries)
            for ts in (FROM_WARC, FROM_CRAWL)}
    rates = {name: r.pages_fetched / r.elapsed for name, r in
             (("web", web), ("from_warc", from_warc), ("from_crawl", from_crawl))}
    # the web crawl's pages over each crawl's time (see the module)
    same_pages = {name: web.pages_fetched / r.elapsed for name, r in
                  (("from_warc", from_warc), ("from_crawl", from_crawl))}
    mb = report.payload_bytes / 2 ** 20
    cpu = {"web": web_cpu, "from_warc": warc_cpu, "from_crawl": crawl_cpu}
    one_rate = web.pages_fetched / one_process.elapsed
    lines = [f"options: defaults, fetchers={args.fetchers}, one queue server, "
             f"processes={args.processes or 'one per core'}, "
             f"max_pages={args.max_pages or 'all'}",
             f"web_pages: {web.pages_fetched} pages ({web.documents_indexed} documents)",
             f"web_crawl_time: {web.elapsed:.1f} s",
             f"web_pages_per_s: {rates['web']:.1f} pages/s",
             f"web_cpu: {web_cpu:.1f} s ({web_cpu / web.pages_fetched * 1000:.1f} ms/page)",
             f"export_pages: {report.pages} pages, {report.redirects} redirects, "
             f"{report.left_out_total} left out",
             f"export_time: {report.seconds:.2f} s",
             f"export_MB_per_s: {mb / report.seconds:.1f} MB/s ({mb:.1f} MB of pages)",
             f"export_file_MB_per_s: {report.file_bytes / 2 ** 20 / report.seconds:.1f} MB/s",
             f"warc_file: {report.file_bytes / 2 ** 20:.1f} MB"]
    if checked is not None:
        lines.append(f"warcio_check: {'pass' if checked[0] else 'FAIL'}")
        lines.append(f"warcio_index: {checked[2]} records ({'pass' if checked[1] else 'FAIL'})")
    for name, result, ts in (("from_warc", from_warc, FROM_WARC),
                             ("from_crawl", from_crawl, FROM_CRAWL)):
        lines += [f"{name}_pages: {result.pages_fetched} pages "
                  f"({result.documents_indexed} documents)",
                  f"{name}_crawl_time: {result.elapsed:.1f} s",
                  f"{name}_cpu: {cpu[name]:.1f} s "
                  f"({cpu[name] / result.pages_fetched * 1000:.1f} ms/page)",
                  f"{name}_records_per_s: {rates[name]:.1f} records/s",
                  f"{name}_pages_per_s: {same_pages[name]:.1f} pages/s (the web crawl's "
                  f"pages in this crawl's time: {same_pages[name] / rates['web']:.2f}x)",
                  f"{name}_same_top10: {same[ts]} of {len(queries)} queries"]
    lines += [f"from_warc_one_process_crawl_time: {one_process.elapsed:.1f} s",
              f"from_warc_one_process_cpu: {one_cpu:.1f} s",
              f"from_warc_one_process_pages_per_s: {one_rate:.1f} pages/s",
              f"from_warc_x_one_process: {same_pages['from_warc'] / one_rate:.2f} x"]
    for name, ts in (("web", WEB), ("from_warc", FROM_WARC), ("from_crawl", FROM_CRAWL)):
        lines.append(f"{name}_index_size: "
                     f"{folder_bytes(crawl_bundles(work, ts)[0]) / 2 ** 20:.1f} MB")
    sys.stdout.write("\n".join(lines) + "\n")
    targets = [(f"{name} pages/s {same_pages[name]:.1f} against the web crawl's "
                f"{rates['web']:.1f} (goal >= {TARGET_SPEEDUP}x)",
                same_pages[name] >= TARGET_SPEEDUP * rates["web"])
               for name in ("from_warc", "from_crawl")]
    targets += [(f"{name} same top-10 urls as the web crawl {same[ts]}/{len(queries)} "
                 f"(goal {len(queries)})", same[ts] == len(queries))
                for name, ts in (("from_warc", FROM_WARC), ("from_crawl", FROM_CRAWL))]
    speedup = same_pages["from_warc"] / one_rate
    targets.append((f"from_warc with worker processes over one process {speedup:.2f}x "
                    f"(goal >= {TARGET_PROCESSES_SPEEDUP}x)",
                    speedup >= TARGET_PROCESSES_SPEEDUP))
    if checked is not None:
        targets.append(("warcio check and index accept the export", checked[0] and checked[1]))
    for text, met in targets:
        sys.stdout.write(f"target: {text} {'met' if met else 'NOT met'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
