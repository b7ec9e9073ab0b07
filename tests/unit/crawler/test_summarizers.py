from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.core.processing.errors import ConfigError
from crawler.core.processing.summarizers import (
    TextBlock,
    get_summarizer,
    normalize_weights,
    split_sentences,
)

NAMES = ["basic", "centroid", "centroid_weighted", "graph"]
BLOCKS = [
    TextBlock("Python is a language. Python runs on many systems.", "meta", 0),
    TextBlock("Python tutorial", "h1", 60),
    TextBlock("Python lets you work quickly and integrate systems. Cats sleep a lot. "
              "The interpreter is easy to extend with new modules.", "p", 80),
    TextBlock("Python code is readable.", "li", 300),
]


@pytest.mark.parametrize("name", NAMES)
def test_summaries_fit_keep_document_order_and_positive_weights(name):
    for limit in (30, 80, 2000):
        chosen = get_summarizer(name).summarize(BLOCKS, "en", limit)
        assert chosen
        assert len(" ".join(s.text for s in chosen)) <= limit
        assert all(s.weight > 0 for s in chosen)
        order = [next(i for i, s in enumerate(split_sentences(BLOCKS)) if s.text == c.text)
                 for c in chosen]
        assert order == sorted(order)


def test_basic_prefers_meta_description_and_headings():
    chosen = get_summarizer("basic").summarize(BLOCKS, "en", 60)
    assert chosen[0].text == "Python is a language."


def test_centroid_weighted_picks_diverse_sentences():
    chosen = get_summarizer("centroid_weighted").summarize(BLOCKS, "en", 2000)
    assert len(chosen) == len(split_sentences(BLOCKS))


def test_weights_are_normalised_to_mean_one():
    weights = normalize_weights([1.0, 3.0, 0.0])
    assert abs(sum(weights) / 3 - 1.0) < 0.01 and min(weights) > 0
    assert normalize_weights([0.0, float("nan")]) == [1.0, 1.0]


def test_unknown_summarizer():
    with pytest.raises(ConfigError):
        get_summarizer("nope")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(max_size=200), max_size=12), limit=st.integers(1, 500))
def test_summarizers_never_raise(name, texts, limit):
    blocks = [TextBlock(t, "p", i * 10) for i, t in enumerate(texts)]
    chosen = get_summarizer(name).summarize(blocks, "en", limit)
    assert len(" ".join(s.text for s in chosen)) <= limit
