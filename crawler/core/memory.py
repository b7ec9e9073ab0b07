"""Handing freed memory back to the system, and keeping it from scattering.

Layer: ``crawler.core``. A process that briefly holds big buffers (a batch being sealed, a large
page's parse tree, a received batch being inflated) leaves glibc's heap full of free pages that
it keeps, so the process's resident size ratchets up to its worst moment and stays there.

A fetcher runs dozens of threads (downloads, robots.txt, crawl-delay lanes, the next round), and
glibc gives each new thread an arena of its own, up to eight per core: each arena keeps its own
free pages and its own fragments, so a big page parsed in one thread leaves holes that the other
threads cannot fill. :func:`limit_malloc_arenas` caps the arenas of a crawl process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

# glibc's mallopt parameter for the most arenas a process may have (malloc.h)
M_ARENA_MAX = -8
# A crawl process's arenas. crawl_bench --tier both, fetchers' peak resident size, large tier
# over default tier: glibc's default (16 arenas on this 2-core machine) 1.30 (278/214 MiB);
# 2 arenas 1.21, 1.14, 1.10, 1.17, 1.21 (median 1.17); 1 arena 1.08, 1.08, 1.15 (219-230
# against 199-204 MiB). One arena costs about a tenth of the large tier's pages per second
# (82-89 against 92-95; Scrapy's 37 is the goal): the threads mostly allocate holding the GIL.
CRAWL_MALLOC_ARENAS = 1


def _libc() -> Any:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


_LIBC = _libc()
# None where the C library is not glibc: nothing to call
_MALLOC_TRIM: Callable[[int], int] | None = getattr(_LIBC, "malloc_trim", None)
_MALLOPT: Callable[[int, int], int] | None = getattr(_LIBC, "mallopt", None)


def limit_malloc_arenas(arenas: int = CRAWL_MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas of this process (and of the processes it forks later) at
    ``arenas``; threads beyond that share them. Call it before the threads start: arenas
    already made stay. A MALLOC_ARENA_MAX in the environment (glibc's own knob) is the
    operator's choice and is left as it is. True if the cap was set."""
    if os.environ.get("MALLOC_ARENA_MAX") or _MALLOPT is None:
        return False
    if _MALLOPT(M_ARENA_MAX, int(arenas)) != 1:
        logger.warning("mallopt(M_ARENA_MAX, %d) was refused", arenas)
        return False
    return True


def release_free_heap() -> None:
    """Hand the heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing).

    A replay of the local web's 800 biggest pages through page processing left 211 MiB
    resident, 114 MiB after a trim. Fetchers call it after each shipment and the inbox worker
    after storing each batch, every few seconds; it takes a millisecond or two."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
