"""The engine on several machines (``scripts/cluster_test.py``, ``make test-cluster``): network
namespaces as machines, a crawl started in the admin, checked against a single-machine crawl.

Marked ``cluster``: it needs root and working ``ip netns``. ``make test-slow``
(scripts/run_tests.py --slow) runs it when both are there and says so when they are not; the
run takes about a minute and a half, over the default test command's budget. Its addresses are in 198.18.0.0/15 inside namespaces of its own,
which the script creates and removes: nothing reaches the machine's own network.
"""

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

CHECKS = ("every fetcher node did work", "both queue servers indexed their hosts",
          "the crawled url set equals a single-machine crawl's",
          "the search page on web fans out to both queue servers",
          "link analysis covers every shard", "politeness held across fetcher nodes",
          "the name server ranks as one machine (top 10 of every query)",
          "the fetcher-only node received the link scores")


@pytest.mark.timeout(900)
def test_a_crawl_across_six_machines_matches_one_machine():
    done = subprocess.run([sys.executable, "scripts/cluster_test.py"], cwd=ROOT, text=True,
                          capture_output=True, timeout=850)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    for check in CHECKS:
        assert f"[PASS] {check}" in out, out[-6000:]
    assert "[FAIL]" not in out and "removed /tmp/" in out
