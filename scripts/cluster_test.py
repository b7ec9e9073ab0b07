#!/usr/bin/env python
"""The engine on several machines for real: ``sudo .venv/bin/python scripts/cluster_test.py``
(``make test-cluster``), as root on Linux with ``ip netns``, PostgreSQL's binaries and this
checkout's virtualenv.

Machines are network namespaces on one bridge in 198.18.0.0/15 (``scripts/cluster/netns.py``;
nothing leaves them): ``db`` (a PostgreSQL and a Redis of the test's own), ``web`` (the name
server: web app, admin, search page), ``qs0`` and ``qs1`` (queue server 0 and 1, each with a
fetcher), ``fetch`` (a fetcher-only node), ``site`` (the fixture web sites, one address per
host, one host with a Crawl-delay), ``solo`` (a single-machine crawl of the same sites, to
compare with) and ``ctl`` (the operator's browser). Each engine machine runs ``manage.py up``
configured by environment variables alone (``scripts/cluster/engine.py``; README "Running on
several machines").

The run: the operator logs in to the admin on ``web``, adds a crawl of the sites and starts it;
the crawl ends by itself; then the checks of ``scripts/cluster/checks.py`` are printed, naming
each machine's role and what it did. ``--faults`` then runs a second crawl while a fetcher
node is unplugged, every process of ``qs1`` is killed with -9 and started again, and Redis is
stopped for 20 s (``scripts/cluster/faults.py``). Everything is taken away at the end, also
after a failure or Ctrl-C: the processes (by pid), the namespaces this run created, and its
temporary folder (``--keep`` keeps the folder, with every machine's logs). Exit status 0 when
every check passed.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.core.runtime.workdir import crawl_paths
from scripts.cluster import checks
from scripts.cluster.admin_client import Admin
from scripts.cluster.db import TestRedis, start_postgres
from scripts.cluster.engine import (
    PYTHON,
    ROLES,
    WEB_PORT,
    Engine,
    base_env,
    common_env,
    crawl_facts,
    machine_env,
    one_machine_search,
)
from scripts.cluster.netns import Network, original_netns, return_to
from scripts.cluster.procs import Processes
from scripts.cluster.sites import DELAYED, choose_hosts, hosts_to_json, site_urls

ADDRESSES = {"db": "198.18.0.2", "web": "198.18.0.3", "qs0": "198.18.0.4", "qs1": "198.18.0.5",
             "fetch": "198.18.0.6", "solo": "198.18.0.7", "ctl": "198.18.0.9"}
SOLO_AGENT = "YioopySolo/0.1 (single-machine comparison crawl)"
ADMIN_USER, ADMIN_PASSWORD = "admin", secrets.token_urlsafe(16)


class Run:
    """One run of the cluster test: its machines, processes and timings."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.net = Network(f"yc{os.getpid()}")
        self.procs = Processes(self.net, tmp / "logs")
        self.hosts = choose_hosts(2)
        self.timings: list[tuple[str, float]] = []
        self._t = time.monotonic()
        self.engine: Engine | None = None
        self.redis: TestRedis | None = None
        self.site_log = tmp / "site-requests.jsonl"

    def lap(self, what: str) -> None:
        now = time.monotonic()
        self.timings.append((what, now - self._t))
        print(f"[{now - self._t:6.1f}s] {what}", flush=True)
        self._t = now

    def machines(self) -> None:
        self.net.create()
        for role, address in ADDRESSES.items():
            self.net.add_machine(role, [address])
        self.net.add_machine("site", [h.address for h in self.hosts])
        self.lap("network: " + ", ".join(f"{r} {a}" for r, a in ADDRESSES.items())
                 + ", site " + " ".join(f"{h.name}={h.address}" for h in self.hosts))

    def services(self) -> None:
        env = base_env(self.tmp)
        database = start_postgres(self.procs, self.tmp / "db" / "postgres", ADDRESSES["db"],
                                  env)
        self.redis = TestRedis(self.procs, self.tmp / "db" / "redis", ADDRESSES["db"], env)
        self.redis.start()
        common = common_env(database, self.redis.url, secrets.token_urlsafe(48),
                            secrets.token_urlsafe(50))
        envs = {role.name: machine_env(common, role, ADDRESSES[role.name],
                                       self.tmp / role.name) for role in ROLES}
        self.engine = Engine(self.procs, envs)
        self.lap(f"db: PostgreSQL {database} and Redis {ADDRESSES['db']}:6379 (password)")

    def start_engine(self) -> None:
        engine = self.engine
        assert engine is not None
        engine.manage("web", "migrate", "--noinput", "-v", "0")
        admin_env = {**engine.envs["web"], "ADMIN_USERNAME": ADMIN_USER,
                     "ADMIN_PASSWORD": ADMIN_PASSWORD}
        self.procs.run("web", [PYTHON, "manage.py", "ensure_admin"], admin_env)
        self.procs.start("sites", "site", [PYTHON, "-m", "scripts.cluster.sites",
                                           str(self.site_log), hosts_to_json(self.hosts)],
                         base_env(self.tmp))
        for role in ROLES:
            engine.up(role)
        self.procs.wait_for("sites", "sites up", 60)
        for role in ROLES:
            engine.wait_up(role)
        self.lap("engine up: " + "; ".join(f"{r.name} ({r.what}): manage.py up "
                                            + " ".join(r.up_args) for r in ROLES))

    def solo_start(self) -> None:
        env = {**base_env(self.tmp / "solo"), "VAR_DIRECTORY": str(self.tmp / "solo" / "var"),
               "CRAWLER_ALLOWED_NETWORKS": "198.18.0.0/15", "NUM_QUEUE_SERVERS": "1",
               "CRAWLER_USER_AGENT": SOLO_AGENT}
        (self.tmp / "solo").mkdir(exist_ok=True)
        self.procs.run("solo", [PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], env)
        self.procs.start("solo-crawl", "solo", [
            PYTHON, "manage.py", "crawl", *self.seeds, "--name", "single machine",
            "--queue-servers", "1", "--no-link-analysis"], env)

    @property
    def seeds(self) -> list[str]:
        return [h.base for h in self.hosts]

    def crawl(self, admin: Admin, name: str, during=None, timeout: float = 600) -> dict:
        """Add and start a crawl in the admin, run ``during`` while it runs, wait until it has
        stopped and its link analysis ran; the crawl's facts."""
        crawl_id = admin.add_crawl(name, self.seeds)
        message = admin.start(crawl_id)
        self.lap(f"crawl {crawl_id} {name!r} added and started in the admin on web: {message}")
        if during is not None:
            during(crawl_id)
        deadline = time.monotonic() + timeout
        while True:
            status = admin.status(crawl_id)
            analysis = status.get("link_analysis") or {}
            if status["status"] == "stopped" and analysis.get("state") == "idle" \
                    and analysis.get("last"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"crawl {crawl_id} still {status['status']} (link analysis"
                                   f" {analysis.get('state')}) after {timeout:.0f}s")
            time.sleep(1)
        assert self.engine is not None
        facts = crawl_facts(self.engine, crawl_id)
        self.lap(f"crawl {crawl_id} stopped: {facts['pages_fetched']} pages fetched, "
                 f"{facts['documents_indexed']} documents indexed; link analysis done")
        return facts

    def work(self, server: int) -> Path:
        return self.tmp / f"qs{server}" / "var" / "work"

    def cluster_urls(self, timestamp: int) -> dict[int, set[str]]:
        return {n: checks.indexed_urls(self.work(n), n, timestamp) for n in (0, 1)}

    def solo_urls(self) -> set[str]:
        proc = self.procs.running["solo-crawl"]
        proc.wait(timeout=600)
        self.procs.forget("solo-crawl")
        timestamps = sorted(int(p.name.removeprefix("IndexData")) for p in (
            self.tmp / "solo" / "var" / "work" / "qs0").glob("IndexData*")
            if p.name.removeprefix("IndexData").isdigit())
        if proc.returncode != 0 or not timestamps:
            raise RuntimeError(f"the single-machine crawl failed:\n{self.procs.tail('solo-crawl')}")
        return checks.indexed_urls(self.tmp / "solo" / "var" / "work", 0, timestamps[-1])

    def ranking(self, admin: Admin, timestamp: int) -> checks.Check:
        """The web's top 10 against one machine's over the same bundles, compared again (5 s
        later, at most 3 times) while they differ: after the analysis a queue server re-orders
        its finished partitions by the new scores, which changes Doc Rank meanwhile."""
        assert self.engine is not None
        queries = checks.ranking_queries(self.hosts)
        bundles = [crawl_paths(self.work(n) / f"qs{n}", timestamp)["index"] for n in (0, 1)]
        for attempt in range(1, 4):
            web = {q: admin.search(q, timestamp, num=10, explain=True) for q in queries}
            one = one_machine_search(self.engine, bundles, queries)
            if all(checks.top_ten(web[q]) == one.get(q) for q in queries) or attempt == 3:
                return checks.check_same_ranking(web, one, attempt,
                                                 self.tmp / "web" / "var" / "work")
            time.sleep(5)
        raise AssertionError("unreachable")

    def verify(self, admin: Admin, facts: dict) -> list[checks.Check]:
        timestamp = facts["timestamp"]
        urls = self.cluster_urls(timestamp)
        log = checks.site_log(self.site_log)
        roles = {a: r for r, a in ADDRESSES.items()}
        answers = {h.name: admin.search(h.word, timestamp) for h in self.hosts}
        delayed = next(h for h in self.hosts if h.name == DELAYED)
        return [
            checks.check_fetchers(facts, [e for e in log if e["ua"] != SOLO_AGENT],
                                  {r: ADDRESSES[r] for r in ("qs0", "qs1", "fetch")}),
            checks.check_shards(facts, urls, self.hosts),
            checks.check_same_urls(urls[0] | urls[1], self.solo_urls(), site_urls(self.hosts)),
            checks.check_search(answers, self.hosts),
            checks.check_link_analysis(facts, {n: self.work(n) for n in (0, 1)}, timestamp,
                                       urls),
            checks.check_politeness(log, delayed, roles, SOLO_AGENT),
            self.ranking(admin, timestamp),
            checks.check_fetch_node_scores(self.tmp / "fetch" / "var" / "work", timestamp),
        ]

    def teardown(self) -> list[str]:
        self.procs.stop_all(order=[f"{r.name}-up" for r in ROLES]
                            + ["solo-crawl", "sites", "redis", "postgres"])
        return self.net.destroy()


def report(results: list[checks.Check], timings: list[tuple[str, float]]) -> bool:
    print("\n== Machines and what they did ==")
    for result in results:
        print(f"[{'PASS' if result.ok else 'FAIL'}] {result.name}")
        for line in result.lines:
            print(line)
    print("\n== Timings ==")
    for what, seconds in timings:
        print(f"{seconds:7.1f}s  {what[:100]}")
    print(f"{sum(s for _, s in timings):7.1f}s  in all")
    return all(r.ok for r in results)


def preflight() -> None:
    if os.geteuid() != 0:
        sys.exit("run as root: the test creates network namespaces (sudo make test-cluster)")
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        sys.exit("needs iproute2's ip and util-linux's unshare")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", action="store_true",
                        help="then a second crawl with a fetcher node unplugged, qs1 killed "
                             "with -9 and restarted, Redis stopped for 20 s")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs)")
    args = parser.parse_args()
    preflight()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    tmp = Path(tempfile.mkdtemp(prefix="yioopy-cluster-"))
    tmp.chmod(0o711)  # PostgreSQL runs as its own user below it
    run, home, results = Run(tmp), original_netns(), []
    try:
        run.machines()
        run.services()
        run.start_engine()
        run.net.enter("ctl")  # from here the driver is the operator's machine
        admin = Admin(f"http://{ADDRESSES['web']}:{WEB_PORT}", ADMIN_USER, ADMIN_PASSWORD)
        run.solo_start()
        facts = run.crawl(admin, "cluster")
        results = run.verify(admin, facts)
        run.lap("checks")
        if args.faults:
            from scripts.cluster.faults import fault_run
            results += fault_run(run, admin, facts)
    except KeyboardInterrupt:
        print("interrupted: cleaning up", flush=True)
        results.append(checks.Check("interrupted", False))
    except Exception as exc:  # reported with the machines' logs, then cleaned up
        print(f"FAILED: {exc}", flush=True)
        for name in sorted(p.stem for p in (tmp / "logs").glob("*.log")):
            print(f"--- {name} (end) ---\n{run.procs.tail(name, 1500)}")
        results.append(checks.Check(f"run: {exc}"[:200], False))
    finally:
        return_to(home)
        problems = run.teardown()
        for problem in problems:
            print("cleanup:", problem)
        print(f"logs kept in {tmp}" if args.keep else f"removed {tmp}")
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if report(results, run.timings) and results else 1


if __name__ == "__main__":
    sys.exit(main())
