"""The malloc arena caps of crawler.core.memory, each in a fresh interpreter (a subprocess):
limit_malloc_arenas caps the arenas threads share, Celery worker processes cap theirs, and the
operator's MALLOC_ARENA_MAX stands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from crawler.core import memory

# In a fresh interpreter: (optionally) cap the arenas, then 8 threads malloc at the same time;
# prints how many arenas glibc's malloc_info reports.
ARENAS_SCRIPT = r"""
import ctypes, ctypes.util, sys, tempfile, threading
mode = sys.argv[1]
if mode == "limit":
    from crawler.core import memory
    print("set", memory.limit_malloc_arenas(2))
elif mode == "celery":
    from celery.signals import worker_process_init
    import searchsite.celery  # noqa: F401  (connects the handler)
    worker_process_init.send(sender=None)
barrier = threading.Barrier(8)
held = []
def work():
    held.append([bytes(4000) for _ in range(200)])  # malloc'd blocks (beyond pymalloc's 512)
    barrier.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
with tempfile.NamedTemporaryFile(suffix=".xml") as out:
    fp = libc.fopen(out.name.encode(), b"w")
    libc.malloc_info(0, fp)
    libc.fclose(fp)
    print("arenas", open(out.name).read().count("<heap nr="))
"""


def arenas_after_threads(mode: str, **env: str) -> tuple[int, str]:
    root = Path(__file__).resolve().parents[3]
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    environ.update(env, DJANGO_SETTINGS_MODULE="searchsite.settings.test")
    out = subprocess.run([sys.executable, "-c", ARENAS_SCRIPT, mode], cwd=root, env=environ,
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return int(out.split("arenas")[1].split()[0]), out


def test_threads_share_the_capped_arenas() -> None:
    free, _ = arenas_after_threads("none")
    capped, out = arenas_after_threads("limit")
    assert "set True" in out
    assert free > 2, free  # glibc's default: a new arena per new thread, 8 per core at most
    assert capped <= 2, capped


def test_celery_worker_processes_cap_their_arenas() -> None:
    capped, _ = arenas_after_threads("celery")
    assert capped <= memory.CRAWL_MALLOC_ARENAS, capped


def test_the_operators_malloc_arena_max_stands() -> None:
    arenas, out = arenas_after_threads("limit", MALLOC_ARENA_MAX="4")
    assert "set False" in out
    assert 2 < arenas <= 4, arenas
