"""The dictionary updater's memory and time against the size of the dictionary (issue 20).

Usage: ``python bench/dictionary_bench.py [--sizes 1500000,5000000] [--work DIR] [--keep]``.

Synthetic partitions go through the updater's own merge (``_merge_term_table`` of
:mod:`indexer.core.dictionary.updater`: a framed last_entries file decoded and merged into
:class:`indexer.core.dictionary.tree.BPlusTreeWriter`, then ``commit``), as ``DictionaryUpdater``
merges a closed partition. A partition holds ``--partition-terms`` terms (default 590,000, what
a partition of 50,000 pages of ``bench/scale_bench.py`` has), ``--new-terms`` of them (default
220,000) new to the dictionary and the rest drawn from it at random, so the merge touches every
part of the tree. Term ids have the seed's shape (7 characters, ``_``, an 8-byte hash).

For each size the dictionary is first grown to that many terms (not measured), then a fresh
child process (the updater's situation: a process that opens the dictionary) merges one more
partition and commits (``merge_s``, ``commit_s``: a commit compacts when dead nodes outweigh
live ones), then compacts explicitly (``compact_s``); wall and CPU seconds (user + system,
the fairer figure on a shared machine). It prints per size the child's peak
resident memory (``peak_rss``, its ``VmHWM``) and what it held before the merge
(``start_rss``: interpreter and modules). Run it against another checkout of the code (copy
it into that checkout's ``bench/``) to compare two versions of the updater.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from indexer.core.dictionary.tree import BPlusTreeWriter  # noqa: E402
from indexer.core.dictionary.updater import _merge_term_table  # noqa: E402
from indexer.core.files.packed_columns import pack_columns  # noqa: E402
from indexer.core.files.storage import atomic_write, frame  # noqa: E402
from indexer.core.partition.build import LAST_ENTRIES_TOOL  # noqa: E402

MIB = 1024 * 1024
SEED = 20


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 of each value: term number to an 8-byte hash."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def term_keys(numbers: np.ndarray) -> list[bytes]:
    """Sorted term ids of the term numbers ``numbers``: 7 lower-case letters, ``_``, hash."""
    hashes = _mix(numbers)
    letters = (hashes[:, None] >> (np.arange(7, dtype=np.uint64) * np.uint64(5))[None, :]) \
        % np.uint64(26) + np.uint64(ord("a"))
    raw = np.empty((len(numbers), 16), dtype=np.uint8)
    raw[:, :7] = letters.astype(np.uint8)
    raw[:, 7] = ord("_")
    raw[:, 8:] = hashes.astype(">u8").view(np.uint8).reshape(-1, 8)
    words = raw.view(">u8").reshape(-1, 2)
    raw = raw[np.lexsort((words[:, 1], words[:, 0]))]
    data = raw.tobytes()
    return [data[i:i + 16] for i in range(0, len(data), 16)]


def write_partition(path: Path, number: int, vocabulary: int, terms: int, new: int,
                    rnd: np.random.Generator) -> int:
    """A last_entries file of partition ``number``: ``new`` terms numbered from
    ``vocabulary`` on and ``terms - new`` drawn from the first ``vocabulary``; the new size."""
    old = min(terms - new, vocabulary)
    drawn = rnd.choice(vocabulary, size=old, replace=False) if old else np.zeros(0, np.int64)
    numbers = np.concatenate([drawn, np.arange(vocabulary, vocabulary + terms - old)])
    keys = term_keys(numbers)
    n = len(keys)
    ints = np.column_stack([rnd.integers(1, 50, n), rnd.integers(1, 200, n),
                            np.arange(n) * 40, rnd.integers(8, 4000, n),
                            rnd.integers(0, 50_000, n), rnd.integers(0, 1 << 30, n)])
    atomic_write(path, frame("last_entries", pack_columns(LAST_ENTRIES_TOOL, keys, ints)))
    return vocabulary + terms - old


def grow(directory: Path, scratch: Path, target: int, state: dict, args: argparse.Namespace
         ) -> None:
    """Merge partitions into ``directory`` until it holds ``target`` terms or more."""
    rnd = np.random.default_rng(SEED + state["partitions"])
    while state["vocabulary"] < target:
        number = state["partitions"]
        path = scratch / f"last_entries_{number}"
        state["vocabulary"] = write_partition(path, number, state["vocabulary"],
                                              args.partition_terms, args.new_terms, rnd)
        tree = BPlusTreeWriter(directory)
        _merge_term_table(tree, path, number)
        tree.commit(next_partition=number + 1)
        tree.close()
        path.unlink()
        state["partitions"] += 1
        print(f"  grown: {state['vocabulary']} terms after {number + 1} partitions",
              flush=True)


def measure(directory: Path, path: Path, number: int) -> dict:
    """In the child: one partition merged and committed, then a compaction."""
    def rss(field: str) -> int:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        return 0

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    start_rss = rss("VmRSS")
    marks = [(time.perf_counter(), cpu())]
    tree = BPlusTreeWriter(directory)
    _merge_term_table(tree, path, number)
    marks.append((time.perf_counter(), cpu()))
    tree.commit(next_partition=number + 1)
    marks.append((time.perf_counter(), cpu()))
    tree.compact()
    marks.append((time.perf_counter(), cpu()))
    terms = len(tree)
    tree.close()
    out: dict = {"terms": terms, "start_rss": start_rss, "peak_rss": rss("VmHWM")}
    for name, (a, b) in zip(("merge", "commit", "compact"), zip(marks, marks[1:], strict=False),
                            strict=True):
        out[f"{name}_s"] = b[0] - a[0]
        out[f"{name}_cpu_s"] = b[1] - a[1]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1500000,5000000")
    parser.add_argument("--partition-terms", type=int, default=590_000)
    parser.add_argument("--new-terms", type=int, default=220_000)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("DICT", "LAST_ENTRIES", "NUMBER"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        directory, path, number = args.child
        print(json.dumps(measure(Path(directory), Path(path), int(number))))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="dictionary_bench_"))
    base, scratch = work / "dictionary", work / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    state = {"vocabulary": 0, "partitions": 0}
    try:
        for size in sorted(int(s) for s in args.sizes.split(",")):
            grow(base, scratch, size, state, args)
            copy = work / f"measure_{size}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(base, copy)
            number = state["partitions"]
            path = scratch / "measured_last_entries"
            write_partition(path, number, state["vocabulary"], args.partition_terms,
                            args.new_terms, np.random.default_rng(SEED - 1))
            out = subprocess.run([sys.executable, __file__, "--child", str(copy), str(path),
                                  str(number)], check=True, capture_output=True, text=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            times = " ".join(f"{k} {r[f'{k}_s']:.2f} s (cpu {r[f'{k}_cpu_s']:.2f} s)"
                             for k in ("merge", "commit", "compact"))
            print(f"size {state['vocabulary']} terms ({r['terms']} after the merge): {times}; "
                  f"start_rss {r['start_rss'] / MIB:.0f} MiB peak_rss "
                  f"{r['peak_rss'] / MIB:.0f} MiB", flush=True)
            shutil.rmtree(copy)
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
