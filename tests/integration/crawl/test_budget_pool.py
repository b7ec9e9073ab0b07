"""The budget pool (crawler.core.fetcher.budget_pool): a job past its CPU budget is killed with
its worker and answered "too slow", the jobs around it complete, the pool keeps its size, and
close() ends every worker."""

from __future__ import annotations

import os
import time

import pytest

from crawler.core.fetcher.budget_pool import BudgetPool, TooSlow, cpu_seconds_of
from tests.integration.crawl import budget_jobs
from tests.processes import alive


def test_a_spinning_job_is_killed_and_the_others_complete():
    pool = BudgetPool(budget_jobs.run, 2, 1.0, budget_jobs.start)
    try:
        before = pool.pids()
        assert len(before) == 2
        futures = [pool.submit(n) for n in range(5)]
        spin = pool.submit("spin")
        futures += [pool.submit(n) for n in range(5, 20)]
        failing = pool.submit("fail")
        with pytest.raises(TooSlow):
            spin.result(timeout=60)
        assert [f.result(timeout=60) for f in futures] == [n * 2 for n in range(20)]
        with pytest.raises(ValueError, match="a failing job"):
            failing.result(timeout=60)
        assert pool.submit(21).result(timeout=60) == 42  # the replacement worker answers
        deadline = time.monotonic() + 60  # the replacement may still be starting (spawn)
        while len(pool.pids()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        after = pool.pids()
        assert len(after) == 2 and set(after) != set(before)
        assert not all(alive(pid) for pid in before)
    finally:
        pool.close()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in after) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in after)


def test_the_cpu_time_of_a_process_is_read():
    spent = cpu_seconds_of(os.getpid())
    assert spent is not None and spent > 0
