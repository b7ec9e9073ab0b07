"""The seen-url filter's false-positive rate as a crawl grows (issue 20, item 3).

Usage: ``python bench/bloom_bench.py [--sizes 1000000,10000000,50000000] [--probes N]``.
Inserts random url digests (what the queue hashes urls to) into the engine's default filter,
a scalable Bloom filter (first slice 1,000,000 urls, target 0.1 %), and, for comparison, the
fixed filter the engine used before (5,000,000 urls, 0.1 %); at each size, tests ``--probes``
digests never inserted and prints the share wrongly taken as seen (a new url the crawl would
skip), the filter's memory and its insert rate. One line per figure, then one target line per
size for the scalable filter: rate at most 0.1 %.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.core.scheduler.config import SchedulerConfig
from crawler.core.scheduler.filters.bloom import BloomFilter
from crawler.core.scheduler.filters.scalable_bloom import ScalableBloomFilter

CHUNK = 1_000_000
OLD_FIXED_CAPACITY = 5_000_000


def digests(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2**63, size=(n, 2), dtype=np.uint64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000,50000000")
    parser.add_argument("--probes", type=int, default=1_000_000)
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    config = SchedulerConfig()
    rate = config.bloom_fp_rate
    filters = {"scalable": ScalableBloomFilter(config.bloom_expected_urls, rate),
               "fixed": BloomFilter.for_capacity(OLD_FIXED_CAPACITY, rate)}
    probes = digests(args.probes, np.random.default_rng(2))
    rng = np.random.default_rng(1)
    inserted, seconds = 0, dict.fromkeys(filters, 0.0)
    targets = []
    for size in sizes:
        while inserted < size:
            batch = digests(min(CHUNK, size - inserted), rng)
            for name, bloom in filters.items():
                start = time.perf_counter()
                bloom.add_many(batch)
                seconds[name] += time.perf_counter() - start
            inserted += len(batch)
        for name, bloom in filters.items():
            measured = float(bloom.contains_many(probes).mean())
            print(f"false_positive_rate_{name}_{size}: {measured * 100:.4f} %")
            print(f"memory_{name}_{size}: {bloom.num_bits / 8 / 2**20:.1f} MiB")
            print(f"insert_rate_{name}_{size}: {inserted / seconds[name] / 1e6:.2f} Murls/s")
            if name == "scalable":
                targets.append((size, measured))
        print(f"slices_scalable_{size}: {filters['scalable'].slices} slices")
    for size, measured in targets:
        verdict = "met" if measured <= rate else "NOT met"
        print(f"target: scalable false positives at {size} urls {measured * 100:.4f} % "
              f"(goal <= {rate * 100:g} %) {verdict}")


if __name__ == "__main__":
    main()
