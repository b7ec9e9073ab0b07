"""The page language test leaves out one-character words: the same sample whether they are
removed by a regular expression (white space kept) or by splitting and joining."""

from __future__ import annotations

import random
import re

from indexer.core.text import language
from indexer.core.text.language import SAMPLE_CHARS, sure_text_language, text_scores

ALPHABET = "ab c\t\n\x1c\xa0\u2003é中 . x"
# a word of one character (``\s`` is what ``str.split`` cuts at): removed, white space kept
SINGLE_CHARACTER = re.compile(r"(?<!\S)\S(?!\S)")


def test_removal_matches_split_and_join() -> None:
    rng = random.Random(3)
    for _ in range(5000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
        assert " ".join(SINGLE_CHARACTER.sub("", text).split()) == \
            " ".join(w for w in text.split() if len(w) > 1), repr(text)


def test_the_sample_is_the_one_the_regular_expression_leaves(monkeypatch) -> None:
    """What _scores reads is what removing the single characters by the regular expression
    gave it (for a text up to twice the sample; longer ones were always split)."""
    seen: list[str] = []
    original = language._scores
    monkeypatch.setattr(language, "_scores", lambda text: seen.append(text) or original(text))
    rng = random.Random(5)
    for _ in range(300):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 200)))
        sure_text_language(text)
        sample = " ".join(seen[-1][: SAMPLE_CHARS * 2].split())[:SAMPLE_CHARS]
        expected = SINGLE_CHARACTER.sub("", text)
        assert sample == " ".join(expected[: SAMPLE_CHARS * 2].split())[:SAMPLE_CHARS]


def test_same_answer_as_before() -> None:
    texts = ["a b c the of and to in is it that for", "le de la et les des en un une du est",
             "x " * 30 + "der die und in den von zu das mit sich",
             "the cat " * (SAMPLE_CHARS // 4)]  # longer than the sample
    for text in texts:
        kept = " ".join(w for w in text.split() if len(w) > 1)
        scores = text_scores(kept)
        best = max(scores.items(), key=lambda item: (item[1], item[0] != "en"))[0]
        assert sure_text_language(text) in (best, "en", None)
        assert sure_text_language(text) == sure_text_language(kept)
