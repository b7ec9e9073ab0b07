"""The memory a partition's build takes per word position (issue 20: the writer's peak is set by
closing a partition, and must stay well under 2 GB for 50,000 ordinary pages).

Not a timed test: tracemalloc counts the bytes numpy and Python hold at the build's peak, beyond
the partition's documents, which the writer holds anyway. Encoding every term list at once took
about 115 bytes per position (64-bit gaps, widths, bit offsets and gather indexes of all
positions at once); encoding a chunk of lists at a time takes a few 32-bit columns per entry
plus one chunk's working arrays, under 40 bytes per position at this size and under 20 at a
partition of 50,000 pages.
"""

from __future__ import annotations

import tracemalloc

from indexer.core.partition.build import build_partition
from tests.unit.indexer.helpers import synthetic_partition

MAX_BYTES_PER_POSITION = 64


def test_partition_build_memory_per_position() -> None:
    docs, vocab = synthetic_partition(5000)
    positions = docs.columns()[2].size
    assert positions > 2_000_000
    tracemalloc.start()
    try:
        built = build_partition(docs, vocab)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert built.positions_count == positions
    per_position = peak / positions
    assert per_position < MAX_BYTES_PER_POSITION, (
        f"building the partition peaked at {peak / 2 ** 20:.0f} MiB, {per_position:.1f} bytes "
        f"per position (bound {MAX_BYTES_PER_POSITION})")
