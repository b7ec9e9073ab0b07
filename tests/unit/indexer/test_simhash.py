"""SimHash fingerprints (indexer.core.signals.simhash): equal texts are equal, small edits move
few bits, unrelated texts are far apart, short texts have none."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.core.signals.simhash import (
    MIN_WORDS,
    NO_SIMHASH,
    from_hex,
    hamming,
    simhash,
    to_hex,
)

WORDS = ("index query crawler page link rank score text shard partition posting term "
         "document host robots sitemap fetch queue server bundle cluster canonical "
         "version release python django table column join filter").split()


def article(seed: int, n: int = 400) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


@given(st.integers(0, 10_000))
@settings(max_examples=40, deadline=None)
def test_identical_texts_are_zero_bits_apart(seed: int) -> None:
    text = article(seed)
    assert hamming(simhash(text), simhash(text)) == 0
    # case and punctuation are not part of the words
    assert simhash(text) == simhash(text.upper().replace(" ", " , "))


@given(st.integers(0, 10_000), st.integers(0, 399))
@settings(max_examples=60, deadline=None)
def test_one_word_changed_moves_few_bits(seed: int, at: int) -> None:
    words = article(seed).split()
    edited = list(words)
    edited[at] = "zebra"
    assert hamming(simhash(" ".join(words)), simhash(" ".join(edited))) <= 10


def test_unrelated_texts_are_far_apart() -> None:
    distances = [hamming(simhash(article(a)), simhash(article(a + 1000))) for a in range(30)]
    assert min(distances) > 10
    assert 24 <= sum(distances) / len(distances) <= 40  # about half the bits


def test_edits_grow_the_distance() -> None:
    words = article(7, 2000).split()
    rng = random.Random(3)
    few, many = list(words), list(words)
    for i in rng.sample(range(len(words)), 10):
        few[i] = "zebra"
    for i in rng.sample(range(len(words)), 600):
        many[i] = f"w{i}"
    base = simhash(" ".join(words))
    near, far = hamming(base, simhash(" ".join(few))), hamming(base, simhash(" ".join(many)))
    assert near <= 8 < 12 < far


def test_short_text_has_no_fingerprint_and_hex_round_trip() -> None:
    assert simhash(" ".join(["word"] * (MIN_WORDS - 1))) == NO_SIMHASH
    value = simhash(article(1))
    assert value != NO_SIMHASH
    assert from_hex(to_hex(value)) == value
    assert len(to_hex(value)) == 16
    assert from_hex("not hex at all!!") == NO_SIMHASH
    assert from_hex(None) == NO_SIMHASH
