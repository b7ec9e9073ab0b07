#!/usr/bin/env python
"""Time ``manage.py crawl --restrict`` over the local web's default tier end to end, and Scrapy
over the same hosts in the same run.

    .venv/bin/python bench/local_crawl_bench.py [--fetchers N] [--scrapy-rate R] [--keep DIR]

Starts the local web (../shared/localweb) if it is not up. In a private temporary directory
(its own VAR_DIRECTORY and SQLite DATABASE_URL, so the user's var/ is untouched; REDIS_URL
names a closed loopback port, so no Redis of anyone's is touched), migrates the database, then
runs ``manage.py crawl --restrict`` with the default tier's 12 root urls as a user would
(``--fetchers`` only when given), with the local web's certificate as an extra CA bundle
(CRAWLER_CA_BUNDLE), loopback allowed (CRAWLER_ALLOWED_NETWORKS=127.0.0.0/8) and a user agent
unique to this run. The command's time is taken from its start to the moment it prints its
``Crawl <status>: ...`` summary, which comes after the crawl, its link analysis and the index's
re-ordering by importance (and, separately, to its exit). Then Scrapy
(../shared/peers/scrapy_crawl.py, one process, in PEERS_VENV) crawls exactly the same 12 hosts,
given max(2 x the command's time, 120 s), and is measured over its own elapsed time;
``--scrapy-rate`` compares with a fixed rate (pages/s) instead.

Printed, one figure a line (``name: value unit``): the command's times (end to end, to exit, its
own crawl time, the rest: start-up, link analysis, ordering), pages fetched, documents indexed
and pages searchable (page documents in its index), distinct urls answered 2xx and answers to
urls already fetched (nginx log), pages per second end to end and by the command's own count
(pages fetched over its own crawl time), CPU seconds of the command and of the worker processes
it waited for (user, system, total, from ``os.wait4``) and the cores used on average (CPU over
time to exit), peak memory (each process's VmHWM read every 0.5 s, summed over the command and
its workers; and ru_maxrss, the largest process's), requests to robots-disallowed urls and short
crawl-delay gaps (../shared/peers/check_access_log.py), the politeness floor (the fewest seconds
the command's own requests allowed while keeping Crawl-delay, see crawl_bench.py) and the
highest ratio the floor allows (``x_scrapy_end_to_end_ceiling``), Scrapy's figures, and the ratios of the
command's end-to-end rates (pages searchable, pages fetched, distinct urls) to Scrapy's. Then
one ``target:`` line each: pages searchable per second end to end over Scrapy's pages per second
>= 1.5 (with the command finished: exit 0, status ``stopped``); no request to a disallowed url;
no short crawl-delay gap. When the command fails, the last line of its output is printed and
Scrapy is not run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import crawl_peers as peers

ROOT = peers.ROOT
TIER = "default"
GOAL_X_SCRAPY_END_TO_END = 1.5
# unique to this run, so that the nginx log checks see this crawl's requests only
USER_AGENT = f"YioopyBench/0.1 (local_crawl_bench {os.getpid()})"
SUMMARY = re.compile(r"Crawl (\w+): (\d+) pages fetched, (\d+) documents indexed "
                     r"\((\d+) errors\) in ([\d.]+)s, ([\d.]+) pages/s\.")
INDEX = re.compile(r"^Index: (.*)$", re.MULTILINE)
LINK_ANALYSIS = re.compile(r"Link analysis done: .* in ([\d.]+)s\.")
# the command's output lines that end one phase and start the next, in order: its first
# line (start-up over), the link analysis starting (the crawl over: its last batches
# ingested, the index finished), the analysis done, the index ordered, the summary
PHASE_MARKS = (("start_up", re.compile(r"^Crawl '")),
               ("crawl", re.compile(r"^Link analysis \(")),
               ("link_analysis", re.compile(r"^Link analysis (done|failed|skipped)")),
               ("index_ordering", re.compile(r"^Index ordered")),
               ("to_summary", SUMMARY))


def closed_port() -> int:
    """A loopback port nothing listens on (just released by this process)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def command_env(directory: Path) -> dict[str, str]:
    """The environment of the ``manage.py`` commands: everything private to ``directory``."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({
        "DJANGO_SETTINGS_MODULE": "searchsite.settings.base",
        "VAR_DIRECTORY": str(directory / "var"),
        "DATABASE_URL": f"sqlite:///{directory / 'db.sqlite3'}",
        "REDIS_URL": f"redis://127.0.0.1:{closed_port()}/0",
        "CRAWLER_ALLOWED_NETWORKS": "127.0.0.0/8",
        "CRAWLER_CA_BUNDLE": str(peers.CA_BUNDLE),
        "CRAWLER_USER_AGENT": USER_AGENT,
        "LOG_LEVEL": "WARNING", "PYTHONUNBUFFERED": "1",
    })
    return env


def run_crawl_command(directory: Path, roots: list[str], fetchers: int | None) -> dict:
    """Migrate a fresh database in ``directory``, then run ``manage.py crawl --restrict`` over
    ``roots`` and time it: seconds to its summary line and to its exit, its CPU and peak memory
    (``os.wait4`` of that process), its output and exit code."""
    env = command_env(directory)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=env, check=True)
    argv = [sys.executable, "manage.py", "crawl", "--restrict", "--name", "local_crawl_bench",
            *(["--fetchers", str(fetchers)] if fetchers is not None else []), *roots]
    since = time.time()
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    marks: dict[str, float] = {}  # phase -> seconds from the start to its last line
    with peers.TreeMemory(proc.pid) as memory:
        for line in proc.stdout:  # type: ignore[union-attr]  (a \r ends a line too)
            lines.append(line)
            for phase, pattern in PHASE_MARKS:
                if phase not in marks and pattern.search(line.strip()):
                    marks[phase] = time.monotonic() - started
        _, status, usage = os.wait4(proc.pid, 0)
        to_exit = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()  # type: ignore[union-attr]
    return {"output": "".join(lines), "exit_code": proc.returncode, "since": since,
            "until": time.time(), "to_summary": marks.get("to_summary"), "to_exit": to_exit,
            "phases": phase_seconds(marks),
            "cpu_user": usage.ru_utime, "cpu_system": usage.ru_stime,
            "peak_memory_largest": usage.ru_maxrss / 1024, "peak_memory_total": memory.total,
            "processes": len(memory.peaks)}


def phase_seconds(marks: dict[str, float]) -> dict[str, float]:
    """Seconds of each phase whose end was seen: from the previous mark seen to its own."""
    out, previous = {}, 0.0
    for phase, _ in PHASE_MARKS:
        if phase in marks:
            out[phase] = marks[phase] - previous
            previous = marks[phase]
    return out


def parse_output(output: str) -> dict:
    """The command's own figures from its output: status, pages fetched, documents indexed,
    errors, its crawl time and rate, index paths, link analysis seconds (absent: missing)."""
    found: dict = {}
    summary = SUMMARY.search(output)
    if summary:
        status, fetched, indexed, errors, seconds, rate = summary.groups()
        found.update(status=status, pages_fetched=int(fetched), documents_indexed=int(indexed),
                     fetch_errors=int(errors), own_seconds=float(seconds), own_rate=float(rate))
    index = INDEX.search(output)
    if index:
        found["index_paths"] = [Path(p) for p in index.group(1).split(", ") if p.strip()]
    analysis = LINK_ANALYSIS.search(output)
    if analysis:
        found["link_analysis_seconds"] = float(analysis.group(1))
    return found


def measure(args: argparse.Namespace) -> dict:
    """Run the command over the default tier's roots, then Scrapy over the same hosts: every
    figure that ``report`` prints."""
    roots = peers.ensure_localweb(TIER)
    with tempfile.TemporaryDirectory(prefix="local-crawl-bench-") as tmp:
        run = run_crawl_command(Path(tmp), roots, args.fetchers)
        run.update(parse_output(run["output"]))
        paths = [p for p in run.get("index_paths", []) if p.exists()]
        run["pages_searchable"] = sum(peers.searchable_pages(p) for p in paths)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "local_crawl.out").write_text(run["output"])
            for kept in ("var", "db.sqlite3"):  # the crawl itself: its index, queues, rows
                source = Path(tmp) / kept
                if source.is_dir():
                    shutil.copytree(source, args.keep / kept, dirs_exist_ok=True)
                elif source.exists():
                    shutil.copy2(source, args.keep / kept)
    run["log"] = peers.access_log_check(run["since"], run["until"], USER_AGENT)
    run["fetches"] = peers.successful_fetches(run["since"], run["until"], USER_AGENT)
    run["elapsed"] = run["to_summary"] if run["to_summary"] is not None else run["to_exit"]
    run["scrapy"] = None
    if args.scrapy_rate is None and run["exit_code"] == 0:  # no comparison with a failed run
        bound = peers.scrapy_time_bound(run["elapsed"])
        run["scrapy"] = peers.scrapy_crawls([peers.tier_hosts(TIER)], bound)
    return run


def report(args: argparse.Namespace, run: dict) -> list[str]:
    """Print the figures, one a line; the target lines, to print at the end."""
    elapsed, fetched = run["elapsed"], run.get("pages_fetched", 0)
    cpu_total = run["cpu_user"] + run["cpu_system"]
    finished = run["exit_code"] == 0 and run.get("status") == "stopped"
    print(f"hosts: {len(peers.tier_hosts(TIER))} hosts")
    print(f"command_exit_code: {run['exit_code']} code")
    if run["exit_code"] != 0:
        last = [line for line in run["output"].splitlines() if line.strip()][-1:] or [""]
        print(f"command_failed: 1 bool (last output line: {last[0].strip()[:300]})")
    print(f"crawl_finished: {int(finished)} bool (status {run.get('status', 'missing')})")
    print(f"elapsed_end_to_end: {elapsed:.1f} s (start to the 'Crawl {run.get('status')}' line)")
    print(f"elapsed_to_exit: {run['to_exit']:.1f} s")
    print(f"elapsed_own_count: {run.get('own_seconds', 0.0):.1f} s (the command's crawl time)")
    print(f"elapsed_outside_crawl: {elapsed - run.get('own_seconds', 0.0):.1f} s "
          "(start-up, link analysis, index ordering)")
    print(f"link_analysis: {run.get('link_analysis_seconds', 0.0):.1f} s (its own count)")
    for phase, seconds in run["phases"].items():  # by when the command printed each line
        print(f"phase_{phase}: {seconds:.1f} s")
    print(f"pages_fetched: {fetched} pages")
    print(f"documents_indexed: {run.get('documents_indexed', 0)} documents")
    print(f"pages_searchable: {run['pages_searchable']} pages")
    print(f"fetch_errors: {run.get('fetch_errors', 0)} errors")
    responses, distinct = run["fetches"]
    print(f"pages_distinct_fetched: {distinct} pages (distinct urls answered 2xx)")
    print(f"pages_fetched_again: {responses - distinct} pages (2xx answers to a url already "
          "fetched)")
    print(f"rate_end_to_end: {fetched / elapsed:.1f} pages/s (pages fetched)")
    print(f"searchable_rate_end_to_end: {run['pages_searchable'] / elapsed:.1f} pages/s")
    print(f"rate_own_count: {run.get('own_rate', 0.0):.1f} pages/s (as the command prints it)")
    print(f"cpu_user: {run['cpu_user']:.1f} s")
    print(f"cpu_system: {run['cpu_system']:.1f} s")
    print(f"cpu_total: {cpu_total:.1f} s")
    print(f"cpu_per_page: {1000 * cpu_total / max(fetched, 1):.1f} ms/page")
    print(f"cores_used: {cpu_total / run['to_exit']:.2f} cores")
    print(f"processes: {run['processes']} processes (the command and its workers seen)")
    print(f"peak_memory_total: {run['peak_memory_total']:.0f} MiB (each process's peak, summed)")
    print(f"peak_memory_largest_process: {run['peak_memory_largest']:.0f} MiB")
    log = run["log"]
    violations, gaps = log["robots_violations"], peers.short_gaps(log)
    floor = peers.print_server_side("", log, elapsed, "end to end")
    scrapy: peers.ScrapyRun | None = run["scrapy"]
    if scrapy is not None:
        peers.print_scrapy("", "scrapy", scrapy)
        scrapy_rate = scrapy.rate if scrapy.ok else 0.0
        source = "Scrapy in this run" if scrapy.ok else "Scrapy did not run"
    elif args.scrapy_rate is not None:
        scrapy_rate, source = args.scrapy_rate, "fixed rate given"
        print(f"scrapy_rate: {scrapy_rate:.1f} pages/s (fixed, given)")
    else:
        scrapy_rate, source = 0.0, "Scrapy not run: the command failed"
    ratio = run["pages_searchable"] / elapsed / scrapy_rate if scrapy_rate else None
    fetched_ratio = fetched / elapsed / scrapy_rate if scrapy_rate else None
    shown = f"{ratio:.2f}" if ratio is not None else "n/a"
    print(f"x_scrapy_end_to_end: {shown} ratio (pages searchable/s end to end over Scrapy's "
          f"pages/s; {source})")
    print(f"x_scrapy_end_to_end_fetched: "
          f"{f'{fetched_ratio:.2f}' if fetched_ratio is not None else 'n/a'} ratio "
          "(pages fetched/s end to end over Scrapy's pages/s)")
    if scrapy_rate and floor:
        print(f"x_scrapy_end_to_end_ceiling: "
              f"{run['pages_searchable'] / floor / scrapy_rate:.2f} ratio (had the command "
              "taken only its politeness floor end to end)")
    if scrapy_rate:
        print(f"x_scrapy_end_to_end_distinct: {distinct / elapsed / scrapy_rate:.2f} ratio "
              "(distinct urls fetched/s end to end over Scrapy's pages/s)")
    return [
        peers.target_line("manage.py crawl end to end over Scrapy", shown,
                          f">= {GOAL_X_SCRAPY_END_TO_END:.1f}, {source}",
                          ratio is not None and ratio >= GOAL_X_SCRAPY_END_TO_END and finished),
        peers.target_line("requests to disallowed urls", str(violations), "0", violations == 0),
        peers.target_line("crawl-delay gaps shorter than the delay", str(gaps), "0", gaps == 0),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fetchers", type=int, default=None,
                        help="manage.py crawl --fetchers (default: the command's own default)")
    parser.add_argument("--scrapy-rate", type=float, default=None,
                        help="compare with this rate (pages/s) instead of Scrapy crawling the "
                             "same hosts in this run")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy the command's output, its var folder (index, queues, logs) and "
                             "its SQLite database into this folder")
    args = parser.parse_args()
    given = [name for name, value in vars(args).items() if value is not None]
    print(f"options: tier={TIER} fetchers="
          f"{args.fetchers if args.fetchers is not None else 'command-default'} scrapy_rate="
          f"{args.scrapy_rate if args.scrapy_rate is not None else 'measured'} "
          f"({'given: ' + ','.join(given) if given else 'all defaults'})", flush=True)
    targets = report(args, measure(args))
    for line in targets:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
