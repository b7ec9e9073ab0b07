"""Process-level helpers for the index's batch operations.

Layer: ``indexer.core``. Building a partition or merging the dictionary creates hundreds of
thousands of small tuples and arrays at once; each batch of allocations triggers Python's cyclic
garbage collector, which then walks every live object (the writer's documents included). Nothing
here creates reference cycles, so the collector is paused for the duration of such a batch and
restored to its previous state afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
