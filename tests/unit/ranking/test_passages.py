"""Passages and packing (ranking.core.display.passages, issue 38): each passage is exactly a
slice of its text; scores and packing by hand."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.core.display.passages import (
    OVERHEAD,
    Candidate,
    Passage,
    best_passages,
    estimate_tokens,
    matches,
    pack,
    units,
)
from ranking.core.display.snippets import highlight_pattern, query_words

TEXT = ("# Queues\n\nA queue holds tasks.  Queues are durable.\n\n"
        "## Priorities\n\nEach queue has ten priority levels.\n\n"
        "Nothing here.\n\n  \n\nQueue queue queue queue queue queue queue.")


def test_units_are_paragraphs_without_their_outer_space():
    spans = units(TEXT)
    assert [TEXT[a:b] for a, b in spans] == [
        "# Queues", "A queue holds tasks.  Queues are durable.", "## Priorities",
        "Each queue has ten priority levels.", "Nothing here.",
        "Queue queue queue queue queue queue queue."]


def test_a_long_paragraph_is_cut_after_sentences_or_at_spaces():
    text = "Alpha beta gamma. " * 20 + "x" * 30
    spans = units(text, max_chars=100)
    assert all(b - a <= 100 for a, b in spans)
    assert TEXT and text[spans[0][0]:spans[0][1]].endswith("gamma.")
    glued = "y" * 250
    assert units(glued, max_chars=100) == [(0, 100), (100, 200), (200, 250)]


def test_scores_by_hand_and_sections():
    pattern = highlight_pattern(["queue", "prior"])
    heads = [(0, "Queues"), (TEXT.index("## Priorities"), "Priorities")]
    found = best_passages(TEXT, pattern, 5, heads)
    assert [(p.text, p.score, p.section) for p in found] == [
        # "queue" and "Queues" (a word may run on 3 characters): 2 distinct; its section's
        # heading "Queues" matches too: + 0.25
        ("A queue holds tasks.  Queues are durable.", 2.25, "Queues"),
        # queue + prior(ity): 2; "Priorities" runs on 5 characters, so no heading bonus
        ("Each queue has ten priority levels.", 2.0, "Priorities"),
        # one word and 6 more occurrences: 1 + min(0.5, 6 x 0.1)
        ("Queue queue queue queue queue queue queue.", 1.5, "Priorities"),
    ]
    for p in found:
        assert TEXT[p.start:p.end] == p.text


def test_headings_and_unmatched_units_are_never_passages():
    found = best_passages(TEXT, highlight_pattern(["nothing", "queues"]), 10)
    texts = [p.text for p in found]
    assert "# Queues" not in texts and "Nothing here." in texts
    assert best_passages(TEXT, None, 3) == [] and best_passages("", highlight_pattern(["a"]), 3) \
        == [] and best_passages(TEXT, highlight_pattern(["queue"]), 0) == []


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab cé🐝队\n\t.")), max_size=400),
       st.integers(min_value=5, max_value=120))
def test_every_passage_is_a_slice_of_its_text(text, max_chars):
    for p in best_passages(text, highlight_pattern(["ab", "cé", "队"]), 50,
                           max_chars=max_chars):
        assert text[p.start:p.end] == p.text and p.text == p.text.strip() and p.text


def _cand(url, score, length, rank=0, start=0):
    return Candidate(url, Passage(start, start + length, "x" * length, score), url, rank)


def test_pack_takes_the_best_that_fit_at_most_per_url():
    cost = estimate_tokens("x" * 40)
    assert cost == 10 + OVERHEAD
    offered = [_cand("a", 3.0, 40), _cand("a", 2.5, 40, start=50), _cand("a", 2.0, 40, start=99),
               _cand("b", 2.8, 4000), _cand("c", 1.0, 40)]
    kept, used = pack(offered, 3 * cost, per_url=2)
    # b's passage costs 1024 tokens and is passed over; a's third passage is over per_url
    assert [(c.url, c.passage.score) for c in kept] == [("a", 3.0), ("a", 2.5), ("c", 1.0)]
    assert used == 3 * cost
    assert pack(offered, cost - 1, per_url=2) == ([], 0)


def test_pack_ties_go_to_the_better_ranked_result_then_text_order():
    kept, _ = pack([_cand("b", 1.0, 4, rank=1), _cand("a", 1.0, 4, rank=0, start=9),
                    _cand("a", 1.0, 4, rank=0, start=1)], 10_000, per_url=5)
    assert [(c.url, c.passage.start) for c in kept] == [("a", 1), ("a", 9), ("b", 0)]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("QuEeuesab _-.é\n")), max_size=300))
def test_literal_scans_find_the_patterns_matches(text):
    """The scan of the lower-cased text (``matches``) finds what ``finditer`` finds."""
    query = query_words(["queue", "ab", "qu"])
    expected = [m.span() for m in query.pattern.finditer(text)]
    found = [m.span() for m in matches(text, query.pattern, query.scan, text.lower())]
    assert found == expected
    assert [m.span() for m in matches(text, query.pattern, None, None)] == expected
