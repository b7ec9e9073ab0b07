"""Query latency figures shared by the benches (bench/query_bench.py, bench/scale_bench.py):
time a fixed list of queries through a :class:`ranking.core.search.pipeline.Searcher`, warm, one
thread, and report percentiles in milliseconds as ``name_pNN: value ms`` lines."""

from __future__ import annotations

import sys
import time

from ranking.core.search.pipeline import Searcher


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def measure(searcher: Searcher, queries: list[str], snippets: bool,
            cpu: list[float] | None = None) -> list[float]:
    """Seconds per query (top 10; with ``snippets`` their snippets too), after one untimed
    warm-up pass over all of them. With ``cpu``, each query's CPU seconds (this process's,
    every thread) are appended to it: on a machine shared with other work the wall time
    also counts the time the query waited for a core, the CPU time does not."""
    for q in queries:  # warm-up pass
        searcher.search(q, num=10, snippets=snippets)
    out = []
    for q in queries:
        start, start_cpu = time.perf_counter(), time.process_time()
        res = searcher.search(q, num=10, snippets=snippets)
        [(r.url, r.title) for r in res.results]
        out.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(time.process_time() - start_cpu)
    return out


def percentiles(lat: list[float]) -> dict[str, float]:
    return {k: 1000 * percentile(lat, q) for k, q in (("p50", .5), ("p95", .95), ("p99", .99))}


def report_percentiles(name: str, p: dict[str, float]) -> dict[str, float]:
    for k, v in p.items():
        sys.stdout.write(f"{name}_{k}: {v:.2f} ms\n")
    return p


def median_of_runs(searcher: Searcher, queries: list[str], snippets: bool,
                   runs: int) -> dict[str, float]:
    """Each percentile's median over ``runs`` timed passes (each after its warm-up pass)."""
    passes = [percentiles(measure(searcher, queries, snippets)) for _ in range(max(1, runs))]
    return {k: sorted(p[k] for p in passes)[len(passes) // 2] for k in passes[0]}
