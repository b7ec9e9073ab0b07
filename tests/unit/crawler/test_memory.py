"""release_free_heap hands a holey heap's free pages back to the system (glibc); in this
process (the arena caps, which need fresh interpreters, are tested in
tests/integration/crawl/test_memory_arenas.py)."""

from __future__ import annotations

import sys

import pytest

from crawler.core import memory


def resident_mib() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or memory._MALLOC_TRIM is None,
                    reason="malloc_trim is glibc's")
def test_free_pages_between_live_blocks_go_back() -> None:
    blocks = [bytes(4000) + i.to_bytes(4, "little") for i in range(30_000)]  # ~120 MiB
    keep = blocks[::8]  # every eighth stays alive: the freed ones are holes glibc keeps
    del blocks
    before = resident_mib()
    memory.release_free_heap()
    after = resident_mib()
    assert len(keep) == 3750
    assert before - after > 50, (before, after)
