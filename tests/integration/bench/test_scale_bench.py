"""One whole run of bench/scale_bench.py at a tiny size, in real processes (its writer
processes, their dictionary updaters), so the benchmark keeps running as the engine changes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.long
@pytest.mark.timeout(120)
def test_scale_bench_runs_and_prints_its_targets(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "scale_bench.py"), "--docs", "300,600",
         "--runs", "1", "--work", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for name in ("600_1shard", "600_2shards", "300_1shard"):
        for figure in ("documents", "build", "bytes_per_doc", "writer_peak_rss",
                       "updater_peak_rss", "open", "query_p50", "query_p95", "query_p99",
                       "query_phrase_p95", "query_one_word_p50"):
            assert any(line.startswith(f"{name}_{figure}") for line in lines), (name, figure)
    for name in ("600_1shard", "600_2shards", "300_1shard"):  # exactness (bench/exactness.py)
        for kind in ("one_word", "two_words", "three_words", "phrase"):
            for figure in (f"overlap_{kind}", f"overlap_reads_unbounded_{kind}",
                           f"exhaustive_query_{kind}_p95"):
                assert any(line.startswith(f"{name}_{figure}: ") for line in lines), figure
        assert f"{name}_exhaustive_partial: 0 answers" in lines
    assert "600_1shard_documents: 600 docs" in lines
    assert "600_2shards_documents: 600 docs" in lines
    targets = [line for line in lines if line.startswith("target: ")]
    assert len(targets) == 4
    assert all(re.search(r" (met|NOT met)$", t) for t in targets)
    assert re.match(r"target: top-10 overlap with the exhaustive search at 600 docs \(1 shard\) "
                    r"min over shapes [01]\.\d{4} \(goal >= 0\.99\)", targets[0]), targets[0]
    assert not list(tmp_path.iterdir())  # bundles removed without --keep


@pytest.mark.long
@pytest.mark.timeout(180)
def test_scale_bench_searches_kept_bundles_again(tmp_path: Path) -> None:
    """``--keep`` then ``--reuse``: the second run searches the bundles the first left (no
    writer runs: the bundles' files are untouched) and prints the same figures, CPU times
    too; ``--shards 1`` builds the one-shard configuration only."""
    def run(*extra: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "scale_bench.py"), "--docs", "300",
             "--runs", "1", "--shards", "1", "--work", str(tmp_path), *extra],
            cwd=ROOT, capture_output=True, text=True, timeout=150)
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()

    first = run("--keep")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["300_1shard.build.json",
                                                          "300_1shard_qs0"]
    files = {p: p.stat().st_mtime_ns for p in (tmp_path / "300_1shard_qs0").rglob("*")}
    again = run("--keep", "--reuse")
    assert any(line.startswith("300_1shard: reusing the bundles") for line in again)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "300_1shard_qs0").rglob("*")} == files
    for lines in (first, again):
        for figure in ("documents: 300 docs", "query_p95", "query_cpu_p95",
                       "query_phrase_p95", "query_cpu_phrase_p95"):
            assert any(line.startswith(f"300_1shard_{figure}") for line in lines), figure
        assert not any(line.startswith("300_2shards") for line in lines)
    # --index: the kept bundle measured on the judged queries, exactness included
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "scale_bench.py"), "--index",
         str(tmp_path / "300_1shard_qs0"), "--runs", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=150)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    for figure in ("documents: 300 docs", "query_p95", "exhaustive_query_p95",
                   "exhaustive_partial: 0 answers"):
        assert any(line.startswith(f"index_{figure}") for line in lines), figure
    assert not any("MRR@10" in line for line in lines)  # without --judgments
    assert sum(line.startswith("target: top-10 overlap") for line in lines) == 1
