"""The in-thread CPU budget (crawler.core.fetcher.thread_budget) and the budget setting's
validation: spinning Python is stopped as TooSlow, even through a broad except; work within
the budget ends normally and nothing is raised after the block."""

from __future__ import annotations

import time

import pytest

from crawler.core.fetcher.budget_pool import TooSlow
from crawler.core.fetcher.thread_budget import ThreadBudget
from crawler.core.processing.config import ConfigError, PageProcessingConfig


def _spin_swallowing_exceptions() -> None:
    while True:
        try:
            sum(range(1000))
        except Exception:  # a careless guard must not swallow the budget
            pass


def test_spinning_python_is_stopped_as_too_slow():
    budget = ThreadBudget()
    with pytest.raises(TooSlow, match="0.3 CPU seconds"), budget.limit(0.3):
        _spin_swallowing_exceptions()
    with budget.limit(0.3):  # the budget is per block: a short one ends normally
        assert sum(range(100)) == 4950
    started = time.thread_time()
    while time.thread_time() - started < 0.6:  # nothing lands after the block
        sum(range(1000))


class _SpinsWhenCollected:
    """Spins in ``__del__`` until its thread has used ``until`` CPU seconds: an exception
    raised there is printed as "Exception ignored" and dropped."""

    def __init__(self, until: float) -> None:
        self.until = until

    def __del__(self) -> None:
        while time.thread_time() < self.until:
            sum(range(1000))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_exception_dropped_in_a_finalizer_is_sent_again():
    budget = ThreadBudget()
    started = time.thread_time()
    with pytest.raises(TooSlow), budget.limit(0.3):
        # the first 1.0 s of CPU is spent in __del__, where the budget's first exception lands
        # (at 0.3 s) and is dropped; the work then goes on in plain Python, where the next lands
        _SpinsWhenCollected(started + 1.0)
        while time.thread_time() - started < 8.0:
            sum(range(1000))
    assert time.thread_time() - started < 4.0


def test_a_budget_out_of_range_is_a_clear_error():
    with pytest.raises(ConfigError, match="cpu_seconds"):
        PageProcessingConfig(cpu_seconds=-1)
    assert PageProcessingConfig(cpu_seconds=0).cpu_seconds == 0
