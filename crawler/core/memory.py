"""Handing freed memory back to the system.

Layer: ``crawler.core``. A process that briefly holds big buffers (a batch being sealed, a large
page's parse tree, a received batch being inflated) leaves glibc's heap full of free pages that
it keeps, so the process's resident size ratchets up to its worst moment and stays there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to call
        return None


_MALLOC_TRIM = _malloc_trim()


def release_free_heap() -> None:
    """Hand the heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing).

    A replay of the local web's 800 biggest pages through page processing left 211 MiB
    resident, 114 MiB after a trim. Fetchers call it after each shipment and the inbox worker
    after storing each batch, every few seconds; it takes a millisecond or two."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
