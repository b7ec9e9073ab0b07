"""The Bloom filter of queued urls: no false negatives, a false-positive rate near the
configured one, and a checksummed round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.core.scheduler import BloomFilter, CorruptQueueError
from indexer.core.ids import hash8
from indexer.core.urls import hashes_from_halves, md5_halves


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=200, unique=True))
def test_no_false_negatives(urls: list[str]) -> None:
    bloom = BloomFilter.for_capacity(1000, 0.01)
    new = bloom.add_many(md5_halves(urls))
    assert bloom.contains_many(md5_halves(urls)).all()
    assert int(new.sum()) == bloom.count
    assert not bloom.add_many(md5_halves(urls)).any()


def test_false_positive_rate_is_near_the_configured_one() -> None:
    bloom = BloomFilter.for_capacity(20_000, 0.01)
    bloom.add_many(md5_halves([f"http://in.example/{i}" for i in range(20_000)]))
    probes = md5_halves([f"http://out.example/{i}" for i in range(50_000)])
    rate = float(bloom.contains_many(probes).mean())
    assert 0.004 < rate < 0.02, rate


def test_sizing() -> None:
    bloom = BloomFilter.for_capacity(1_000_000, 0.001)
    # m = -n ln p / ln2^2 = 14.38 bits per url; k = 10
    assert 14_370_000 < bloom.num_bits < 14_390_000
    assert bloom.num_hashes == 10


def test_url_hash_is_the_seed_hash8() -> None:
    urls = ["http://a.com/", "https://b.org/x?y=1"]
    assert [h.to_bytes(8, "big") for h in hashes_from_halves(md5_halves(urls)).tolist()] == [
        hash8(u) for u in urls]


def test_round_trip_and_corruption(tmp_path: Path) -> None:
    bloom = BloomFilter.for_capacity(1000, 0.01)
    bloom.add("http://a.com/")
    path = tmp_path / "bloom.bin"
    bloom.save(path)
    loaded = BloomFilter.load(path)
    assert "http://a.com/" in loaded and loaded.count == 1
    assert "http://b.com/" not in loaded
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptQueueError):
        BloomFilter.load(path)
