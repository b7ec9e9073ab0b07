"""The seen-url filter that grows (issue 20, item 3): no false negatives across slices, a
false-positive rate that stays under its target far past the first slice's capacity (where a
fixed filter's rate explodes), a checksummed round trip, and a fixed filter's old checkpoint
file still loading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from crawler.core.scheduler import BloomFilter, CorruptQueueError
from crawler.core.scheduler.filters.scalable_bloom import ScalableBloomFilter
from indexer.core.urls import md5_halves


def random_digests(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**63, size=(n, 2), dtype=np.uint64)


def test_no_false_negatives_across_slices():
    bloom = ScalableBloomFilter(1000, 0.01)
    urls = [f"http://a.example/{i}" for i in range(9000)]
    new = bloom.add_many(md5_halves(urls))
    assert new.all() or new.mean() > 0.98
    assert bloom.slices >= 4  # 1000 + 2000 + 4000 + 8000 > 9000 > 7000
    assert bloom.contains_many(md5_halves(urls)).all()
    assert not bloom.add_many(md5_halves(urls)).any()
    assert bloom.count == int(new.sum())


def test_rate_stays_under_target_at_twenty_times_the_first_slice():
    inserted, probes = random_digests(200_000, 1), random_digests(200_000, 2)
    scalable = ScalableBloomFilter(10_000, 0.01)
    fixed = BloomFilter.for_capacity(10_000, 0.01)
    for at in range(0, len(inserted), 25_000):
        scalable.add_many(inserted[at:at + 25_000])
        fixed.add_many(inserted[at:at + 25_000])
    assert float(scalable.contains_many(probes).mean()) < 0.01
    assert float(fixed.contains_many(probes).mean()) > 0.5  # what a fixed filter does


def test_round_trip_clear_and_corruption(tmp_path: Path):
    bloom = ScalableBloomFilter(100, 0.01)
    urls = [f"http://b.example/{i}" for i in range(500)]
    bloom.add_many(md5_halves(urls))
    path = tmp_path / "bloom.bin"
    bloom.save(path)
    loaded = ScalableBloomFilter.load(path)
    assert loaded.slices == bloom.slices and loaded.count == 500
    assert loaded.contains_many(md5_halves(urls)).all()
    assert "http://c.example/" not in loaded
    loaded.clear()
    assert loaded.count == 0 and loaded.slices == 1 and "http://b.example/1" not in loaded
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptQueueError):
        ScalableBloomFilter.load(path)


def test_a_fixed_filters_checkpoint_loads_as_a_full_slice(tmp_path: Path):
    fixed = BloomFilter.for_capacity(1000, 0.001)
    old = [f"http://old.example/{i}" for i in range(300)]
    fixed.add_many(md5_halves(old))
    path = tmp_path / "bloom.0.bin"
    fixed.save(path)
    loaded = ScalableBloomFilter.load(path)
    assert loaded.contains_many(md5_halves(old)).all() and loaded.count == 300
    assert loaded.add("http://new.example/") and loaded.slices == 2
