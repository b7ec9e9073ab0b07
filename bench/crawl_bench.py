#!/usr/bin/env python
"""Crawl the local web through the engine's real processes, and Scrapy over the same hosts in
the same run, and compare them.

    .venv/bin/python bench/crawl_bench.py [--tier default|large|both] [--fetchers 2]
                                          [--max-seconds 2400] [--scrapy-rate R]
                                          [--scrapy-2proc-rate R] [--max-links N]
                                          [--byte-range N] [--log-level L] [--keep DIR]

For each tier (``--tier both``: the default tier, then the large tier): starts the local web
(../shared/localweb: setup.sh and start.sh, as root) if it is not up; then, in a private
temporary directory, an embedded Redis, the queue server (``run_queue_server``) with its inbox
worker, and a Celery fetcher worker with ``--fetchers`` processes. A crawl of the tier's root
pages (default tier: its 12 hosts; large tier: those and the large tier's 3), restricted to
those hosts (the admin's "Restrict to seeds"), is created and started through the services, as
the admin's Start button does, and runs until it finishes by itself (or ``--max-seconds``).

Then Scrapy (../shared/peers/scrapy_crawl.py: 32 concurrent requests, 8 per host, robots.txt
and Crawl-delay obeyed; in its own virtual environment, PEERS_VENV, made with pip if missing)
crawls exactly the same hosts (``--hosts``), twice: as one process, and as two processes at the
same time with the hosts split between them (about the same number of pages each; the pair's
pages summed over the span from the first one's start to the last one's end). Each is given
max(2 x the engine's crawl time, 120 s) to finish and is measured over its own elapsed time.
``--scrapy-rate`` / ``--scrapy-2proc-rate`` replace that measurement by a fixed rate (pages/s).

Printed, one figure a line (``name: value unit``; with ``--tier both`` names start with the
tier):

* the engine: pages fetched, pages searchable (page documents in its index), their rates per
  second of the crawl; pages robots.txt allows, pages reachable by links from the roots (a walk
  of the served files with the local web's own link pattern), how many of those the crawl
  requested (nginx log) and ``coverage``, the last over the second; distinct urls answered 2xx
  and answers to a url already fetched (nginx log: a redirect from an alias url such as
  /dev/x.html to a page already fetched is followed and fetched again);
* memory: each process's peak (VmHWM; a Celery worker's busiest process), ``peak_memory_total``
  (the peaks of every process, Celery's parents and children and Redis included, summed: an
  upper bound, since peaks need not coincide and forked pages are counted in each process),
  and each process's RSS medians over the crawl's second and last quarter;
* CPU over the crawl (the processes' CPU seconds from the crawl's start to its end):
  ``cpu_<process>`` seconds, ``cpu_per_page_<process>`` milliseconds per page fetched, and
  ``cores_used`` (all of it over the crawl's elapsed time);
* requests to robots-disallowed urls and crawl-delay gaps shorter than the delay, read from the
  local web's nginx log by ../shared/peers/check_access_log.py and ``politeness_floor``: the fewest
  seconds the engine's own requests allowed while keeping Crawl-delay (requests to the most
  delayed host times its delay; requests.readthedocs.io has ``Crawl-delay: 1``), the same for
  each Scrapy run, and ``x_scrapy_ceiling``: the highest ``x_scrapy`` the engine could have had
  at its floor. Where Scrapy's elapsed time is near its floor, Scrapy is bound by politeness
  and not by its speed, and the ratio cannot grow past the ceiling however fast the engine is;
* Scrapy's runs (``scrapy_*``, ``scrapy_2proc_*``: hosts, time bound, finished, pages, elapsed,
  rate, peak memory summed), ``x_scrapy`` (the engine's pages searchable per second over
  single-process Scrapy's pages per second) and ``x_scrapy_2proc`` (over the pair's), and
  beside each the same over distinct urls (``x_scrapy_distinct``: Scrapy's dupefilter never
  fetches a url twice, so this one compares the same pages).

Then one ``target:`` line per target: on each tier, ``x_scrapy`` >= 2.0 and ``x_scrapy_2proc``
>= 1.2 (both with the crawl finished), no request to a disallowed url, no short crawl-delay gap;
on the large tier, ``peak_memory_total`` <= 2 GiB and coverage >= 0.95; with ``--tier both``,
flat memory (each process's large-tier peak at most 20% above its default-tier peak).

Page Options keep their defaults (whole pages indexed, every link of a page kept, a byte range
of 4,000,000), as a user's crawl has them; ``--max-links`` and ``--byte-range`` set "maximum
links to keep per page" and "byte range to download" instead. The ``options:`` line says which
options were used. The manuals' 37,000 links to the real web are indexed as link documents but
their hosts are not queued (each would cost a robots.txt request that fails at DNS here).
"""

from __future__ import annotations

import argparse
import collections
import os
import secrets
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.robotparser
from pathlib import Path
from urllib.parse import urlsplit

import crawl_peers as peers
from crawl_peers import children, cpu, hwm

ROOT = peers.ROOT
LOCALWEB = peers.LOCALWEB
ACCESS_LOG = peers.ACCESS_LOG
# unique to this run: other benchmarks crawl the same local web with "YioopyBench/0.1", and the
# nginx log checks must see this crawl's requests only
USER_AGENT = f"YioopyBench/0.1 (crawl_bench {os.getpid()})"
GOAL_X_SCRAPY = 2.0
GOAL_X_SCRAPY_2PROC = 1.2
GOAL_LARGE_MEMORY_MIB = 2048.0
GOAL_LARGE_COVERAGE = 0.95
GOAL_MEMORY_FLAT = 1.2
STAGES = ("fetchers", "queue-server", "inbox")  # the processes given CPU per page

sys.path.insert(0, str(ROOT))

from crawler.core.processing.config import MAX_LINKS_LIMIT  # noqa: E402
from operations.embedded_redis import embedded_redis_spec  # noqa: E402
from operations.redis_urls import unix_socket_url  # noqa: E402


class Engine:
    def __init__(self, directory: Path, fetchers: int, log_level: str = "WARNING") -> None:
        self.dir = directory
        self.fetchers = fetchers
        # the embedded Redis as `manage.py up` starts it: a unix socket, a password
        self.redis_socket = directory / "redis" / "redis.sock"
        self.redis_password = secrets.token_urlsafe(32)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("DATABASE_URL", "REDIS_URL")}
        self.env.update({
            "DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
            "VAR_DIRECTORY": str(directory / "var"),
            "DATABASE_URL": f"sqlite:///{directory / 'db.sqlite3'}",
            "REDIS_URL": unix_socket_url(self.redis_socket, self.redis_password),
            "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8",
            "CRAWLER_CA_BUNDLE": str(peers.CA_BUNDLE),
            "CRAWLER_USER_AGENT": USER_AGENT,
            "NUM_QUEUE_SERVERS": "1", "INDEX_REFRESH_SECONDS": "5",
            "DOWNLOAD_SIZE_INTERVAL": "500", "QUEUE_SERVER_MAX_SCHEDULES": str(fetchers + 1),
            "LOG_LEVEL": log_level, "PYTHONUNBUFFERED": "1",
        })
        self.procs: dict[str, subprocess.Popen] = {}

    def manage(self, *args: str) -> str:
        out = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                             capture_output=True, text=True, check=True)
        return out.stdout

    def start(self, name: str, argv: list[str]) -> None:
        log = open(self.dir / f"{name}.log", "w")
        self.procs[name] = subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def boot(self) -> None:
        spec = embedded_redis_spec(self.redis_socket, self.redis_password)
        self.start("redis", [*spec.argv, "--appendonly", "no"])  # no file: nothing to keep
        self.manage("migrate", "--noinput", "-v0")
        celery = [sys.executable, "-m", "celery", "-A", "searchsite", "worker",
                  "--without-gossip", "--without-mingle", "--loglevel", "WARNING"]
        self.start("inbox", [*celery, "-Q", "qs.0", "-c", "1", "-n", "bench-qs0@%h"])
        self.start("fetchers", [*celery, "-Q", "fetch", "-c", str(self.fetchers), "-n",
                                "bench-fetch@%h"])
        self.start("queue-server", [sys.executable, "manage.py", "run_queue_server",
                                    "--server", "0"])

    def start_crawl(self, seeds: list[str], exclude_hosts: list[str],
                    max_links: int | None = None, byte_range: int | None = None) -> None:
        disallowed = "\n".join(f"domain:{host}" for host in exclude_hosts)
        self.manage("shell", "-v", "0", "-c", textwrap.dedent(f"""
            from crawler import services
            from crawler.models import Crawl
            options = services.page_options_default_get()
            if {max_links!r} is not None:
                options.max_links_to_extract = {max_links!r}
            if {byte_range!r} is not None:
                options.byte_range = {byte_range!r}
            options.full_clean()
            options.save()
            crawl = Crawl.objects.create(name="bench", disallowed_sites={disallowed!r},
                                         restrict_to_seeds=True, page_options=options)
            services.seed_sites_add_bulk(crawl.pk, {chr(10).join(seeds)!r})
            services.crawl_start(crawl.pk)
        """))

    def crawl_row(self) -> dict:
        con = sqlite3.connect(f"file:{self.dir / 'db.sqlite3'}?mode=ro", uri=True, timeout=30)
        try:
            con.row_factory = sqlite3.Row
            row = con.execute("select * from crawler_crawl").fetchone()
            return dict(row) if row else {}
        finally:
            con.close()

    def peak_memory(self) -> dict[str, float]:
        """VmHWM (MiB) of each process and, for Celery, of its busiest child."""
        peaks = {}
        for name, proc in self.procs.items():
            pids = [proc.pid] + children(proc.pid)
            values = [hwm(pid) for pid in pids]
            peaks[name] = max([v for v in values if v is not None], default=0.0)
        return peaks

    def peak_memory_total(self) -> float:
        """VmHWM (MiB) of every process (Celery's parents and children, Redis), summed."""
        return sum(hwm(pid) or 0.0 for proc in self.procs.values()
                   for pid in [proc.pid] + children(proc.pid))

    def rss(self) -> dict[str, float]:
        """RSS now (MiB) of each process and, for Celery, of its biggest child."""
        now = {}
        for name, proc in self.procs.items():
            values = [hwm(pid, "VmRSS") for pid in [proc.pid] + children(proc.pid)]
            now[name] = max([v for v in values if v is not None], default=0.0)
        return now

    def cpu_seconds(self) -> dict[str, float]:
        """User + system CPU seconds of each process and its (live or waited-for) children."""
        out = {}
        for name, proc in self.procs.items():
            out[name] = sum(cpu(pid) for pid in [proc.pid] + children(proc.pid))
        return out

    def stop(self) -> None:
        for name in ["queue-server", "fetchers", "inbox", "redis"]:
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def crawl_tier(args: argparse.Namespace, tier: str) -> dict:
    """Crawl one tier through fresh processes, then Scrapy over the same hosts: the figures."""
    seeds = peers.ensure_localweb(tier)
    samples: list[tuple[float, dict[str, float]]] = []  # (seconds into the crawl, RSS)
    with tempfile.TemporaryDirectory(prefix="crawl-bench-") as tmp:
        engine = Engine(Path(tmp), args.fetchers, args.log_level)
        try:
            engine.boot()
            time.sleep(3)
            since = time.time()
            cpu_before = engine.cpu_seconds()  # the processes' start-up is left out
            engine.start_crawl(seeds, peers.other_tier_hosts(tier), args.max_links,
                               args.byte_range)
            started = time.monotonic()
            row: dict = {}
            while time.monotonic() - started < args.max_seconds:
                row = engine.crawl_row()
                samples.append((time.monotonic() - started, engine.rss()))
                if row.get("status") in ("stopped", "resumable", "closed"):
                    break
                time.sleep(1)
            elapsed = time.monotonic() - started
            memory, memory_total = engine.peak_memory(), engine.peak_memory_total()
            cpu_used = {name: seconds - cpu_before.get(name, 0.0)
                        for name, seconds in engine.cpu_seconds().items()}
            finished = row.get("status") == "stopped"
        finally:
            engine.stop()
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                for log_file in Path(tmp).glob("*.log"):
                    (args.keep / f"{tier}-{log_file.name}").write_bytes(log_file.read_bytes())
        until = time.time()
        index = Path(tmp) / "var" / "work" / "qs0" / f"IndexData{row.get('timestamp')}"
        pages = peers.searchable_pages(index) if index.exists() else 0
    return {"tier": tier, "row": row, "elapsed": elapsed, "memory": memory,
            "fetches": peers.successful_fetches(since, until, USER_AGENT),
            "memory_total": memory_total, "cpu": cpu_used, "finished": finished,
            "pages": pages, "log": peers.access_log_check(since, until, USER_AGENT),
            "samples": samples, "coverage": tier_coverage(tier, since, until),
            **scrapy_runs(args, tier, elapsed)}


def scrapy_runs(args: argparse.Namespace, tier: str, engine_seconds: float) -> dict:
    """Scrapy over exactly the tier's hosts, as one process and as two at the same time (the
    hosts split by pages), each bounded by ``peers.scrapy_time_bound``; a run is skipped
    (None) when its rate is given by ``--scrapy-rate`` / ``--scrapy-2proc-rate``."""
    hosts = peers.tier_hosts(tier)
    bound = peers.scrapy_time_bound(engine_seconds)
    single = pair = None
    if args.scrapy_rate is None:
        single = peers.scrapy_crawls([hosts], bound)
    if args.scrapy_2proc_rate is None:
        weights = {host: peers.host_pages(host) for host in hosts}
        pair = peers.scrapy_crawls(peers.split_hosts(hosts, weights, 2), bound)
    return {"scrapy": single, "scrapy_2proc": pair}


def rss_growth(samples: list[tuple[float, dict[str, float]]]) -> dict[str, tuple[float, float]]:
    """Per process: (median RSS over the crawl's second quarter, over its last quarter). Flat
    memory means the second is not much above the first."""
    if len(samples) < 8:
        return {}
    total = samples[-1][0]
    out = {}
    for name in samples[-1][1]:
        early = [r[name] for t, r in samples if total / 4 <= t < total / 2 and r.get(name)]
        late = [r[name] for t, r in samples if t >= 3 * total / 4 and r.get(name)]
        if early and late:
            out[name] = (statistics.median(early), statistics.median(late))
    return out


def reachable_pages(tier: str) -> tuple[int, set[str]] | None:
    """(pages of the tier that robots.txt allows, the set of those reachable from the hosts'
    root pages by following every link): a breadth-first walk of the served files with the
    local web's own page list, link pattern and canonical form (../shared/localweb/sites.py and
    manifest.py). What no link leads to, no crawler that follows links can reach: the large
    tier has about 12,000 such pages (rustdoc's redirect stubs). None if those modules are
    missing."""
    sys.path.insert(0, str(LOCALWEB))
    try:
        import manifest  # ../shared/localweb
        import sites as localweb_sites
    except ImportError:
        return None
    from localweb_links import link_target  # (imports manifest, found above)
    served = localweb_sites.sites(tier)
    by_host = {site["host"]: site for site in served}
    files: dict[str, str] = {}
    for site in served:
        files[localweb_sites.root_url(site)] = str(
            Path(localweb_sites.BUILD) / "www" / site["host"] / "index.html")
        for url, path, _ in localweb_sites.walk_pages(site):
            files[url] = path
    robots = {}
    for site in served:
        rules = urllib.robotparser.RobotFileParser()
        rules.parse(localweb_sites.ROBOTS.get(site["host"], localweb_sites.ALLOW_ALL)
                    .splitlines())
        robots[site["host"]] = rules
    allowed = {url for url in files if robots[urlsplit(url).hostname].can_fetch("*", url)}
    seen = {localweb_sites.root_url(site) for site in served}
    queue = collections.deque(seen)
    while queue:
        url = queue.popleft()
        for match in manifest.HREF.finditer(manifest.read_page(files[url])):
            target = link_target(url, match.group(2), by_host)
            if target in allowed and target not in seen:
                seen.add(target)
                queue.append(target)
    return len(allowed), seen


def requested_pages(since: float, until: float) -> set[str]:
    """The urls this run's crawler requested between ``since`` and ``until``, from the nginx
    log, in the local web's canonical form (``dir/`` as ``dir/index.html``, but for the
    roots)."""
    out = set()
    with open(ACCESS_LOG, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if USER_AGENT not in line:
                continue
            fields = line.split('"')
            head, request = fields[0].split(), fields[1].split() if len(fields) > 1 else []
            if len(head) < 2 or len(request) < 2 or not head[0].replace(".", "").isdigit():
                continue
            if not since <= float(head[0]) <= until:
                continue
            path = request[1].split("?")[0].split("#")[0]
            if path.endswith("/") and path != "/":  # a host's root page is listed as "/"
                path += "index.html"
            out.add(f"https://{head[1]}{path}")
    return out


def tier_coverage(tier: str, since: float, until: float) -> tuple[int, int, int] | None:
    """(pages robots.txt allows, of those the ones reachable by links from the roots, of
    those the ones this crawl requested)."""
    found = reachable_pages(tier)
    if found is None:
        return None
    allowed, reachable = found
    return allowed, len(reachable), len(reachable & requested_pages(since, until))


def report_engine(args: argparse.Namespace, run: dict, prefix: str) -> None:
    """Print the engine crawl's figures, one a line, names prefixed with ``prefix``."""
    row, log, elapsed = run["row"], run["log"], run["elapsed"]
    fetched = int(row.get("pages_fetched", 0))
    print(f"{prefix}tier: {run['tier']}")
    print(f"{prefix}hosts: {len(peers.tier_hosts(run['tier']))} hosts")
    print(f"{prefix}fetcher_processes: {args.fetchers} processes")
    print(f"{prefix}crawl_finished: {int(run['finished'])} bool")
    print(f"{prefix}elapsed: {elapsed:.1f} s")
    print(f"{prefix}pages_fetched: {fetched} pages")
    print(f"{prefix}pages_searchable: {run['pages']} pages")
    if run["coverage"] is not None:
        allowed, reachable, reached = run["coverage"]
        print(f"{prefix}pages_allowed: {allowed} pages")
        print(f"{prefix}pages_reachable: {reachable} pages")
        print(f"{prefix}pages_reachable_fetched: {reached} pages")
        print(f"{prefix}coverage: {reached / max(reachable, 1):.3f} fetched/reachable")
    responses, distinct = run["fetches"]
    print(f"{prefix}pages_distinct_fetched: {distinct} pages (distinct urls answered 2xx)")
    print(f"{prefix}pages_fetched_again: {responses - distinct} pages (2xx answers to a url "
          "already fetched)")
    print(f"{prefix}documents_indexed: {row.get('documents_indexed', 0)} documents")
    print(f"{prefix}fetch_rate: {fetched / elapsed:.1f} pages/s")
    print(f"{prefix}searchable_rate: {run['pages'] / elapsed:.1f} pages/s")
    for name, mib in sorted(run["memory"].items()):
        print(f"{prefix}peak_memory_{name.replace('-', '_')}: {mib:.0f} MiB")
    print(f"{prefix}peak_memory_total: {run['memory_total']:.0f} MiB")
    for name, (early, late) in sorted(rss_growth(run["samples"]).items()):
        key = name.replace("-", "_")
        print(f"{prefix}rss_second_quarter_{key}: {early:.0f} MiB")
        print(f"{prefix}rss_last_quarter_{key}: {late:.0f} MiB")
    for name, seconds in sorted(run["cpu"].items()):
        print(f"{prefix}cpu_{name.replace('-', '_')}: {seconds:.1f} s")
    for name in STAGES:
        per_page = 1000 * run["cpu"].get(name, 0.0) / max(fetched, 1)
        print(f"{prefix}cpu_per_page_{name.replace('-', '_')}: {per_page:.1f} ms/page")
    print(f"{prefix}cores_used: {sum(run['cpu'].values()) / elapsed:.2f} cores")
    peers.print_server_side(prefix, log, elapsed, "elapsed")


def scrapy_rate(run: dict, key: str, fixed: float | None) -> tuple[float | None, str]:
    """(Scrapy's pages per second for the run ``key``, ``scrapy`` or ``scrapy_2proc``, or the
    ``fixed`` rate given instead; where it comes from). None when Scrapy did not run."""
    measured: peers.ScrapyRun | None = run[key]
    if measured is None:
        return fixed, "fixed rate given"
    if measured.ok and measured.rate > 0:
        return measured.rate, "Scrapy in this run"
    return None, "Scrapy did not run"


def report_scrapy(args: argparse.Namespace, run: dict, prefix: str) -> dict[str, tuple]:
    """Print Scrapy's figures and the ratios to it; the ratios by name (``x_scrapy``,
    ``x_scrapy_2proc``): (the engine's pages searchable per second over Scrapy's pages per
    second or None when Scrapy did not run, where Scrapy's rate comes from, the most the
    engine's politeness floor allows or None)."""
    ratios: dict[str, tuple] = {}
    for key, fixed in (("scrapy", args.scrapy_rate), ("scrapy_2proc", args.scrapy_2proc_rate)):
        if run[key] is not None:
            peers.print_scrapy(prefix, key, run[key])
        else:
            print(f"{prefix}{key}_rate: {fixed:.1f} pages/s (fixed, given)")
        rate, source = scrapy_rate(run, key, fixed)
        ratio = run["pages"] / run["elapsed"] / rate if rate else None
        floor, _ = peers.politeness_floor(run["log"])
        ceiling = run["pages"] / floor / rate if rate and floor else None
        ratios[f"x_{key}"] = (ratio, source, ceiling)
        shown = f"{ratio:.2f}" if ratio is not None else "n/a"
        print(f"{prefix}x_{key}: {shown} ratio (engine pages searchable/s over {key}'s "
              f"pages/s; {source})")
        if ceiling:  # what the engine's own requests to delayed hosts allow at best
            print(f"{prefix}x_{key}_ceiling: {ceiling:.2f} ratio (x_{key} had the engine "
                  "taken only its politeness floor)")
        if rate:  # the same over distinct urls: no page counted twice
            distinct = run["fetches"][1] / run["elapsed"] / rate
            print(f"{prefix}x_{key}_distinct: {distinct:.2f} ratio (engine distinct urls "
                  f"fetched/s over {key}'s pages/s)")
    return ratios


def tier_targets(run: dict, ratios: dict[str, tuple]) -> list[str]:
    """The target lines of one tier's crawl."""
    tier, log = run["tier"], run["log"]
    lines = []
    for name, goal in (("x_scrapy", GOAL_X_SCRAPY), ("x_scrapy_2proc", GOAL_X_SCRAPY_2PROC)):
        ratio, source, ceiling = ratios[name]
        met = ratio is not None and ratio >= goal and run["finished"]
        value = f"{ratio:.2f}" if ratio is not None else "n/a"
        bound = f"; at most {ceiling:.2f} at the politeness floor" if ceiling else ""
        lines.append(peers.target_line(f"{tier} tier {name}", value,
                                       f">= {goal:.1f}, {source}{bound}", met))
    violations, gaps = log["robots_violations"], peers.short_gaps(log)
    lines.append(peers.target_line(f"{tier} tier requests to disallowed urls", str(violations),
                                   "0", violations == 0))
    lines.append(peers.target_line(f"{tier} tier crawl-delay gaps shorter than the delay",
                                   str(gaps), "0", gaps == 0))
    if tier == "large":
        total = run["memory_total"]
        lines.append(peers.target_line("large tier peak memory of all processes together",
                                       f"{total:.0f} MiB", f"<= {GOAL_LARGE_MEMORY_MIB:.0f} MiB",
                                       total <= GOAL_LARGE_MEMORY_MIB))
        coverage = (run["coverage"][2] / max(run["coverage"][1], 1)
                    if run["coverage"] is not None else None)
        lines.append(peers.target_line(
            "large tier coverage of reachable pages",
            f"{coverage:.3f}" if coverage is not None else "n/a",
            f">= {GOAL_LARGE_COVERAGE:.2f}",
            coverage is not None and coverage >= GOAL_LARGE_COVERAGE))
    return lines


def memory_flat_target(runs: dict[str, dict]) -> str:
    """Print each process's peak memory ratio, large tier over default tier; the target line
    (at most GOAL_MEMORY_FLAT for every process but Redis, and the large crawl finished)."""
    base, large = runs["default"]["memory"], runs["large"]["memory"]
    ratios = {name: large[name] / base[name] for name in large
              if name != "redis" and base.get(name)}
    for name, ratio in sorted(ratios.items()):
        print(f"memory_ratio_{name.replace('-', '_')}: {ratio:.2f} large/default")
    worst = max(ratios.values(), default=float("inf"))
    return peers.target_line("peak memory per process, large tier over default tier",
                             f"{worst:.2f}", f"<= {GOAL_MEMORY_FLAT:.2f}",
                             worst <= GOAL_MEMORY_FLAT and runs["large"]["finished"])


def options_line(args: argparse.Namespace, given: set[str]) -> str:
    """``options: ...``: every option's value, and whether each is its default."""
    shown = {
        "tier": args.tier, "fetchers": args.fetchers, "max_seconds": args.max_seconds,
        "scrapy_rate": args.scrapy_rate if args.scrapy_rate is not None else "measured",
        "scrapy_2proc_rate": (args.scrapy_2proc_rate if args.scrapy_2proc_rate is not None
                              else "measured"),
        "max_links_to_extract": args.max_links if args.max_links is not None
        else "page-options-default",
        "byte_range": args.byte_range if args.byte_range is not None
        else "page-options-default",
    }
    text = " ".join(f"{name}={value}" for name, value in shown.items())
    return f"options: {text} ({'all defaults' if not given else 'given: ' + ','.join(sorted(given))})"


def parse_args() -> tuple[argparse.Namespace, set[str]]:
    """The command line, and the names of the options given on it (not left to default)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fetchers", type=int, default=2, help="fetcher processes")
    parser.add_argument("--tier", choices=["default", "large", "both"], default="default",
                        help="both: the default tier, then the large tier, and the flat memory "
                             "target (large-tier peaks at most 20%% above the default's)")
    parser.add_argument("--max-seconds", type=float, default=2400, help="per crawl")
    parser.add_argument("--scrapy-rate", type=float, default=None,
                        help="compare with this rate (pages/s) instead of single-process "
                             "Scrapy crawling the same hosts in this run")
    parser.add_argument("--scrapy-2proc-rate", type=float, default=None,
                        help="compare with this rate (pages/s) instead of two Scrapy processes "
                             "crawling the same hosts in this run")
    parser.add_argument("--log-level", default="WARNING", help="of the engine's processes")
    parser.add_argument("--max-links", type=int, default=None,
                        help="Page Options 'maximum links to keep per page' for the crawls "
                             "(default: the Page Options default, every link up to "
                             f"{MAX_LINKS_LIMIT:,})")
    parser.add_argument("--byte-range", type=int, default=None,
                        help="Page Options 'byte range to download' for the crawls (default: "
                             "the Page Options default)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy the processes' logs into this folder")
    args = parser.parse_args()
    if (args.scrapy_rate is not None or args.scrapy_2proc_rate is not None) and \
            args.tier == "both":
        parser.error("--scrapy-rate and --scrapy-2proc-rate apply to one tier")
    given = {name for name, value in vars(args).items() if value != parser.get_default(name)}
    return args, given


def main() -> int:
    args, given = parse_args()
    tiers = ["default", "large"] if args.tier == "both" else [args.tier]
    print(options_line(args, given), flush=True)
    runs = {tier: crawl_tier(args, tier) for tier in tiers}
    targets: list[str] = []
    for tier, run in runs.items():
        prefix = f"{tier}_" if len(runs) > 1 else ""
        report_engine(args, run, prefix)
        targets += tier_targets(run, report_scrapy(args, run, prefix))
    if len(runs) == 2:
        targets.append(memory_flat_target(runs))
    for line in targets:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
