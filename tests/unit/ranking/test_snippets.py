"""Snippets: query-biased windows, highlighting of inflections, escaping, NOSNIPPET, titles."""

from __future__ import annotations

import random
import re

from ranking.core.display.debris import collapse_repeats
from ranking.core.display.snippets import (
    _spans,
    body_windows,
    has_match,
    query_words,
    snippet,
    snippet_text,
    title_html,
)
from ranking.core.options import SearchOptions

OPTS = SearchOptions()


def test_script_is_shown_as_text():
    html = snippet("Use <script>alert(1)</script> tags & more", ["script"], OPTS)
    assert "<script>" not in html
    assert "&lt;<b>script</b>&gt;alert(1)&lt;/<b>script</b>&gt;" in html
    assert "&amp;" in html


def test_stem_highlights_inflections():
    html = snippet("The measures were measured by measuring.", ["measur"], OPTS)
    assert html.count("<b>") == 3
    assert "<b>measures</b>" in html and "<b>measuring</b>" in html


def test_windows_around_matches_within_length():
    text = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 5
            + "The threading module constructs higher-level threading interfaces. "
            + "Sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. " * 5)
    plain = snippet_text(text, ["thread"], OPTS)
    assert "threading module" in plain
    assert len(plain) <= OPTS.description_length
    assert not plain.startswith("Lorem")


def test_short_source_taken_whole_and_group_sources():
    plain = snippet_text("Short page text about dogs .. link text dogs", ["dog"], OPTS)
    assert plain == "Short page text about dogs ... link text dogs"


def test_no_match_gives_start_of_text():
    assert snippet_text("alpha beta gamma", ["zeta"], OPTS) == "alpha beta gamma"


def test_nosnippet():
    assert snippet("secret words", ["secret"], OPTS, robot_metas=["NOSNIPPET"]) == ""


def test_title_fallbacks_and_escaping():
    assert title_html("", "A description that is long enough", "https://x/", []) == \
        "A description that i\u2026"
    assert title_html("", "", "https://x/?a=1&b=2", []) == "https://x/?a=1&amp;b=2"
    assert title_html("<b>Dogs</b> page", "", "u", ["dog"]) == \
        "&lt;b&gt;<b>Dogs</b>&lt;/b&gt; page"


# -- markup debris, repeats, body windows (issue 16, item 6) -------------------------------

SPHINX = ("Navigation index modules | next | previous | Flask Documentation (2.2.x) » "
          "Quickstart Quickstart\u00b6 Eager to get started? This page gives a good introduction "
          "to Flask. Previous topic Installation Next topic Tutorial This Page Show Source "
          "Quick search A Minimal Application\u00b6 A minimal Flask application looks like this.")


def test_no_pilcrows_navigation_or_breadcrumbs():
    for words in (["quickstart"], ["minim"], ["flask"], ["zzz"]):
        plain = snippet_text(SPHINX, words, OPTS)
        for debris in ("\u00b6", "index modules", "| next", "Previous topic", "Next topic",
                       "This Page", "Show Source", "Quick search", "Navigation", "\u00bb"):
            assert debris not in plain, (words, debris, plain)
    assert "This page gives" in snippet_text(SPHINX, ["eager"], OPTS)  # real text is kept


def test_no_repeated_fragments():
    plain = snippet_text(SPHINX, ["quickstart"], OPTS)
    assert "Quickstart Quickstart" not in plain and plain.count("Quickstart") == 1
    text = ("The threading module. " + "Lorem ipsum dolor sit amet consectetur. " * 4) * 3
    plain = snippet_text(text, ["thread"], OPTS)
    assert plain.count("The threading module") == 1


def test_a_query_word_inside_navigation_is_still_shown():
    plain = snippet_text("Navigation Previous topic Concurrent Execution " + "x " * 80,
                         ["navigat"], OPTS)
    assert "Navigation" in plain


def test_body_windows_read_only_what_they_need():
    read = []

    def chunks():
        for i in range(1000):
            read.append(i)
            yield ("Lorem ipsum dolor sit amet. " * 40) if i != 3 else \
                "Set the SECRET_KEY to sign session cookies. " * 5

    plain = body_windows(chunks(), ["secret_key"], OPTS)
    assert "SECRET_KEY" in plain and len(plain) <= OPTS.description_length
    assert len(read) < 10  # the rest of the text is never produced
    assert body_windows(iter(["no match here " * 100]), ["zebra"], OPTS) == ""


def test_excerpt_stands_in_when_the_description_lacks_the_words():
    html = snippet("A minimal Flask application.", ["url_for"], OPTS,
                   excerpt="Call url_for with the endpoint")
    assert "<b>url_for</b>" in html
    kept = snippet("The url_for function.", ["url_for"], OPTS, excerpt="other url_for text")
    assert kept == "The <b>url_for</b> function."


# -- the fast paths keep the behaviour (issue 16: snippets over whole pages) ---------------

_REPEAT_ORACLE = re.compile(r"(?<!\w)((?:\w[\w.()'-]*\s+){0,7}\w[\w.()'-]*)\s+\1(?!\w)")


def test_collapse_repeats_is_the_repeat_pattern():
    rng = random.Random(5)
    vocab = ["a", "the", "Quick", "quick", "start", "os.path", "foo()", "x-y", "it's", "\u00b6",
             "\u00bb", ",", "(a)", "A", "b.c", "caf\u00e9"]
    for _ in range(5000):
        text = (" " * rng.randint(1, 2)).join(rng.choice(vocab)
                                               for _ in range(rng.randint(1, 14)))
        assert collapse_repeats(text) == _REPEAT_ORACLE.sub(r"\1", text), text
    assert collapse_repeats("Quickstart Quickstart\u00b6 Eager") == "Quickstart\u00b6 Eager"


def test_scan_words_cover_every_needle():
    query = query_words(["strings", "string", "query", "queri", "documentation", "document"])
    assert query.scan == ("document", "string", "quer")
    assert query.runs == (len("documentation") + 3, len("strings") + 3, len("query") + 3)
    assert has_match("A Substring and QUERIES.", query_words(["queri"]))
    assert not has_match("the host posted most costs", query_words(["os"]))
    assert has_match("the host uses os.sep", query_words(["os"]))


def test_matches_in_non_ascii_text_and_folded_letters():
    text = "\u00dcber caf\u00e9s \u2014 " * 20 + "the zebra grazes " + "na\u00efve " * 20
    assert "<b>zebra</b> grazes" in snippet(text, ["zebra"], OPTS)
    assert "<b>\u212aelvin</b>" in snippet("in \u212aelvin", ["kelvin"], OPTS)


def test_dense_matches_make_windows_of_a_snippet_length():
    text = "dog " * 300
    pattern = query_words(["dog"]).pattern
    assert all(end - start <= 150 + 40 for start, end in _spans(text, pattern, 20, 40, 150))
    assert len(snippet_text(text, ["dog"], OPTS)) <= OPTS.description_length


def test_an_excerpt_stands_in_as_it_is():
    excerpt = ("Call url_for with the endpoint name and the arguments to build a link to the "
               "view function, which Flask resolves")  # longer than one window
    assert snippet_text("A minimal Flask application.", ["url_for"], OPTS,
                        excerpt=excerpt) == excerpt
