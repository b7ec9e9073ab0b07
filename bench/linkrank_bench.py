#!/usr/bin/env python
"""Web graph build and LinkRank speed, against plain scipy and igraph.

    .venv/bin/python bench/linkrank_bench.py

Two graphs, one run:

(a) the local web's link graph: the pages of ../shared/localweb (the large tier when its
    packages are installed under /usr/share/doc, else the default tier), read from disk (no
    HTTP); links extracted with lxml and canonicalised as the local web's manifest does. The
    extraction is not timed; the graph build (``WebGraphBuilder``: hashing, node table, CSR) is.
(b) a synthetic graph of 1 million nodes and 10 million edges (skewed inlinks, 40% of the links
    inside a 16-page "host"), built with ``WebGraph.from_edges``.

For each: seconds to build the graph, seconds of LinkRank (default discounts, from the stored
CSR: transition matrix + power iteration), seconds of a plain scipy power iteration on a
prebuilt normalised CSR matrix (same tolerance), and igraph's build (edge list -> Graph) plus
PageRank (PRPACK), run in a separate virtualenv under /tmp (python-igraph is not a project
dependency; it is installed there on first use). Peak memory is printed too.

Targets (issue 8): LinkRank no slower than 1.5 x the plain scipy iteration; our build plus
LinkRank at least 3 x faster than igraph's build plus PageRank. Lines are ``name: value unit``;
the last ones are ``target: ... met|NOT met``.
"""

from __future__ import annotations

import html
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from urllib.parse import urljoin

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LOCALWEB = ROOT.parent / "shared" / "localweb"
IGRAPH_VENV = Path(tempfile.gettempdir()) / "igraph-venv"

from indexer.core.urls import url_host  # noqa: E402
from linkgraph.core import (  # noqa: E402
    PLAIN_PAGERANK,
    LinkRankConfig,
    PageLinks,
    WebGraph,
    WebGraphBuilder,
    linkrank,
)

TOL = 1e-10


def out(name: str, value: float | int | str, unit: str = "") -> None:
    if isinstance(value, float):
        value = f"{value:.3f}"
    print(f"{name}: {value} {unit}".rstrip(), flush=True)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- (a) the local web -----------------------------------------------------------------------


def localweb_records() -> tuple[list[PageLinks], str]:
    import lxml.html

    sys.path.insert(0, str(LOCALWEB))
    import manifest as M  # the local web's own canonicalisation
    import sites as S

    large = [s for s in S.installed_sites() if s["tier"] == "large"]
    tier = "large" if large else "default"
    sites = S.sites(tier)
    by_host = {s["host"]: s for s in sites}
    pages = []
    for s in sites:
        pages.append((S.root_url(s), os.path.join(S.BUILD, "www", s["host"], "index.html")))
        pages.extend((url, path) for url, path, _ in S.walk_pages(s))
    records = []
    for url, path in pages:
        try:
            data = M.read_page(path)
        except OSError:
            continue
        try:
            doc = lxml.html.fromstring(data)
        except (ValueError, lxml.etree.ParserError):
            continue
        links = []
        for a in doc.iter("a"):
            href = (a.get("href") or "").strip()
            if not href or href.startswith(("#", "mailto:", "javascript:")):
                continue
            try:
                target = urljoin(url, html.unescape(href))
            except ValueError:
                continue
            host = url_host(target)
            canonical = M.canonical(target, by_host) if host in by_host else \
                target.split("#")[0]
            if canonical and canonical != url:
                links.append((canonical, " ".join(a.text_content().split())[:100]))
        records.append(PageLinks(url, 1.0, tuple(links)))
    return records, tier


# -- (b) synthetic ---------------------------------------------------------------------------


def synthetic(n: int, e: int, seed: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                       np.ndarray]:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, e, dtype=np.int64)
    far = (n * rng.random(e) ** 3).astype(np.int64)  # popular pages collect many inlinks
    near = (src // 16) * 16 + rng.integers(0, 16, e)
    dst = np.minimum(np.where(rng.random(e) < 0.4, near, far), n - 1)
    hashes = rng.permutation(n).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    hosts = (np.arange(n, dtype=np.uint64) // np.uint64(16)) * np.uint64(0x2545F4914F6CDD1D)
    return hashes, hosts, src, dst


# -- baselines -------------------------------------------------------------------------------


def plain_scipy(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[float, int, np.ndarray]:
    """Plain PageRank on a prebuilt normalised CSR matrix: seconds of the iteration only."""
    a = sp.csr_matrix((np.ones(src.shape[0]), (dst, src)), shape=(n, n))
    a.sum_duplicates()
    a.data[:] = 1.0
    outdeg = np.asarray(a.sum(axis=0)).reshape(-1)
    inv = np.zeros(n)
    np.divide(1.0, outdeg, out=inv, where=outdeg > 0)
    m = sp.csr_matrix(a @ sp.diags(inv))
    dangling = outdeg == 0
    x = np.full(n, 1.0 / n)
    started = time.perf_counter()
    iterations = 0
    for iterations in range(1, 201):  # noqa: B007 (returned)
        nxt = 0.85 * (m @ x) + (0.85 * x[dangling].sum() + 0.15) / n
        delta = np.abs(nxt - x).sum()
        x = nxt
        if delta < TOL:
            break
    return time.perf_counter() - started, iterations, x


IGRAPH_SCRIPT = textwrap.dedent("""
    import json, sys, time, resource
    import numpy as np
    import igraph
    e = np.load(sys.argv[1])
    n = int(sys.argv[2])
    t0 = time.perf_counter()
    g = igraph.Graph(n=n, edges=list(zip(e[0].tolist(), e[1].tolist())), directed=True)
    t1 = time.perf_counter()
    pr = g.pagerank(damping=0.85, directed=True)
    t2 = time.perf_counter()
    np.save(sys.argv[3], np.asarray(pr))
    print(json.dumps({"build": t1 - t0, "pagerank": t2 - t1,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""")


def ensure_igraph() -> Path | None:
    python = IGRAPH_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(IGRAPH_VENV)], check=True)
    probe = subprocess.run([str(python), "-c", "import igraph, numpy"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "python-igraph", "numpy"],
                       check=True)
    return python


def run_igraph(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[dict, np.ndarray]:
    python = ensure_igraph()
    with tempfile.TemporaryDirectory() as tmp:
        edges = Path(tmp) / "edges.npy"
        np.save(edges, np.vstack([src, dst]).astype(np.int64))
        script = Path(tmp) / "ig.py"
        script.write_text(IGRAPH_SCRIPT)
        result = Path(tmp) / "pr.npy"
        done = subprocess.run([str(python), str(script), str(edges), str(n), str(result)],
                              capture_output=True, text=True, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1]), np.load(result)


# -- one graph -------------------------------------------------------------------------------


def measure(label: str, build, src_dst_n) -> dict[str, float]:
    t0 = time.perf_counter()
    graph: WebGraph = build()
    build_s = time.perf_counter() - t0
    out(f"{label}_nodes", graph.n)
    out(f"{label}_edges", graph.edges)
    out(f"{label}_build", build_s, "s")
    t0 = time.perf_counter()
    result = linkrank(graph, LinkRankConfig(tol=TOL))
    rank_s = time.perf_counter() - t0
    out(f"{label}_linkrank", rank_s, "s")
    out(f"{label}_linkrank_iterations", result.iterations)
    t0 = time.perf_counter()
    plain_ours = linkrank(graph, PLAIN_PAGERANK)
    out(f"{label}_linkrank_no_discounts", time.perf_counter() - t0, "s")
    src, dst, n, ids = src_dst_n(graph)
    plain_s, plain_it, plain_x = plain_scipy(src, dst, n)
    out(f"{label}_plain_scipy_iteration", plain_s, "s")
    out(f"{label}_plain_scipy_iterations", plain_it)
    out(f"{label}_max_diff_vs_plain_scipy", f"{np.abs(plain_ours.scores[ids] - plain_x).max():.2e}")
    ig, ig_pr = run_igraph(src, dst, n)
    out(f"{label}_igraph_build", ig["build"], "s")
    out(f"{label}_igraph_pagerank", ig["pagerank"], "s")
    out(f"{label}_igraph_peak_memory", ig["peak_mb"], "MB")
    # igraph keeps duplicate links as multi-edges (we merge them): small differences expected
    out(f"{label}_max_diff_vs_igraph", f"{np.abs(plain_ours.scores[ids] - ig_pr).max():.2e}")
    out(f"{label}_peak_memory", peak_mb(), "MB")
    return {"build": build_s, "rank": rank_s, "plain": plain_s,
            "igraph": ig["build"] + ig["pagerank"]}


def main() -> int:
    results = {}
    t0 = time.perf_counter()
    records, tier = localweb_records()
    out("localweb_tier", tier)
    out("localweb_pages", len(records))
    out("localweb_link_extraction", time.perf_counter() - t0, "s")

    def build_local() -> WebGraph:
        builder = WebGraphBuilder()
        builder.add_all(records)
        return builder.build()

    def local_edges(graph: WebGraph):
        ids = np.arange(graph.n)
        return graph.edge_sources().astype(np.int64), np.asarray(graph.out_idx, np.int64), \
            graph.n, ids

    results["localweb"] = measure("localweb", build_local, local_edges)

    n, e = 1_000_000, 10_000_000
    hashes, hosts, src, dst = synthetic(n, e)

    def build_synthetic() -> WebGraph:
        return WebGraph.from_edges(hashes, src, dst, host_hash=hosts)

    def synthetic_edges(graph: WebGraph):
        ids = graph.node_ids(hashes)  # node id of input node i
        keep = src != dst
        return src[keep], dst[keep], n, ids

    results["synthetic"] = measure("synthetic", build_synthetic, synthetic_edges)

    r = results["synthetic"]
    ratio = r["rank"] / r["plain"]
    speedup = r["igraph"] / (r["build"] + r["rank"])
    local = results["localweb"]
    out("synthetic_linkrank_vs_plain_scipy", ratio, "x")
    out("synthetic_igraph_vs_build_plus_linkrank", speedup, "x")
    out("localweb_linkrank_vs_plain_scipy", local["rank"] / local["plain"], "x")
    out("localweb_igraph_vs_build_plus_linkrank",
        local["igraph"] / (local["build"] + local["rank"]), "x")
    out("peak_memory", peak_mb(), "MB")
    print(f"target: synthetic LinkRank <= 1.5x plain scipy iteration ({ratio:.2f}x) "
          f"{'met' if ratio <= 1.5 else 'NOT met'}")
    print(f"target: synthetic build + LinkRank >= 3x faster than igraph build + PageRank "
          f"({speedup:.2f}x) {'met' if speedup >= 3 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
