"""How build speed, index size, writer memory, open time and query latency grow with the index.

Usage: ``python bench/scale_bench.py [--docs 100000,300000,1000000] [--runs N] [--work DIR]
[--keep]``. The default, ``--docs 100000``, takes a few minutes on a 2-core machine.

For each size N, the first N pages of the synthetic web of ``bench/synthetic_corpus.py`` (fixed
seed: Zipf-Mandelbrot vocabulary, log-normal page lengths, Pareto host sizes, power-law link
graph; page documents made by the crawler's own code) are indexed as a queue server indexes
them: by :class:`indexer.core.bundle.writer.IndexBundleWriter` in batches of 400 (one fetcher
shipment each), partitions of 50,000 documents (``INDEX_PARTITION_DOCUMENTS``' default), with
the dictionary updater (``python -m indexer.core.dictionary.updater --loop``) running beside it in its
own process, as the queue server runs it. Left out, as the numbers are of the index alone: the
queue server's periodic refreshes of the active partition (at most 15 % of its time), the
re-order of finished partitions by link analysis' scores and the phrase lexicon built at the
end of a crawl. Twice:

* ``1shard``: one bundle of all N pages, one writer process;
* ``2shards``: the pages split by host between two bundles (as a crawl splits them between two
  queue servers), their two writer processes running at the same time; searched together
  through one :class:`~ranking.core.search.pipeline.Searcher` over two
  :class:`~ranking.core.shard.local.LocalShard` s.

The writer runs in a child process of its own, which generates its pages too (page generation
is timed apart and left out of the build rate). Per size and configuration it prints:

* ``build``: documents per second from the first append until the dictionary has merged the
  last partition (appends, partition closes, and the wait for the last merges; with two shards,
  all documents over the wall time of the slower writer);
* ``bytes_per_doc``: the bundle's files on disk (stored summaries, doc_map, positions,
  postings, dictionary) over N;
* ``writer_peak_rss`` (the writer process's peak resident memory, its ``VmHWM``; its page
  generator included, ``writer_start_rss`` is what it held before the first append) and
  ``updater_peak_rss``;
* ``open``: opening the bundle's reader and its shard (median of 5);
* ``query_p50/p95/p99``: the fixed query mix of ``synthetic_corpus.query_mix`` (200 queries:
  50 each of one, two and three words, and phrases; frequent and rare words), top 10 with
  snippets, one thread, warm; each percentile the median of ``--runs`` passes; then the
  p50 and p95 of each kind of query (``one_word``, ``two_words``, ``three_words``,
  ``phrase``; all passes pooled); ``query_cpu_*`` and ``query_cpu_<kind>_*``: the same of
  the queries' CPU times (on a machine shared with other work, wall times also count the
  waits for a core; the load average is printed before and after the runs).

Then one ``target:`` line each, at the largest size run: single-shard query p95 <= 50 ms, writer
peak RSS < 2 GB, and per-document build time at the largest size over the smallest (goal <= 1.25:
no faster than linear growth of the total, allowing for a shared machine's noise). Nothing is
reused between runs: every bundle is built afresh in a temporary folder (``--work`` to choose
it, ``--keep`` to leave the bundles there), unless ``--reuse`` says to search the bundles an
earlier ``--keep`` run left in ``--work`` (its build figures are printed again, from the record
it left: ``<size>_<config>.build.json``). ``--shards 1`` runs the one-shard configuration
only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from index_bench import BATCH, dir_size  # noqa: E402
from latency import measure, percentiles, report_percentiles  # noqa: E402
from synthetic_corpus import QUERY_KINDS, Corpus, page_document, query_mix  # noqa: E402

from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter  # noqa: E402
from indexer.core.dictionary.updater import DictionaryUpdater  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402

PARTITION_DOCS = 50_000  # searchsite.settings INDEX_PARTITION_DOCUMENTS' default
TARGET_P95_MS = 50.0
TARGET_RSS_BYTES = 2 * 1024 ** 3
TARGET_GROWTH = 1.25
MIB = 1024 * 1024


def rss_bytes(field: str = "VmRSS") -> int:
    """This process's resident memory now (``VmRSS``) or at its peak (``VmHWM``)."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def wait_rusage(proc: subprocess.Popen) -> int:
    """Reap ``proc`` (a process with no children of its own); its peak resident memory in
    bytes (``ru_maxrss`` of wait4)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss * 1024


def build_child(bundle: Path, total: int, shard: int, shards: int) -> dict[str, float]:
    """Index shard ``shard`` of ``shards`` of the first ``total`` pages into ``bundle`` (in the
    writer's child process; the dictionary updater in a grandchild). Timings in seconds."""
    corpus = Corpus(total)
    writer = IndexBundleWriter(bundle, BundleConfig(max_partition_docs=PARTITION_DOCS,
                                                    refresh_every_docs=0))
    updater = subprocess.Popen(
        [sys.executable, "-m", "indexer.core.dictionary.updater", str(bundle), "--loop", "--poll", "1",
         "--parent", str(os.getpid())], cwd=HERE.parent, stdin=subprocess.DEVNULL)
    start_rss = rss_bytes()
    generate = append = 0.0
    docs = 0
    batch = []
    started = time.perf_counter()
    for page in corpus.pages(shard, shards):
        t = time.perf_counter()
        batch.append(page_document(page))
        generate += time.perf_counter() - t
        if len(batch) == BATCH:
            t = time.perf_counter()
            docs += writer.append(batch)
            append += time.perf_counter() - t
            batch = []
    t = time.perf_counter()
    docs += writer.append(batch)
    append += time.perf_counter() - t
    writer.close_partition()
    writer.close()
    waiter = DictionaryUpdater(bundle)
    while waiter.pending():
        time.sleep(0.05)
    finish = time.perf_counter() - t
    wall = time.perf_counter() - started
    updater.send_signal(signal.SIGTERM)
    updater_rss = wait_rusage(updater)
    return {"docs": docs, "generate_s": generate, "append_s": append, "finish_s": finish,
            "build_s": wall - generate, "start_rss": start_rss, "updater_rss": updater_rss,
            "writer_rss": rss_bytes("VmHWM")}


def build(bundle: Path, total: int, shard: int = 0, shards: int = 1) -> subprocess.Popen:
    """Start the writer child for one bundle (see :func:`build_child`)."""
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(bundle), "--docs",
         str(total), "--shard", f"{shard}/{shards}"],
        cwd=HERE.parent, stdout=subprocess.PIPE, text=True)


def finish_build(proc: subprocess.Popen) -> dict[str, float]:
    """Wait for a writer child; its figures (``writer_rss``: its own peak, ``VmHWM``, not
    that of the updater it started, which ``wait4`` would mix in)."""
    out = proc.stdout.read() if proc.stdout else ""
    if proc.wait() != 0:
        raise SystemExit(f"the writer process failed (exit {proc.returncode})")
    return json.loads(out.strip().splitlines()[-1])


def open_shards(bundles: list[Path]) -> tuple[list[LocalShard], float]:
    """The bundles' shards, and the median time to open them all (5 tries)."""
    times = []
    for _ in range(5):
        t = time.perf_counter()
        readers = [IndexBundleReader(b) for b in bundles]
        [LocalShard(r, name=f"qs{i}") for i, r in enumerate(readers)]
        times.append(time.perf_counter() - t)
        for r in readers:
            r.close()
    readers = [IndexBundleReader(b) for b in bundles]
    return [LocalShard(r, name=f"qs{i}") for i, r in enumerate(readers)], \
        statistics.median(times)


def query_figures(searcher: Searcher, queries: list[str], runs: int
                  ) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Percentiles of the whole mix (each the median over ``runs`` passes) and of each kind
    of query (its latencies of all passes pooled), in ms; the same of the queries' CPU times
    under the keys ``cpu`` (whole mix) and ``cpu_<kind>``."""
    cpus: list[list[float]] = [[] for _ in range(max(1, runs))]
    passes = [measure(searcher, queries, True, cpu) for cpu in cpus]
    each = len(queries) // len(QUERY_KINDS)

    def summary(runs_of: list[list[float]]) -> tuple[dict[str, float], dict[str, dict]]:
        per_pass = [percentiles(p) for p in runs_of]
        overall = {k: sorted(p[k] for p in per_pass)[len(per_pass) // 2] for k in per_pass[0]}
        kinds = {kind: percentiles([x for p in runs_of for x in p[i * each:(i + 1) * each]])
                 for i, kind in enumerate(QUERY_KINDS)}
        return overall, kinds

    overall, kinds = summary(passes)
    cpu_overall, cpu_kinds = summary(cpus)
    kinds["cpu"] = cpu_overall
    kinds.update({f"cpu_{k}": v for k, v in cpu_kinds.items()})
    return overall, kinds


def built_or_build(work: Path, name: str, total: int, shards: int,
                   reuse: bool) -> tuple[list[Path], list[dict[str, float]]]:
    """The configuration's bundles and their build figures: with ``reuse``, those of an
    earlier ``--keep`` run in ``work`` when its record ``NAME.build.json`` (written once
    every writer of the configuration has finished) is there; else built afresh."""
    bundles = [work / f"{name}_qs{k}" for k in range(shards)]
    record = work / f"{name}.build.json"
    if reuse and record.exists() and all(b.is_dir() for b in bundles):
        print(f"{name}: reusing the bundles in {work} (build figures of their run)")
        return bundles, json.loads(record.read_text())
    for b in bundles:
        shutil.rmtree(b, ignore_errors=True)
    results = [finish_build(p) for p in [build(b, total, k, shards)
                                         for k, b in enumerate(bundles)]]
    record.write_text(json.dumps(results))
    return bundles, results


def one_config(work: Path, total: int, shards: int, queries: list[str],
               runs: int, reuse: bool = False) -> dict[str, float]:
    """Build (or, with ``reuse``, reopen), measure and search one configuration; print its
    lines; return its figures."""
    name = f"{total}_{shards}shard{'s' if shards > 1 else ''}"
    started = time.perf_counter()
    bundles, results = built_or_build(work, name, total, shards, reuse)
    docs = sum(r["docs"] for r in results)
    build_s = max(r["build_s"] for r in results)
    disk = sum(dir_size(b) for b in bundles)
    shard_list, open_s = open_shards(bundles)
    searcher = Searcher(shard_list)
    lat, kinds = query_figures(searcher, queries, runs)
    searcher.close()
    for shard in shard_list:
        shard.reader.close()
    out = sys.stdout.write
    out(f"{name}_documents: {docs} docs\n")
    out(f"{name}_build: {docs / build_s:.0f} docs/s\n")
    out(f"{name}_generate (left out of build): "
        f"{docs / sum(r['generate_s'] for r in results):.0f} docs/s\n")
    out(f"{name}_append: {docs / sum(r['append_s'] for r in results):.0f} docs/s\n")
    out(f"{name}_bytes_per_doc: {disk / docs:.0f} bytes\n")
    out(f"{name}_disk: {disk / MIB:.1f} MiB\n")
    out(f"{name}_writer_start_rss: {max(r['start_rss'] for r in results) / MIB:.0f} MiB\n")
    out(f"{name}_writer_peak_rss: {max(r['writer_rss'] for r in results) / MIB:.0f} MiB\n")
    out(f"{name}_updater_peak_rss: {max(r['updater_rss'] for r in results) / MIB:.0f} MiB\n")
    out(f"{name}_open: {1000 * open_s:.1f} ms\n")
    report_percentiles(f"{name}_query", lat)
    report_percentiles(f"{name}_query_cpu", kinds.pop("cpu"))
    for kind, p in kinds.items():
        out(f"{name}_query_{kind}_p50: {p['p50']:.2f} ms\n")
        out(f"{name}_query_{kind}_p95: {p['p95']:.2f} ms\n")
    out(f"{name}_wall: {time.perf_counter() - started:.0f} s\n")
    sys.stdout.flush()
    return {"docs": docs, "build": docs / build_s,
            "rss": max(r["writer_rss"] for r in results), **lat}


def report_targets(figures: dict[tuple[int, int], dict[str, float]], sizes: list[int]) -> None:
    big, small = sizes[-1], sizes[0]
    if (big, 1) not in figures or (small, 1) not in figures:
        return
    one = figures[(big, 1)]
    p95 = one["p95"]
    print(f"target: query p95 single shard at {big} docs {p95:.1f} ms (goal <= "
          f"{TARGET_P95_MS:.0f} ms) {'met' if p95 <= TARGET_P95_MS else 'NOT met'}")
    rss = max(figures[k]["rss"] for k in figures if k[0] == big)
    print(f"target: writer peak RSS at {big} docs {rss / MIB:.0f} MiB (goal < 2048 MiB) "
          f"{'met' if rss < TARGET_RSS_BYTES else 'NOT met'}")
    if big == small:  # one size: nothing to compare the growth with
        print(f"target: build time per document growth over sizes: not measured (one size, "
              f"{big} docs; give --docs SMALL,{big}) (goal <= {TARGET_GROWTH:.2f}) NOT met")
        return
    ratio = figures[(small, 1)]["build"] / one["build"]
    print(f"target: build time per document at {big} / at {small} docs {ratio:.2f} (goal <= "
          f"{TARGET_GROWTH:.2f}: linear growth) {'met' if ratio <= TARGET_GROWTH else 'NOT met'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", default="100000", help="comma list of corpus sizes")
    parser.add_argument("--runs", type=int, default=3, help="timed query passes (medians)")
    parser.add_argument("--work", type=Path, help="folder for the bundles (default: temporary)")
    parser.add_argument("--keep", action="store_true", help="leave the bundles in --work")
    parser.add_argument("--shards", default="1,2",
                        help="comma list of configurations: 1 (one shard), 2 (two shards)")
    parser.add_argument("--reuse", action="store_true",
                        help="search the bundles a --keep run left in --work instead of "
                             "building them again (those missing are built)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shard", default="0/1", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.docs.split(",") if s.strip()})
    if args.child is not None:
        shard, shards = (int(x) for x in args.shard.split("/"))
        print(json.dumps(build_child(args.child, sizes[0], shard, shards)))
        return 0
    queries = query_mix(Corpus(sizes[0]))
    print(f"sizes: {','.join(map(str, sizes))} docs")
    print(f"queries: {len(queries)} queries (top 10 with snippets, {args.runs} passes, medians)")
    print(f"load average before the runs: {os.getloadavg()[0]:.2f} (2 cores)")
    if args.reuse and args.work is None:
        parser.error("--reuse needs --work")
    configs = sorted({int(s) for s in args.shards.split(",") if s.strip()})
    work = args.work or Path(tempfile.mkdtemp(prefix="scale_bench_"))
    work.mkdir(parents=True, exist_ok=True)
    figures = {}
    try:
        for total in sizes:
            for shards in configs:
                figures[(total, shards)] = one_config(work, total, shards, queries, args.runs,
                                                      args.reuse)
                if not args.keep:
                    for b in work.glob(f"{total}_*"):
                        shutil.rmtree(b) if b.is_dir() else b.unlink()
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average after the runs: {os.getloadavg()[0]:.2f} (2 cores)")
    report_targets(figures, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
