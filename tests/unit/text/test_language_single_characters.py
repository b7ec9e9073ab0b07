"""The page language test leaves out one-character words exactly as splitting and joining did."""

from __future__ import annotations

import random

from indexer.core.text.language import (
    _SINGLE_CHARACTER,
    SAMPLE_CHARS,
    sure_text_language,
    text_scores,
)

ALPHABET = "ab c\t\n\x1c\xa0\u2003é中 . x"


def test_removal_matches_split_and_join() -> None:
    rng = random.Random(3)
    for _ in range(5000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
        assert " ".join(_SINGLE_CHARACTER.sub("", text).split()) == \
            " ".join(w for w in text.split() if len(w) > 1), repr(text)


def test_same_answer_as_before() -> None:
    texts = ["a b c the of and to in is it that for", "le de la et les des en un une du est",
             "x " * 30 + "der die und in den von zu das mit sich",
             "the cat " * (SAMPLE_CHARS // 4)]  # longer than the sample: the old path
    for text in texts:
        kept = " ".join(w for w in text.split() if len(w) > 1)
        scores = text_scores(kept)
        best = max(scores.items(), key=lambda item: (item[1], item[0] != "en"))[0]
        assert sure_text_language(text) in (best, "en", None)
        assert sure_text_language(text) == sure_text_language(kept)
