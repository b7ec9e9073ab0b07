"""Jobs for the budget pool's tests (importable by spawned workers)."""

from __future__ import annotations


def start() -> None:
    """Nothing to build."""


def run(job: object) -> object:
    """``"spin"`` spins for ever; ``"fail"`` raises; anything else comes back doubled."""
    if job == "spin":
        while True:
            pass
    if job == "fail":
        raise ValueError("a failing job")
    return job * 2  # type: ignore[operator]
