"""How build speed, index size, writer memory, open time and query latency grow with the index.

Usage: ``python bench/scale_bench.py [--docs 100000,300000,1000000] [--runs N] [--work DIR]
[--keep] [--reuse] [--shards 1,2] [--no-exact]``, or ``python bench/scale_bench.py --index PATH
[--judgments [TSV]] [--runs N] [--no-exact]``. The default, ``--docs 100000``, takes a few
minutes on a 2-core machine (and as long again for the exhaustive search's queries).

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
* ``first_query_cpu`` / ``first_query_wall``: the first query on shards just opened, the
  one-word query of the mix most documents hold (with ``--index``: of "the" and the
  one-word judged queries), top 10 without snippets, one try: what a query pays for the
  per-partition data read on first use (url features, region weights, decoded lists);
* ``query_p50/p95/p99``: the fixed query mix of ``synthetic_corpus.query_mix`` (200 queries:
  50 each of one, two and three words, and phrases; frequent and rare words), top 10 with
  snippets, one thread, warm; each percentile the median of ``--runs`` passes; then the
  p50 and p95 of each kind of query (``one_word``, ``two_words``, ``three_words``,
  ``phrase``; all passes pooled); ``query_cpu_*`` and ``query_cpu_<kind>_*``: the same of
  the queries' CPU times (on a machine shared with other work, wall times also count the
  waits for a core; the load average is printed before and after the runs);
* exactness (``bench/exactness.py``; left out with ``--no-exact``): the same queries through
  the exhaustive reference search (every match a candidate: no read bounds, ``n`` = every
  document, no time budget; scoring, fusion and grouping unchanged), its own latency
  (``exhaustive_query_p50/p95/p99`` and ``exhaustive_query_<kind>_p50/p95``: top 10 with
  snippets, warm, one timed pass: the price of exactness today), and
  ``overlap_<kind>``: the mean share of the exhaustive search's top-10 urls that the default
  search's top 10 holds, per kind (queries whose exhaustive answer is empty are skipped and
  counted); ``overlap_reads_unbounded_<kind>``: the same for the bounded search of earlier versions
  (``LocalShard(exact=False)``: the first ``n`` matches) with its read bounds lifted but its
  ``n`` kept (what the first-``n`` candidate count alone loses; the default search is exact
  since issue 33, ``ranking/core/shard/exact.py``, reading only the block ranges that can
  reach the pool for long lists, ``ranking/core/shard/block_max.py``);
  ``exhaustive_partial`` counts the exhaustive answers marked partial (0, or the reference is
  not exhaustive).

Then one ``target:`` line each, at the largest size run: single-shard query p95 <= 50 ms, writer
peak RSS < 2 GB, per-document build time at the largest size over the smallest (goal <= 1.25:
no faster than linear growth of the total, allowing for a shared machine's noise), and the
top-10 overlap with the exhaustive search, the lowest over the four kinds (goal >= 0.99; the
single-shard configuration's, else the two shards'). Nothing is
reused between runs: every bundle is built afresh in a temporary folder (``--work`` to choose
it, ``--keep`` to leave the bundles there), unless ``--reuse`` says to search the bundles an
earlier ``--keep`` run left in ``--work`` (its build figures are printed again, from the record
it left: ``<size>_<config>.build.json``). ``--shards 1`` runs the one-shard configuration
only.

``--index PATH`` measures an existing index instead of a synthetic one: PATH is a bundle
folder (``.../qs0/IndexData<ts>``, or a bundle this bench kept), or a work folder (a crawl's,
say ``var/work``, ``var``, or a crawl bench/relevance_eval.py cached under /tmp/yioopy-bench),
whose newest crawl's bundles (one per queue server) are searched together, with the crawl's
link scores when it has them. The queries are those of the judgments file (``--judgments``,
default ../shared/judgments/dev.tsv), each of the kind of its shape (one, two, three or more
words, phrase); it prints the same latency, exactness and overlap lines under the name
``index``, and, when ``--judgments`` is given, MRR@10 of the default and of the exhaustive
search on those judgments (bench/relevance_eval.py's run and the shared scorer, each query
with the search page's fallback to partial matches).
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

import relevance_eval as rel  # noqa: E402
from exactness import (  # noqa: E402
    Overlap,
    answer,
    compare,
    exhaustive_searcher,
    kind_order,
    reads_unbounded_searcher,
    shapes,
)
from index_bench import BATCH, dir_size  # noqa: E402
from latency import measure, percentiles, report_percentiles  # noqa: E402
from synthetic_corpus import QUERY_KINDS, Corpus, page_document, query_mix  # noqa: E402

from indexer.core.bundle.layout import POSITIONS_DOC_MAP  # noqa: E402
from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.bundle.writer import BundleConfig, IndexBundleWriter  # noqa: E402
from indexer.core.dictionary.updater import DictionaryUpdater  # noqa: E402
from indexer.core.runtime.workdir import crawl_bundles, crawl_timestamps  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402

PARTITION_DOCS = 50_000  # searchsite.settings INDEX_PARTITION_DOCUMENTS' default
TARGET_P95_MS = 50.0
TARGET_RSS_BYTES = 2 * 1024 ** 3
TARGET_GROWTH = 1.25
TARGET_OVERLAP = 0.99
TOP_K = 10
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


def first_query(bundles: list[Path], words: list[str]) -> tuple[str, float, float]:
    """The first query after the shards open: of ``words``, the one most documents hold, top
    10 without snippets on shards just opened (url features, region weights and lists are
    read on first use); its CPU and wall time in ms."""
    shard_list = [LocalShard(IndexBundleReader(b), name=f"qs{i}")
                  for i, b in enumerate(bundles)]
    searcher = Searcher(shard_list)
    word = max(words, key=lambda w: sum(s.document_frequency(t) for s in shard_list
                                        for t in s.analyzer.terms(w, "en")[:1]))
    cpu, wall = time.process_time(), time.perf_counter()
    searcher.search(word, snippets=False)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    searcher.close()
    for shard in shard_list:
        shard.reader.close()
    return word, 1000 * cpu, 1000 * wall


def report_first_query(name: str, bundles: list[Path], words: list[str]) -> None:
    word, cpu, wall = first_query(bundles, words)
    sys.stdout.write(f"{name}_first_query_cpu ({word!r}): {cpu:.1f} ms\n"
                     f"{name}_first_query_wall ({word!r}): {wall:.1f} ms\n")


def mix_kinds(queries: list[str]) -> list[str]:
    """The kind of every query of ``synthetic_corpus.query_mix`` (equal runs of each of
    ``QUERY_KINDS``, in that order)."""
    each = max(1, len(queries) // len(QUERY_KINDS))
    return [QUERY_KINDS[min(i // each, len(QUERY_KINDS) - 1)] for i in range(len(queries))]


def query_figures(searcher: Searcher, queries: list[str], runs: int, kinds: list[str]
                  ) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Percentiles of the whole mix (each the median over ``runs`` passes) and of each kind
    of query (``kinds[i]``: query i's; its latencies of all passes pooled), in ms; the same
    of the queries' CPU times under the keys ``cpu`` (whole mix) and ``cpu_<kind>``."""
    cpus: list[list[float]] = [[] for _ in range(max(1, runs))]
    passes = [measure(searcher, queries, True, cpu) for cpu in cpus]

    def summary(runs_of: list[list[float]]) -> tuple[dict[str, float], dict[str, dict]]:
        per_pass = [percentiles(p) for p in runs_of]
        overall = {k: sorted(p[k] for p in per_pass)[len(per_pass) // 2] for k in per_pass[0]}
        kinds_of = {kind: percentiles([x for p in runs_of
                                       for x, k in zip(p, kinds, strict=True) if k == kind])
                    for kind in kind_order(kinds)}
        return overall, kinds_of

    overall, by_kind = summary(passes)
    cpu_overall, cpu_kinds = summary(cpus)
    by_kind["cpu"] = cpu_overall
    by_kind.update({f"cpu_{k}": v for k, v in cpu_kinds.items()})
    return overall, by_kind


def report_queries(name: str, lat: dict[str, float], by_kind: dict[str, dict[str, float]]
                   ) -> None:
    """The ``<name>_query_*`` lines of :func:`query_figures`' figures."""
    report_percentiles(f"{name}_query", lat)
    report_percentiles(f"{name}_query_cpu", by_kind.pop("cpu"))
    for kind, p in by_kind.items():
        sys.stdout.write(f"{name}_query_{kind}_p50: {p['p50']:.2f} ms\n")
        sys.stdout.write(f"{name}_query_{kind}_p95: {p['p95']:.2f} ms\n")


def report_overlap(name: str, result: Overlap) -> None:
    """The ``<name>_<kind>: mean share (queries, skipped)`` lines of an overlap."""
    for kind in result.kinds:
        value = f"{result.mean[kind]:.4f} share" if kind in result.mean else "none"
        sys.stdout.write(f"{name}_{kind}: {value} ({result.counted[kind]} queries, "
                         f"{result.skipped[kind]} skipped: no exhaustive result)\n")


def exact_figures(name: str, searcher: Searcher, shards: list[LocalShard], reference: Searcher,
                  queries: list[str], kinds: list[str]) -> Overlap:
    """The exhaustive search's latency (top 10 with snippets, one timed pass after a warm-up
    pass) overall and per kind, and the default search's top-10 overlap with it per kind
    (``bench/exactness.py``), and that of the default search with its read bounds lifted;
    prints their lines; returns the default search's overlap."""
    want = answer(reference, queries, TOP_K, snippets=True, warm=True)
    result = compare(kinds, answer(searcher, queries, TOP_K), want)
    reads = reads_unbounded_searcher(shards, searcher.options, searcher.link_scores)
    reads_only = compare(kinds, answer(reads, queries, TOP_K), want)
    reads.close()
    out = sys.stdout.write
    report_percentiles(f"{name}_exhaustive_query", percentiles(want.seconds))
    for kind in result.kinds:
        p = percentiles([s for s, k in zip(want.seconds, kinds, strict=True) if k == kind])
        out(f"{name}_exhaustive_query_{kind}_p50: {p['p50']:.2f} ms\n")
        out(f"{name}_exhaustive_query_{kind}_p95: {p['p95']:.2f} ms\n")
    report_overlap(f"{name}_overlap", result)
    report_overlap(f"{name}_overlap_reads_unbounded", reads_only)
    out(f"{name}_exhaustive_partial: {result.reference_partial} answers\n")
    return result


def report_overlap_target(where: str, low: float | None) -> None:
    """The ``target:`` line of the top-10 overlap with the exhaustive search: ``low``, the
    lowest mean over the kinds measured (None: not measured)."""
    if low is None:
        print(f"target: top-10 overlap with the exhaustive search at {where}: not measured "
              f"(--no-exact, or no query with an exhaustive result) (goal >= "
              f"{TARGET_OVERLAP:.2f}) NOT met")
        return
    print(f"target: top-10 overlap with the exhaustive search at {where} min over shapes "
          f"{low:.4f} (goal >= {TARGET_OVERLAP:.2f}) "
          f"{'met' if low >= TARGET_OVERLAP else 'NOT met'}")


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
               runs: int, reuse: bool = False, exact: bool = True) -> dict[str, float]:
    """Build (or, with ``reuse``, reopen), measure and search one configuration (with
    ``exact``, the exhaustive search too); print its lines; return its figures
    (``overlap``: the lowest mean overlap over the kinds, absent without ``exact``)."""
    name = f"{total}_{shards}shard{'s' if shards > 1 else ''}"
    started = time.perf_counter()
    bundles, results = built_or_build(work, name, total, shards, reuse)
    docs = sum(r["docs"] for r in results)
    build_s = max(r["build_s"] for r in results)
    disk = sum(dir_size(b) for b in bundles)
    shard_list, open_s = open_shards(bundles)
    searcher = Searcher(shard_list)
    kinds = mix_kinds(queries)
    lat, by_kind = query_figures(searcher, queries, runs, kinds)
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
    report_first_query(name, bundles, [q for q, k in zip(queries, kinds, strict=True)
                                       if k == "one_word"])
    report_queries(name, lat, by_kind)
    sys.stdout.flush()
    figures = {"docs": docs, "build": docs / build_s,
               "rss": max(r["writer_rss"] for r in results), **lat}
    if exact:
        reference = exhaustive_searcher(shard_list, searcher.options, searcher.link_scores)
        low = exact_figures(name, searcher, shard_list, reference, queries, kinds).minimum()
        reference.close()
        if low is not None:
            figures["overlap"] = low
    searcher.close()
    for shard in shard_list:
        shard.reader.close()
    out(f"{name}_wall: {time.perf_counter() - started:.0f} s\n")
    sys.stdout.flush()
    return figures


def report_targets(figures: dict[tuple[int, int], dict[str, float]], sizes: list[int]) -> None:
    """The ``target:`` lines at the largest size (see the module docstring)."""
    big, small = sizes[-1], sizes[0]
    measured = [k for k in sorted(figures) if k[0] == big and "overlap" in figures[k]]
    if measured:  # the single-shard configuration's, else the two shards'
        config = measured[0][1]
        report_overlap_target(f"{big} docs ({config} shard{'s' if config > 1 else ''})",
                              figures[measured[0]]["overlap"])
    else:
        report_overlap_target(f"{big} docs", None)
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


def index_bundles(path: Path) -> list[Path]:
    """The bundles ``--index PATH`` names (see the module docstring): PATH itself when it is
    a bundle folder, else the newest crawl's bundles of the work folder PATH or PATH/work."""
    if (path / POSITIONS_DOC_MAP).is_dir():
        return [path]
    for work in (path, path / "work"):
        stamps = crawl_timestamps(work)
        if stamps:
            return crawl_bundles(work, stamps[-1])
    raise SystemExit(f"--index {path}: neither a bundle folder nor a work folder with a "
                     "crawl's bundles (qs<n>/IndexData<ts>)")


def judged_mrr(name: str, searcher: Searcher, judged: list[tuple[str, str]],
               judgments: Path) -> float:
    """MRR@10 of ``searcher`` on the judged queries (bench/relevance_eval.py's run, with the
    search page's fallback, and the shared scorer)."""
    run = rel.run_queries(searcher, judged)
    mean = rel.evaluate(run, rel.CACHE / "runs" / f"scale-{name}.run", judgments=judgments)
    return float(mean["MRR@10"])


def index_run(path: Path, runs: int, judgments: Path | None, exact: bool) -> int:
    """``--index PATH``: latency, exactness and (with ``judgments``) MRR@10 on an existing
    index (see the module docstring)."""
    bundles = index_bundles(path)
    shard_list = [LocalShard(IndexBundleReader(b), name=f"qs{i}") for i, b in enumerate(bundles)]
    searcher = Searcher(shard_list)
    judged = rel.load_queries(judgments or rel.JUDGMENTS)
    queries = [q for _, q in judged]
    kinds = shapes(searcher, queries)
    docs = sum(s.collection_stats().documents for s in shard_list)
    out = sys.stdout.write
    out(f"index: {' '.join(map(str, bundles))}\n")
    out(f"index_documents: {docs} docs\n")
    out(f"index_link_scores: {'yes' if searcher.link_scores.get() is not None else 'no'}\n")
    out(f"queries: {len(queries)} queries of {judgments or rel.JUDGMENTS} (top 10 with "
        f"snippets, {runs} passes, medians; "
        + ", ".join(f"{k} {kinds.count(k)}" for k in kind_order(kinds)) + ")\n")
    out(f"load average before the runs: {os.getloadavg()[0]:.2f} (2 cores)\n")
    report_first_query("index", bundles, ["the", *(q for q, k in zip(queries, kinds, strict=True)
                                                  if k == "one_word")])
    report_queries("index", *query_figures(searcher, queries, runs, kinds))
    reference = exhaustive_searcher(shard_list, searcher.options, searcher.link_scores)
    low = exact_figures("index", searcher, shard_list, reference, queries,
                        kinds).minimum() if exact else None
    if judgments is not None:
        out(f"index_MRR@10: {judged_mrr('index', searcher, judged, judgments):.4f} score\n")
        out(f"index_exhaustive_MRR@10: "
            f"{judged_mrr('index-exhaustive', reference, judged, judgments):.4f} score\n")
    out(f"load average after the runs: {os.getloadavg()[0]:.2f} (2 cores)\n")
    report_overlap_target(f"{docs} docs ({path})", low)
    for s in (searcher, reference):
        s.close()
    for shard in shard_list:
        shard.reader.close()
    return 0


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
    parser.add_argument("--no-exact", action="store_true",
                        help="leave out the exhaustive search (its latency and the overlap)")
    parser.add_argument("--index", type=Path,
                        help="measure this existing bundle, or the newest crawl of this work "
                             "folder, on the judged queries instead of synthetic corpora")
    parser.add_argument("--judgments", type=Path, nargs="?", const=rel.JUDGMENTS,
                        help="with --index: the judged queries' file (default "
                             f"{rel.JUDGMENTS}); print MRR@10 on it")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shard", default="0/1", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.docs.split(",") if s.strip()})
    if args.child is not None:
        shard, shards = (int(x) for x in args.shard.split("/"))
        print(json.dumps(build_child(args.child, sizes[0], shard, shards)))
        return 0
    if args.index is not None:
        return index_run(args.index, args.runs, args.judgments, not args.no_exact)
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
                                                      args.reuse, not args.no_exact)
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
