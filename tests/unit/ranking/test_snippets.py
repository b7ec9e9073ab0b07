"""Snippets: query-biased windows, highlighting of inflections, escaping, NOSNIPPET, titles."""

from __future__ import annotations

from ranking.core.options import SearchOptions
from ranking.core.snippets import snippet, snippet_text, title_html

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
