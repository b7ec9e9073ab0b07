"""The crawl benchmarks' Scrapy comparison (bench/crawl_peers.py) and the local-crawl bench's
reading of ``manage.py crawl``'s output (bench/local_crawl_bench.py): which hosts each side
crawls, how the hosts are split between two Scrapy processes, and how a pair's pages and
elapsed time are combined (with a stand-in for ../shared/peers/scrapy_crawl.py)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import crawl_peers as peers  # noqa: E402
import local_crawl_bench as lcb  # noqa: E402

needs_localweb = pytest.mark.skipif(not (peers.LOCALWEB / "sites.py").exists(),
                                    reason="no ../shared/localweb")


@needs_localweb
def test_each_tier_crawls_its_own_hosts_only() -> None:
    default, large = peers.tier_hosts("default"), peers.tier_hosts("large")
    assert len(default) == 12 and len(large) == 15 and set(default) < set(large)
    assert set(peers.other_tier_hosts("default")) == set(large) - set(default)
    assert peers.other_tier_hosts("large") == []
    assert peers.tier_roots("default") == [f"https://{host}/" for host in default]
    with pytest.raises(ValueError):
        peers.tier_hosts("both")


def test_split_puts_every_host_in_one_group_of_about_equal_pages() -> None:
    weights = {"a": 1169, "b": 692, "c": 531, "d": 351, "e": 242, "f": 27, "g": 16}
    hosts = list(weights)
    groups = peers.split_hosts(hosts, weights, 2)
    assert sorted(h for group in groups for h in group) == sorted(hosts)
    totals = [sum(weights[h] for h in group) for group in groups]
    assert abs(totals[0] - totals[1]) <= max(weights.values())
    assert all(group == [h for h in hosts if h in group] for group in groups)
    assert peers.split_hosts(hosts, weights, 2) == groups
    assert peers.split_hosts(hosts, weights, 1) == [hosts]


def test_scrapy_is_given_twice_the_engine_time_and_at_least_two_minutes() -> None:
    assert peers.scrapy_time_bound(10) == 120
    assert peers.scrapy_time_bound(300) == 600


FAKE_SCRAPY = textwrap.dedent("""
    import argparse, json, time
    ap = argparse.ArgumentParser()
    for name in ("--out", "--max-pages", "--max-seconds", "--log-level", "--hosts"):
        ap.add_argument(name)
    a = ap.parse_args()
    hosts = a.hosts.split(",")
    time.sleep(0.3 * len(hosts))
    summary = {"pages": 100 * len(hosts), "elapsed_s": 0.3 * len(hosts),
               "peak_rss_mb": 50.0, "finish_reason": "finished", "hosts": hosts,
               "max_seconds": a.max_seconds}
    open(a.out + ".summary.json", "w").write(json.dumps(summary))
""")


def test_a_pair_sums_pages_over_the_span_of_both(tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "scrapy_crawl.py"
    script.write_text(FAKE_SCRAPY)
    monkeypatch.setattr(peers, "SCRAPY_SCRIPT", script)
    monkeypatch.setattr(peers, "scrapy_python", lambda: Path(sys.executable))
    run = peers.scrapy_crawls([["a.example", "b.example"], ["c.example"]], 120)
    assert run.ok and run.finished, run.error
    assert [s["hosts"] for s in run.summaries] == [["a.example", "b.example"], ["c.example"]]
    assert {s["max_seconds"] for s in run.summaries} == {"120"}
    assert run.pages == 300 and run.peak_memory_total == 100.0
    # run at the same time: the span is about the longer one's 0.6 s, not the sum 0.9 s
    assert 0.55 <= run.span < 0.85
    assert run.rate == pytest.approx(300 / run.span)


def test_a_failed_scrapy_run_is_reported_not_raised(tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "scrapy_crawl.py"
    script.write_text("import sys; sys.exit('no scrapy here')")
    monkeypatch.setattr(peers, "SCRAPY_SCRIPT", script)
    monkeypatch.setattr(peers, "scrapy_python", lambda: Path(sys.executable))
    run = peers.scrapy_crawls([["a.example"]], 120)
    assert not run.ok and not run.finished and "no scrapy here" in run.error


STUBBORN_SCRAPY = textwrap.dedent("""
    import argparse, json, signal, sys, time
    ap = argparse.ArgumentParser()
    for name in ("--out", "--max-pages", "--max-seconds", "--log-level", "--hosts"):
        ap.add_argument(name)
    a = ap.parse_args()
    polite = a.hosts == "polite.example"
    def stop(*_):
        if polite:  # closes its spider and writes its summary, as Scrapy does on SIGINT
            open(a.out + ".summary.json", "w").write(json.dumps(
                {"pages": 7, "elapsed_s": 0.5, "peak_rss_mb": 10, "finish_reason": "shutdown"}))
            sys.exit(0)
    signal.signal(signal.SIGINT, stop)
    with open(a.out, "w") as out:
        for i in range(3):
            out.write(json.dumps({"url": f"https://x/{i}"}) + "\\n")
        out.flush()
        while True:
            time.sleep(0.05)
""")


def test_a_scrapy_past_its_bound_is_stopped_and_counted(tmp_path: Path, monkeypatch) -> None:
    """A process still running after its bound is asked to stop, killed if it does not, and
    its pages are then counted from its output, not lost as a failed run."""
    script = tmp_path / "scrapy_crawl.py"
    script.write_text(STUBBORN_SCRAPY)
    monkeypatch.setattr(peers, "SCRAPY_SCRIPT", script)
    monkeypatch.setattr(peers, "scrapy_python", lambda: Path(sys.executable))
    monkeypatch.setattr(peers, "STOP_AFTER", 0.0)
    monkeypatch.setattr(peers, "STOP_GRACE", 1.0)
    run = peers.scrapy_crawls([["polite.example"], ["stubborn.example"]], 0.5)
    assert run.ok, run.error
    reasons = [s["finish_reason"] for s in run.summaries]
    assert reasons == ["shutdown", "killed by the bench after its time bound"]
    assert run.pages == 7 + 3 and not run.finished
    assert 1.4 <= run.span < 5


def test_local_crawl_bench_reads_the_commands_summary() -> None:
    output = ("Crawl 'x' (timestamp 1764300000); Ctrl-C or SIGTERM stops it, saved so that it "
              "can be resumed.\r[######----] 10 fetched, 9 indexed, 0 queued, 0 errors, 2.0 "
              "pages/s \nLink analysis (web graph, loops, LinkRank, trust, scores)...\n"
              "Link analysis done: 9 pages, 40 urls, 80 links in 1.5s.\n"
              "Index ordered by importance: 1 partitions.\n\n"
              "Crawl stopped: 3538 pages fetched, 3400 documents indexed (12 errors) in 95.2s, "
              "37.2 pages/s.\nIndex: /tmp/v/work/qs0/IndexData1764300000\n")
    found = lcb.parse_output(output)
    assert found["status"] == "stopped" and found["pages_fetched"] == 3538
    assert found["documents_indexed"] == 3400 and found["fetch_errors"] == 12
    assert found["own_seconds"] == 95.2 and found["own_rate"] == 37.2
    assert found["index_paths"] == [Path("/tmp/v/work/qs0/IndexData1764300000")]
    assert found["link_analysis_seconds"] == 1.5
    assert lcb.parse_output("Traceback ...") == {}


def test_fetches_again_are_counted_once_among_distinct_urls(tmp_path: Path,
                                                          monkeypatch) -> None:
    ua = "YioopyBench/0.1 (crawl_bench 1)"
    lines = [
        f'10.0 a.example 127.0.0.1 "GET /robots.txt HTTP/1.1" 200 10 "{ua}" 0.000',
        f'11.0 a.example 127.0.0.1 "GET /x.html HTTP/1.1" 206 10 "{ua}" 0.000',
        f'12.0 a.example 127.0.0.1 "GET /dev/x.html HTTP/1.1" 301 10 "{ua}" 0.000',
        f'12.1 a.example 127.0.0.1 "GET /x.html HTTP/1.1" 206 10 "{ua}" 0.000',
        f'13.0 b.example 127.0.0.2 "GET /x.html HTTP/1.1" 200 10 "{ua}" 0.000',
        f'14.0 b.example 127.0.0.2 "GET /gone.html HTTP/1.1" 404 10 "{ua}" 0.000',
        '15.0 b.example 127.0.0.2 "GET /y.html HTTP/1.1" 200 10 "someone else" 0.000',
        f'99.0 b.example 127.0.0.2 "GET /late.html HTTP/1.1" 200 10 "{ua}" 0.000',
    ]
    log = tmp_path / "access.log"
    log.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(peers, "ACCESS_LOG", log)
    assert peers.successful_fetches(10.0, 20.0, ua) == (3, 2)


def test_politeness_floor_is_set_by_the_most_delayed_host() -> None:
    log = {"crawl_delay": {
        "slow.example": {"crawl_delay": 1.0, "requests": 37, "gaps_below_delay": 0},
        "slower.example": {"crawl_delay": 5.0, "requests": 4, "gaps_below_delay": 0},
        "unvisited.example": {"crawl_delay": 30.0, "requests": 0, "gaps_below_delay": 0}}}
    assert peers.politeness_floor(log) == (36.0, "slow.example")
    assert peers.politeness_floor({"crawl_delay": {}}) == (0.0, "")
