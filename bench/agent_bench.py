"""The agent API's ``search`` with passages on the local web's default tier (issue 38).

Runs the tools in-process (:class:`ranking.agent.tools.AgentTools`, the functions the MCP server
and the JSON endpoints call), over the cached crawl of the default tier that
bench/relevance_eval.py builds, with a migrated SQLite database of its own in a temporary
folder (the engine's defaults: no crawl chosen for search, so the newest index on disk is read).

Prints:

* ``agent_search_passages_p50/p95`` (ms): ``search(query, limit=10, passages=3)`` of every dev
  query, warm (one untimed pass first, as query_bench.py times everything; the page texts are
  then kept, as a running engine keeps them), median of ``--runs`` passes;
* ``agent_search_passages_cold_p95`` (ms): the same with the kept texts dropped before each
  query (every result's cached copy converted again);
* ``agent_search_p95`` (ms): the same searches without passages;
* ``agent_offsets_checked`` / ``agent_offsets_exact``: ``--sample`` passages (default 200)
  drawn with a fixed seed from every passage of those searches, each compared with its slice
  of ``cached(id)["text"]``;
* ``target:`` lines: passages p95 <= 50 ms in-process, and 100 % of the sampled offsets exact.

Usage: ``.venv/bin/python bench/agent_bench.py [--index DIR] [--runs N] [--sample N]``.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import relevance_eval as rel  # noqa: E402
from latency import percentiles  # noqa: E402

TARGET_MS = 50.0


def migrated_database(folder: Path) -> str:
    url = f"sqlite:///{folder / 'db.sqlite3'}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
           "DATABASE_URL": url, "VAR_DIRECTORY": str(folder / "var")}
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=env, check=True, timeout=600)
    return url


def timed(run, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        start = time.perf_counter()
        run(q)
        out.append(time.perf_counter() - start)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, help="a bundle of the default tier (default: the "
                                               "cached crawl)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sample", type=int, default=200)
    args = ap.parse_args()
    bundle = args.index if args.index is not None else rel.build_index("default")[0]
    folder = Path(tempfile.mkdtemp(prefix="agent-bench-"))
    os.environ.update({"DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
                       "DATABASE_URL": migrated_database(folder),
                       "VAR_DIRECTORY": str(folder / "var"),
                       "WORK_DIRECTORY": str(rel.work_of(bundle))})
    import django
    django.setup()
    from ranking.agent.tools import agent_tools

    tools = agent_tools()
    queries = [q for _, q in rel.load_queries()]
    sys.stdout.write(f"queries: {len(queries)} queries\n")

    def with_passages(q: str) -> dict:
        return tools.search(q, limit=10, passages=3)

    def without(q: str) -> dict:
        return tools.search(q, limit=10)

    def cold(q: str) -> dict:
        tools.store.texts.clear()
        return tools.search(q, limit=10, passages=3)

    answers = [with_passages(q) for q in queries]  # the untimed warm pass
    for q in queries:
        without(q)
    lines = {}
    for name, run in (("agent_search", without), ("agent_search_passages", with_passages)):
        runs = [percentiles(timed(run, queries)) for _ in range(max(1, args.runs))]
        for key in ("p50", "p95"):
            lines[f"{name}_{key}"] = sorted(r[key] for r in runs)[len(runs) // 2]
    lines["agent_search_passages_cold_p95"] = percentiles(timed(cold, queries))["p95"]
    for name, value in lines.items():
        sys.stdout.write(f"{name}: {value:.1f} ms\n")

    found = [(r["id"], p) for a in answers for r in a["results"] if r["id"]
             for p in r["passages"]]
    sample = random.Random(38).sample(found, min(args.sample, len(found)))
    texts: dict[str, str] = {}
    exact = 0
    for doc, p in sample:
        if doc not in texts:
            texts[doc] = tools.cached(doc)["text"]
        exact += texts[doc][p["start"]:p["end"]] == p["text"]
    sys.stdout.write(f"agent_passages_found: {len(found)} passages\n"
                     f"agent_offsets_checked: {len(sample)} passages\n"
                     f"agent_offsets_exact: {exact} passages\n")
    p95 = lines["agent_search_passages_p95"]
    sys.stdout.write(f"target: agent search with passages p95 {p95:.1f} ms <= {TARGET_MS:.0f} ms "
                     f"in-process (warm): {'met' if p95 <= TARGET_MS else 'NOT met'}\n")
    share = exact / len(sample) if sample else 0.0
    sys.stdout.write(f"target: sampled passage offsets exact {100 * share:.1f} % == 100 %: "
                     f"{'met' if sample and exact == len(sample) else 'NOT met'}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
