"""The band tables (indexer.core.signals.near_index) find every pair within k bits and no
other, checked against brute force."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.signals.near_index import NearIndex, band_masks, near_pairs, popcount


def brute_force(values: list[int], k: int) -> set[tuple[int, int]]:
    return {(i, j) for i in range(len(values)) for j in range(i + 1, len(values))
            if values[i] != 0 and values[j] != 0 and (values[i] ^ values[j]).bit_count() <= k}


def clustered_values(seed: int, n: int, k: int) -> list[int]:
    """Random fingerprints, many of them a few bits from another (so pairs exist), some
    equal, a few zero (none)."""
    rng = random.Random(seed)
    out: list[int] = []
    for _ in range(n):
        roll = rng.random()
        if out and roll < 0.5:
            value = rng.choice(out)
            for bit in rng.sample(range(64), rng.randint(0, k + 2)):
                value ^= 1 << bit
        elif roll < 0.55:
            value = 0
        else:
            value = rng.getrandbits(64)
        out.append(value)
    return out


@given(st.integers(0, 100_000), st.integers(1, 120), st.integers(0, 6))
@settings(max_examples=80, deadline=None)
def test_near_pairs_equal_brute_force(seed: int, n: int, k: int) -> None:
    values = clustered_values(seed, n, k)
    i, j = near_pairs(np.array(values, dtype=np.uint64), k)
    assert set(zip(i.tolist(), j.tolist(), strict=True)) == brute_force(values, k)
    assert bool(np.all(i < j))


@given(st.integers(0, 100_000), st.integers(1, 80), st.integers(0, 5))
@settings(max_examples=60, deadline=None)
def test_incremental_index_finds_a_near_value_when_there_is_one(seed: int, n: int,
                                                                 k: int) -> None:
    values = clustered_values(seed, n, k)
    index = NearIndex(k)
    for number, value in enumerate(values):
        earlier = [v for v in values[:number] if v != 0]
        found = index.nearest(value)
        distances = [(v ^ value).bit_count() for v in earlier]
        if value == 0 or not distances or min(distances) > k:
            assert found is None
        else:
            assert found is not None and found[1] == min(distances)
        index.add(value, str(number))


def test_bands_cover_the_64_bits() -> None:
    for k in range(10):
        masks = band_masks(k)
        assert len(masks) == k + 1
        covered = 0
        for shift, mask in masks:
            assert covered & (mask << shift) == 0
            covered |= mask << shift
        assert covered == (1 << 64) - 1
    assert band_masks(3) == [(0, 0xFFFF), (16, 0xFFFF), (32, 0xFFFF), (48, 0xFFFF)]


def test_popcount() -> None:
    values = np.array([0, 1, 3, (1 << 64) - 1], dtype=np.uint64)
    assert popcount(values).tolist() == [0, 1, 2, 64]
