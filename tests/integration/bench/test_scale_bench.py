"""One whole run of bench/scale_bench.py at a tiny size, in real processes (its writer
processes, their dictionary updaters), so the benchmark keeps running as the engine changes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


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
    assert "600_1shard_documents: 600 docs" in lines
    assert "600_2shards_documents: 600 docs" in lines
    targets = [line for line in lines if line.startswith("target: ")]
    assert len(targets) == 3
    assert all(re.search(r" (met|NOT met)$", t) for t in targets)
    assert not list(tmp_path.iterdir())  # bundles removed without --keep
