"""Query latency of the search pipeline against Whoosh, on the same pages and queries.

Single thread, warm (one untimed pass over all judged queries first), over
../shared/judgments/dev.tsv:

* ``default``: one in-process shard of the local web's default tier (the index that
  bench/relevance_eval.py builds and caches), time to the top 10 urls and titles, and
  separately with snippets;
* ``large``: the same on the large tier, when its files are installed;
* ``3 shards``: the default tier crawled by 3 queue servers (urls split by host, as a crawl
  splits them), each bundle served on loopback by a shard server in a process of its own (as
  each queue server is), searched through the network iterator over HTTP;
* Whoosh 2.7 (../shared/peers/whoosh_eval.py, BM25F, AND) on the same pages, installed in its
  own virtual environment under /tmp (never into the project).

Usage: ``.venv/bin/python bench/query_bench.py [--no-whoosh] [--http] [--index DIR]
[--shard-index DIR ...] [--large-index DIR] [--default-only] [--no-large] [--runs N]``. ``--http`` times the search page through gunicorn and the whole
Django stack against the bare query (with snippets): the page's p95 should be within 2x of the
bare p95. ``--index`` searches an existing bundle of the default tier (say, the one
bench/relevance_eval.py crawled before the crawler's code changed) instead of the cached crawl;
``--shard-index`` does the same for the 3 shards' bundles, ``--large-index`` for the large
tier. ``--default-only`` skips the large
tier and the 3 shards (each needs a crawl of its own), ``--no-large`` the large tier.
``--no-agent`` skips the agent API's ``search`` with passages (bench/agent_bench.py, run on the
default tier's bundle in a process of its own: it needs Django; it prints its p95 and a
``target:`` line, <= 50 ms in-process). ``--runs`` times each configuration N times (default 3) and reports the median of each
percentile (with ``--http``: N passes, each query timed bare then through the page); the
machine is shared, so one pass is noisy.
Prints ``name: value unit`` lines and ``target:`` lines (our p95 <= Whoosh's p95, both measured
in this run: top 10, and on the default tier top 10 with snippets, whose p95 the index built
with the defaults, whole pages, must keep under Whoosh's too); for the 3 shards also the CPU per query of the searching process and of the shard
servers (``shards3_top10_client_cpu``, ``shards3_top10_servers_cpu``, the servers' summed),
steadier than wall-clock times when the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import relevance_eval as rel  # noqa: E402
from latency import median_of_runs, percentiles, report_percentiles  # noqa: E402

from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402
from indexer.core.signals.link_scores import LinkScores  # noqa: E402
from ranking.core.remote.client import RemoteShard  # noqa: E402
from ranking.core.search.pipeline import Searcher  # noqa: E402
from ranking.core.shard.local import LocalShard  # noqa: E402

PEERS = rel.SHARED / "peers"
# the peers' own virtual environment (whoosh, tantivy), never the project's
PEERS_VENV = Path(os.environ.get("PEERS_VENV", os.environ.get("WHOOSH_VENV",
                                                               "/tmp/yioopy-whoosh-venv")))
SHARDS = 3
TOKEN = "bench-token"


def process_cpu(pid: int) -> float | None:
    """User and system CPU seconds of a process so far (Linux /proc; None elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report_cpu(name: str, searcher: Searcher, queries: list[str], pids: list[int],
               runs: int) -> None:
    """CPU per query (top 10, warm) of this process and, summed, of the shard server
    processes ``pids``, over ``runs`` more passes: unlike the wall-clock percentiles it hardly
    moves with the load of a shared machine."""
    before = [process_cpu(pid) for pid in pids]
    start = time.process_time()
    for _ in range(max(1, runs)):
        for q in queries:
            searcher.search(q, num=10, snippets=False)
    passes = max(1, runs) * len(queries)
    sys.stdout.write(f"{name}_client_cpu: {1000 * (time.process_time() - start) / passes:.2f} "
                     "ms\n")
    spans = [(b, a) for b, a in zip(before, [process_cpu(pid) for pid in pids], strict=True)
             if a is not None and b is not None]
    if pids and len(spans) == len(pids):
        used = sum(a - b for b, a in spans)
        sys.stdout.write(f"{name}_servers_cpu: {1000 * used / passes:.2f} ms\n")


def sharded_bundles(tier: str) -> list[Path]:
    """The tier crawled by 3 queue servers (urls split by host hash), one bundle each (cached)."""
    paths, _ = rel.crawl_index(tier, SHARDS)
    return paths


def with_link_scores(bundle: Path, tier: str, name: str) -> None:
    """The crawl's link scores beside its bundles: searching with default options adds each
    candidate's link score, so the timed queries do that work too. A crawl relevance_eval
    built has them already (the engine's link analysis ran when it ended); a bundle given with
    ``--index`` without them gets the same analysis here. One crawl's scores serve all of its
    queue servers' bundles."""
    work = rel.work_of(bundle)
    path = rel.scores_path(work, rel.CRAWL_TIMESTAMP)
    if not path.exists():
        rel.link_analysis(work, tier)
    sys.stdout.write(f"{name}_link_scores: {len(LinkScores(path))} urls\n")


def peer_eval(name: str, docs_jsonl: Path, tier: str = "default",
              extra: tuple[str, ...] = ()) -> dict | None:
    """Run the peers' ``<name>_eval.py`` (whoosh: BM25F; tantivy: BM25) in their own venv on
    ``docs_jsonl``, with the further arguments ``extra`` (``("--analyzer", "words")``); its
    JSON result, or None when the peer cannot be installed here."""
    python = PEERS_VENV / "bin" / "python"
    try:
        if not python.exists():
            venv.create(PEERS_VENV, with_pip=True)
        probe = subprocess.run([str(python), "-c", f"import {name}"], capture_output=True)
        if probe.returncode != 0:
            subprocess.run([str(python), "-m", "pip", "install", "-q", name], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.stdout.write(f"{name}_install: 0 installed ({exc})\n")
        return None
    rel.CACHE.mkdir(parents=True, exist_ok=True)
    index_dir = rel.CACHE / (f"{name}-index" if tier == "default" else f"{name}-index-{tier}")
    out = subprocess.run(
        [str(python), str(PEERS / f"{name}_eval.py"), "--docs", str(docs_jsonl), "--builds", "1",
         "--index-dir", str(index_dir),
         "--name", "-".join((name, docs_jsonl.stem, *(a.strip("-") for a in extra))), *extra],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PEERS_OUT": str(rel.CACHE / "peers")})
    return json.loads(out.stdout.strip().splitlines()[-1])


def whoosh_p95(docs_jsonl: Path, tier: str = "default") -> dict:
    """Whoosh's result on ``docs_jsonl`` (:func:`peer_eval`); it must run."""
    result = peer_eval("whoosh", docs_jsonl, tier)
    if result is None:
        raise SystemExit("whoosh could not be installed (use --no-whoosh)")
    return result


def docs_jsonl(tier: str) -> Path:
    """{url, title, text} of the tier's pages, extracted as the peers' corpus does."""
    path = rel.CACHE / f"docs-{tier}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        return path
    sys.path.insert(0, str(PEERS))
    import corpus
    import lxml.html

    with open(path.with_suffix(".tmp"), "w", encoding="utf-8") as handle:
        for url, file in sorted(rel.tier_pages(tier).items()):
            try:
                doc = lxml.html.fromstring(rel._read(file))
            except Exception:  # empty or unparsable page: the peers skip it too
                continue
            title, text = corpus.page_text(doc)
            handle.write(json.dumps({"url": url, "title": title, "text": text}) + "\n")
    os.replace(path.with_suffix(".tmp"), path)
    return path


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_bench(bundle: Path, queries: list[str], runs: int) -> int:
    """The search page (HTML, with snippets) through gunicorn and the whole Django stack,
    single client, warm; against the bare in-process query with snippets on the same bundle.
    Each query is timed both ways one after the other (the bare query, then the page), so
    that both see the same load on a shared machine; each percentile is the median over
    ``runs`` passes."""
    bare = Searcher([LocalShard(IndexBundleReader(bundle))])
    import tempfile
    import urllib.parse
    import urllib.request

    root = HERE.parent
    with tempfile.TemporaryDirectory(prefix="query-bench-http-") as tmp:
        work = Path(tmp) / "work" / "qs0"
        work.mkdir(parents=True)
        (work / bundle.name).symlink_to(bundle)
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
                    "VAR_DIRECTORY": tmp, "WORK_DIRECTORY": str(Path(tmp) / "work"),
                    "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3", "LOG_LEVEL": "WARNING"})
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=root, env=env,
                       check=True)
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "searchsite.wsgi:application", "--bind",
             f"127.0.0.1:{port}", "--workers", "1", "--log-level", "warning"],
            cwd=root, env=env)
        base = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(base, timeout=2).read()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)

            def get(q: str) -> bytes:
                url = base + "?" + urllib.parse.urlencode({"q": q})
                with urllib.request.urlopen(url, timeout=30) as response:
                    return response.read()

            for q in queries:  # warm-up pass
                bare.search(q, num=10, snippets=True)
                get(q)
            passes: list[tuple[dict[str, float], dict[str, float]]] = []
            for _ in range(max(1, runs)):
                lat_bare, lat_page = [], []
                for q in queries:
                    start = time.perf_counter()
                    res = bare.search(q, num=10, snippets=True)
                    [(r.url, r.title, r.snippet) for r in res.results]
                    lat_bare.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    get(q)
                    lat_page.append(time.perf_counter() - start)
                passes.append((percentiles(lat_bare), percentiles(lat_page)))
        finally:
            server.terminate()
            server.wait(timeout=30)
    median = len(passes) // 2
    bare_p = report_percentiles("bare_snippets", {
        k: sorted(p[0][k] for p in passes)[median] for k in passes[0][0]})
    page = report_percentiles("http_page", {
        k: sorted(p[1][k] for p in passes)[median] for k in passes[0][1]})
    bare_p95 = bare_p["p95"]
    sys.stdout.write(f"http_ratio_p95: {page['p95'] / bare_p95:.2f} x\n")
    met = page["p95"] <= 2 * bare_p95
    sys.stdout.write(f"target: search page p95 through Django {page['p95']:.2f} ms (goal <= 2x "
                     f"bare query p95 {bare_p95:.2f} ms = {2 * bare_p95:.2f} ms) "
                     f"{'met' if met else 'NOT met'}\n")
    return 0



SHARD_SERVER = """
import sys
from indexer.core.bundle.reader import IndexBundleReader
from tests.fixtures.shard_server import ShardHTTPServer
from ranking.core.shard.local import LocalShard
srv = ShardHTTPServer(LocalShard(IndexBundleReader(sys.argv[1])), sys.argv[2])
print(srv.url, flush=True)
srv.serve_forever()
"""


def start_shard_process(path: Path) -> tuple[subprocess.Popen, str]:
    """A shard server over the bundle at ``path`` in a process of its own; (process, url)."""
    proc = subprocess.Popen([sys.executable, "-c", SHARD_SERVER, str(path), TOKEN],
                            cwd=HERE.parent, stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip() if proc.stdout else ""
    if not url.startswith("http://"):
        proc.kill()
        raise RuntimeError(f"the shard server for {path} did not start")
    return proc, url


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-whoosh", action="store_true")
    ap.add_argument("--http", action="store_true",
                    help="time the search page through gunicorn and Django, against the bare "
                         "query with snippets, and stop there")
    ap.add_argument("--index", type=Path,
                    help="an existing index bundle of the default tier to search")
    ap.add_argument("--default-only", action="store_true",
                    help="skip the large tier and the 3 shards")
    ap.add_argument("--shard-index", type=Path, action="append", default=[],
                    help="existing index bundles of the default tier crawled by 3 queue "
                         "servers (give it once per bundle) instead of the cached crawl")
    ap.add_argument("--large-index", type=Path,
                    help="an existing index bundle of the large tier to search instead of "
                         "the cached crawl")
    ap.add_argument("--no-large", action="store_true",
                    help="skip the large tier (its crawl takes the better part of an hour)")
    ap.add_argument("--no-agent", action="store_true",
                    help="skip the agent API's search with passages (bench/agent_bench.py)")
    ap.add_argument("--runs", type=int, default=3,
                    help="timed passes over each configuration, or with --http over the "
                         "bare query and the page (median of each percentile)")
    return ap.parse_args()


def main() -> int:
    args = parse_args()
    queries = [q for _, q in rel.load_queries()]
    sys.stdout.write(f"queries: {len(queries)} queries\n")
    bundle = args.index if args.index is not None else rel.build_index("default")[0]
    with_link_scores(bundle, "default", "default")
    if args.http:
        return http_bench(bundle, queries, args.runs)
    searcher = Searcher([LocalShard(IndexBundleReader(bundle))])
    ours = report_percentiles("default_top10",
                              median_of_runs(searcher, queries, False, args.runs))
    with_snippets = report_percentiles("default_snippets",
                                       median_of_runs(searcher, queries, True, args.runs))
    if not args.no_agent:  # the agent API (issue 38): search with passages, its own process
        sys.stdout.flush()
        subprocess.run([sys.executable, str(HERE / "agent_bench.py"), "--index", str(bundle),
                        "--runs", str(args.runs)], check=False)
        sys.stdout.flush()
    large = large_tier_bench(args, queries)
    shards3 = shards3_bench(args, queries)
    if args.no_whoosh:
        return 0
    report_whoosh_targets(ours, with_snippets, shards3, large)
    return 0


def large_tier_bench(args: argparse.Namespace, queries: list[str]) -> dict[str, float] | None:
    """The large tier's top-10 and snippet percentiles (its top-10 ones; None when skipped,
    not installed or its crawl did not finish)."""
    large_sites = [s for s in rel.sites.sites("large") if s["tier"] == "large"]
    if args.default_only or args.no_large:
        sys.stdout.write("large_tier: 0 measured (skipped: --default-only or --no-large)\n")
        return None
    if not large_sites:
        sys.stdout.write("large_tier: 0 installed (skipped: setup.sh --large not run)\n")
        return None
    try:
        big = args.large_index or rel.build_index("large")[0]
        with_link_scores(big, "large", "large")
    except (Exception, SystemExit) as exc:  # a crawl that did not finish: go on
        sys.stdout.write(f"large_build: 0 built ({type(exc).__name__}: {exc})\n")
        return None
    big_searcher = Searcher([LocalShard(IndexBundleReader(big))])
    large = report_percentiles("large_top10", median_of_runs(
        big_searcher, queries, False, args.runs))
    report_percentiles("large_snippets", median_of_runs(big_searcher, queries, True,
                                                        args.runs))
    return large


def shards3_bench(args: argparse.Namespace, queries: list[str]) -> dict[str, float] | None:
    """The default tier split over 3 shard servers: top-10 percentiles (returned), CPU and
    snippet percentiles; None when skipped or the sharded crawl failed."""
    shard_paths: list[Path] = []
    if args.default_only:
        sys.stdout.write("shards3: 0 measured (skipped: --default-only)\n")
    else:
        try:
            shard_paths = args.shard_index or sharded_bundles("default")
            with_link_scores(shard_paths[0], "default", "shards3")
        except (Exception, SystemExit) as exc:  # report and go on with the other measurements
            sys.stdout.write(f"shards3_build: 0 built ({type(exc).__name__}: {exc})\n")
    # each shard server is a process of its own, as queue servers are (on one machine or
    # several): the searching process only fans out and merges
    servers = []
    shards3: dict[str, float] | None = None
    for path in shard_paths:
        servers.append(start_shard_process(path))
    try:
        if servers:
            net = Searcher([RemoteShard(url, TOKEN, name=f"qs{i}")
                            for i, (_, url) in enumerate(servers)])
            shards3 = report_percentiles("shards3_top10",
                                         median_of_runs(net, queries, False, args.runs))
            report_cpu("shards3_top10", net, queries, [proc.pid for proc, _ in servers],
                       args.runs)
            report_percentiles("shards3_snippets",
                               median_of_runs(net, queries, True, args.runs))
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(timeout=30)
    return shards3


def report_whoosh_targets(ours: dict[str, float], with_snippets: dict[str, float],
                          shards3: dict[str, float] | None,
                          large: dict[str, float] | None) -> None:
    """Whoosh's AND percentiles on the same pages, and one target line per configuration
    measured (p95 no worse than Whoosh's)."""
    result = whoosh_p95(docs_jsonl("default"))
    w = result["and"]
    sys.stdout.write(f"whoosh_and_p50: {w['p50_ms']:.2f} ms\n"
                     f"whoosh_and_p95: {w['p95_ms']:.2f} ms\n"
                     f"whoosh_and_mrr10: {w['MRR@10']:.4f} score\n")
    targets = [("default tier top-10", ours, w["p95_ms"]),
               ("default tier top-10 with snippets", with_snippets, w["p95_ms"])]
    if shards3 is not None:  # the same pages, split over 3 shards
        targets.append(("3 shards top-10", shards3, w["p95_ms"]))
    if large is not None:
        wl = whoosh_p95(docs_jsonl("large"), "large")["and"]
        sys.stdout.write(f"whoosh_large_and_p95: {wl['p95_ms']:.2f} ms\n")
        targets.append(("large tier top-10", large, wl["p95_ms"]))
    for name, p, goal in targets:
        met = p["p95"] <= goal
        sys.stdout.write(f"target: {name} p95 {p['p95']:.2f} ms (goal <= whoosh {goal:.2f} ms) "
                         f"{'met' if met else 'NOT met'}\n")


if __name__ == "__main__":
    sys.exit(main())
