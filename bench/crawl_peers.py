"""The local web and the Scrapy peer, as the crawl benchmarks use them (bench/crawl_bench.py,
bench/local_crawl_bench.py).

* ``ensure_localweb(tier)`` sets up and starts the local web (../shared/localweb) if needed;
  ``tier_sites``, ``tier_roots`` and ``tier_hosts`` name exactly the hosts a tier's crawl covers
  (``default``: its 12 hosts; ``large``: those and the large tier's 3), and ``split_hosts``
  deals them into groups of about the same number of pages.
* ``scrapy_crawls(groups, seconds)`` runs ../shared/peers/scrapy_crawl.py (32 concurrent
  requests, 8 per host, robots.txt and Crawl-delay obeyed), in its own virtual environment
  (``PEERS_VENV``, made and given Scrapy with pip when missing), as one process per group of
  hosts, all at the same time, each with ``--hosts`` set to its group and ``--max-seconds`` to
  ``seconds``. Its pages are the processes' pages summed, its elapsed time the span from the
  first process's crawl start to the last one's end (each start taken as its exit less its own
  elapsed time, so that the Python start-up of a process is left out, as Scrapy's own
  ``elapsed_s`` leaves it out of a single process's rate).
* ``scrapy_time_bound(engine_seconds)``: max(2 x the engine's crawl time, 120 s), the time
  Scrapy is given to finish the same hosts.
* ``access_log_check`` reads a crawl's requests back from the local web's nginx log
  (robots-disallowed urls fetched, gaps shorter than a Crawl-delay), ``successful_fetches``
  its successful responses and how many distinct urls they were; ``searchable_pages``
  counts the page documents of an engine index; ``target_line`` formats one target.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import venv
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from indexer.core.bundle.reader import IndexBundleReader  # noqa: E402

SHARED = ROOT.parent / "shared"
LOCALWEB = SHARED / "localweb"
SCRAPY_USER_AGENT = "localweb-eval-scrapy/"  # what ../shared/peers/scrapy_crawl.py sends
PEERS_VENV = Path(os.environ.get("PEERS_VENV", "/tmp/yioopy-whoosh-venv"))
SCRAPY_SCRIPT = SHARED / "peers" / "scrapy_crawl.py"
SCRAPY_MIN_SECONDS = 120.0  # Scrapy's time bound: at least this ...
SCRAPY_TIME_FACTOR = 2.0  # ... and at least this many times the engine's crawl time
# Scrapy's CLOSESPIDER_TIMEOUT lets it finish what is in flight: a process still running this
# long after its bound is asked to stop (SIGINT), and killed STOP_GRACE seconds after that
STOP_AFTER = 120.0
STOP_GRACE = 60.0
CA_BUNDLE = LOCALWEB / "build" / "tls" / "cert.pem"
ACCESS_LOG = Path("/tmp/localweb-eval/access.log")  # where ../shared/localweb/start.sh logs


def _sites_module():
    """The local web's table of sites (../shared/localweb/sites.py)."""
    if str(LOCALWEB) not in sys.path:
        sys.path.insert(0, str(LOCALWEB))
    import sites

    return sites


def ensure_localweb(tier: str) -> list[str]:
    """Set the local web up for ``tier`` if its config is missing or smaller (setup.sh, as
    root), start its nginx if it is not running (start.sh), and return the tier's root urls."""
    conf = LOCALWEB / "build" / "nginx.conf"
    tier_file = LOCALWEB / "build" / "TIER"
    want_large = tier == "large"
    have = tier_file.read_text().strip() if tier_file.exists() else ""
    if not conf.exists() or (want_large and have != "large"):
        args = ["sh", str(LOCALWEB / "setup.sh")] + (["--large"] if want_large else [])
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["sh", str(LOCALWEB / "start.sh")], check=True, stdout=subprocess.DEVNULL)
    return tier_roots(tier)


def tier_sites(tier: str) -> list[dict]:
    """The local web's sites a crawl of ``tier`` covers: the default tier's for ``default``,
    the default and the large tier's for ``large`` (in the table's order)."""
    if tier not in ("default", "large"):
        raise ValueError(f"no tier {tier!r}")
    tiers = {"default"} | ({"large"} if tier == "large" else set())
    return [site for site in _sites_module().SITES if site["tier"] in tiers]


def tier_hosts(tier: str) -> list[str]:
    """The hostnames of ``tier_sites(tier)``."""
    return [site["host"] for site in tier_sites(tier)]


def tier_roots(tier: str) -> list[str]:
    """The root urls (``https://host/``) of ``tier_sites(tier)``: a crawl's seeds."""
    return [f"https://{host}/" for host in tier_hosts(tier)]


def other_tier_hosts(tier: str) -> list[str]:
    """Hosts the local web may serve that a crawl of ``tier`` leaves out (the default tier's
    root pages link the large tier's roots once the large tier is installed)."""
    covered = set(tier_hosts(tier))
    return [site["host"] for site in _sites_module().SITES if site["host"] not in covered]


def host_pages(host: str) -> int:
    """The HTML pages the local web serves for ``host`` (0 when its package is missing)."""
    sites = _sites_module()
    site = next(site for site in sites.SITES if site["host"] == host)
    return sum(1 for _ in sites.walk_pages(site)) if os.path.isdir(site["root"]) else 0


def split_hosts(hosts: list[str], weights: dict[str, int], parts: int = 2) -> list[list[str]]:
    """``hosts`` dealt into ``parts`` groups of about the same total weight (pages): the
    heaviest host first, each to the group lightest so far (ties: the first group). Every host
    is in exactly one group; a group keeps the hosts' order of ``hosts``."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    totals = [0] * parts
    group_of: dict[str, int] = {}
    for host in sorted(hosts, key=lambda h: (-weights.get(h, 0), hosts.index(h))):
        lightest = min(range(parts), key=lambda i: (totals[i], i))
        group_of[host] = lightest
        totals[lightest] += weights.get(host, 0)
    return [[h for h in hosts if group_of[h] == i] for i in range(parts)]


def scrapy_time_bound(engine_seconds: float) -> float:
    """How long Scrapy may crawl: max(SCRAPY_TIME_FACTOR x the engine's crawl, 120 s)."""
    return max(SCRAPY_TIME_FACTOR * engine_seconds, SCRAPY_MIN_SECONDS)


@dataclass
class ScrapyRun:
    """One Scrapy measurement: one process per host group, all run at the same time."""

    groups: list[list[str]]
    seconds_bound: float
    summaries: list[dict] = field(default_factory=list)  # each process's summary.json
    span: float = 0.0  # first crawl start to last crawl end, seconds
    error: str = ""
    since: float = 0.0  # epoch seconds around the processes, for the nginx log
    until: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and len(self.summaries) == len(self.groups)

    @property
    def pages(self) -> int:
        return sum(int(s.get("pages") or 0) for s in self.summaries)

    @property
    def rate(self) -> float:
        """Pages (summed) per second of the span."""
        return self.pages / self.span if self.span > 0 else 0.0

    @property
    def peak_memory_total(self) -> float:
        """The processes' peak RSS (MiB), summed."""
        return sum(float(s.get("peak_rss_mb") or 0) for s in self.summaries)

    @property
    def finished(self) -> bool:
        """True when every process crawled its hosts to the end (not stopped by the bound)."""
        return self.ok and all(s.get("finish_reason") == "finished" for s in self.summaries)


def scrapy_python() -> Path:
    """The peers' Python (PEERS_VENV), made and given Scrapy with pip when missing."""
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        venv.create(PEERS_VENV, with_pip=True)
    if subprocess.run([str(python), "-c", "import scrapy"], capture_output=True).returncode:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "scrapy"], check=True)
    return python


def scrapy_crawls(groups: list[list[str]], seconds: float) -> ScrapyRun:
    """Run ../shared/peers/scrapy_crawl.py once per group of hosts, all at the same time, each
    crawling exactly its group for at most ``seconds``; wait for all. Errors (Scrapy not
    installable, a process failing) are kept in ``error``, never raised."""
    run = ScrapyRun(groups=groups, seconds_bound=seconds)
    try:
        python = scrapy_python()
        run.since = time.time()
        with tempfile.TemporaryDirectory(prefix="crawl-bench-scrapy-") as tmp:
            outs = [Path(tmp) / f"crawl{i}.jsonl" for i in range(len(groups))]
            logs = [open(f"{out}.stderr", "w+") for out in outs]
            procs = [subprocess.Popen(
                [str(python), str(SCRAPY_SCRIPT), "--out", str(out), "--max-pages", "10000000",
                 "--max-seconds", str(int(seconds)), "--log-level", "WARNING",
                 "--hosts", ",".join(group)],
                stdout=subprocess.DEVNULL, stderr=log)
                for out, group, log in zip(outs, groups, logs, strict=True)]
            started = time.monotonic()
            ends, errors = _wait_all(procs, logs, seconds + STOP_AFTER)
            run.until = time.time()
            if errors:
                run.error = "; ".join(errors)
                return run
            for out, end in zip(outs, ends, strict=True):
                run.summaries.append(_summary(out, started, end))
        starts = [end - float(s["elapsed_s"]) for end, s in zip(ends, run.summaries, strict=True)]
        run.span = max(ends) - min(starts)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as exc:
        run.error = run.error or f"{type(exc).__name__}: {exc}"
    return run


def _wait_all(procs: list[subprocess.Popen], logs: list, timeout: float,
              ) -> tuple[list[float], list[str]]:
    """Wait for every process: the monotonic time each was seen to exit, and a message per
    process that failed (the end of its stderr, from its open log file in ``logs``). One still running ``timeout`` seconds on is asked to stop (SIGINT:
    Scrapy closes its spider and writes its summary) and killed :data:`STOP_GRACE` seconds
    later; a process stopped so is not counted as failed."""
    deadline = time.monotonic() + timeout
    ends: list[float | None] = [None] * len(procs)
    stopped: set[int] = set()
    while any(end is None for end in ends):
        now = time.monotonic()
        for i, proc in enumerate(procs):
            if ends[i] is not None:
                continue
            if proc.poll() is not None:
                ends[i] = now
            elif now > deadline + STOP_GRACE:
                proc.kill()
                proc.wait()
                ends[i] = time.monotonic()
            elif now > deadline and i not in stopped:
                proc.send_signal(signal.SIGINT)
                stopped.add(i)
        time.sleep(0.05)
    errors = []
    for i, (proc, log) in enumerate(zip(procs, logs, strict=True)):
        log.seek(0)
        stderr = log.read()
        log.close()
        if proc.returncode and i not in stopped:
            errors.append(f"process {i} exit {proc.returncode}: {stderr.strip()[-300:]}")
    return [float(end) for end in ends], errors


def _summary(out: Path, started: float, ended: float) -> dict:
    """The summary Scrapy wrote next to ``out``, or, for a process the bench had to kill
    before it wrote one, one made from the pages in its output (each a JSON line) over the
    time it ran."""
    written = Path(f"{out}.summary.json")
    if written.exists():
        return json.loads(written.read_text())
    with open(out, "rb") as handle:
        pages = sum(1 for line in handle if line.strip().endswith(b"}"))
    return {"pages": pages, "elapsed_s": ended - started, "peak_rss_mb": 0,
            "finish_reason": "killed by the bench after its time bound"}


def children(pid: int) -> list[int]:
    """The live descendants of process ``pid`` (children, then theirs), from /proc."""
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
    """User + system CPU seconds of process ``pid`` and of its children it waited for."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # utime, stime, cutime, cstime (fields 14-17 of stat; here after the command name)
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class TreeMemory:
    """While entered, a thread reads every ``interval`` seconds the peak RSS (VmHWM) of process
    ``pid`` and of each of its descendants alive then: ``peaks`` is the highest seen per
    process, ``total`` their sum (MiB; an upper bound of the tree's peak, as peaks need not
    coincide; a process living less than ``interval`` may be missed)."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid, self.interval = pid, interval
        self.peaks: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            for pid in [self.pid, *children(self.pid)]:
                value = hwm(pid)
                if value is not None:
                    self.peaks[pid] = max(value, self.peaks.get(pid, 0.0))
            if self._stop.wait(self.interval):
                return

    @property
    def total(self) -> float:
        return sum(self.peaks.values())

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def access_log_check(since: float, until: float, user_agent: str) -> dict:
    """../shared/peers/check_access_log.py over the requests with ``user_agent`` between
    ``since`` and ``until`` (epoch seconds): its JSON (``requests``, ``robots_violations``,
    ``crawl_delay`` per host with ``gaps_below_delay``)."""
    check = subprocess.run(
        [sys.executable, str(SHARED / "peers" / "check_access_log.py"), "--since", str(since),
         "--until", str(until), "--ua", user_agent],
        capture_output=True, text=True, check=True)
    return json.loads(check.stdout)


def successful_fetches(since: float, until: float, user_agent: str) -> tuple[int, int]:
    """(responses 200/206 to ``user_agent`` between ``since`` and ``until``, distinct urls
    among them), robots.txt left out, from the local web's nginx log. A url fetched again (the
    engine follows an alias's redirect, /dev/x.html -> /3/x.html, to a page it already has)
    counts once in the second; Scrapy's dupefilter never fetches it again."""
    total, urls = 0, set()
    with open(ACCESS_LOG, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if user_agent not in line:
                continue
            fields = line.split('"')
            if len(fields) < 3 or len(fields[0].split()) < 2 or len(fields[1].split()) < 2:
                continue
            stamp, host = fields[0].split()[:2]
            path, status = fields[1].split()[1], fields[2].split()[:1]
            try:
                in_time = since <= float(stamp) <= until
            except ValueError:
                continue
            if in_time and status in (["200"], ["206"]) and path != "/robots.txt":
                total += 1
                urls.add(f"{host}{path}")
    return total, len(urls)


def short_gaps(log: dict) -> int:
    """Gaps between two requests to a host shorter than its Crawl-delay, over all hosts."""
    return sum(int(host["gaps_below_delay"]) for host in log["crawl_delay"].values())


def politeness_floor(log: dict) -> tuple[float, str]:
    """(the fewest seconds the crawl in ``log`` (:func:`access_log_check`) could have taken
    while keeping every host's Crawl-delay, the host that sets it): the largest over hosts of
    (requests to it - 1) x its delay. A crawler whose elapsed time is near its floor is bound
    by politeness, not by its speed."""
    floors = {host: (int(row["requests"]) - 1) * float(row["crawl_delay"])
              for host, row in log["crawl_delay"].items() if int(row["requests"]) > 0}
    if not floors:
        return 0.0, ""
    host = max(floors, key=floors.__getitem__)
    return floors[host], host


def print_server_side(prefix: str, log: dict, elapsed: float, elapsed_name: str) -> float:
    """Print what the nginx log (:func:`access_log_check`) says of a crawl: requests, requests
    to disallowed urls, short crawl-delay gaps and the politeness floor, with ``elapsed``
    (``elapsed_name`` says which time it is) as a multiple of it; returns the floor (0: none)."""
    print(f"{prefix}server_requests: {log['requests']} requests")
    print(f"{prefix}disallowed_requests: {log['robots_violations']} requests")
    print(f"{prefix}short_crawl_delay_gaps: {short_gaps(log)} gaps")
    floor, host = politeness_floor(log)
    if floor:
        print(f"{prefix}politeness_floor: {floor:.1f} s (Crawl-delay of {host}; {elapsed_name} "
              f"{elapsed / floor:.2f} x the floor)")
    return floor


def searchable_pages(index: Path) -> int:
    """The page documents (not link documents) of the engine index bundle at ``index``."""
    reader = IndexBundleReader(index)
    try:
        return sum(int((reader.doc_map(p.number).member_ids[:, 8] == 0).sum())
                   for p in reader.partitions)
    finally:
        reader.close()


def target_line(what: str, value: str, goal: str, met: bool) -> str:
    """``target: <what> <value> (goal <goal>) met|NOT met``."""
    return f"target: {what} {value} (goal {goal}) {'met' if met else 'NOT met'}"


def print_scrapy(prefix: str, name: str, run: ScrapyRun) -> None:
    """The figures of one Scrapy measurement, one a line, names ``<prefix><name>_...``."""
    key = f"{prefix}{name}"
    print(f"{key}_processes: {len(run.groups)} processes")
    for i, group in enumerate(run.groups, 1):
        label = f"_{i}" if len(run.groups) > 1 else ""
        print(f"{key}_hosts{label}: {len(group)} hosts ({','.join(group)})")
    print(f"{key}_time_bound: {run.seconds_bound:.0f} s")
    if not run.ok:
        print(f"{key}_failed: 1 runs ({run.error})")
        return
    print(f"{key}_finished: {int(run.finished)} bool "
          f"({','.join(str(s.get('finish_reason')) for s in run.summaries)})")
    print(f"{key}_pages: {run.pages} pages")
    print(f"{key}_elapsed: {run.span:.1f} s")
    print(f"{key}_rate: {run.rate:.1f} pages/s")
    print(f"{key}_peak_memory_total: {run.peak_memory_total:.0f} MiB")
    floor, host = politeness_floor(access_log_check(run.since, run.until, SCRAPY_USER_AGENT))
    if floor:
        print(f"{key}_politeness_floor: {floor:.1f} s (Crawl-delay of {host}; "
              f"elapsed {run.span / floor:.2f} x the floor)")
