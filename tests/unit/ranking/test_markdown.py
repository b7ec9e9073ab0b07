"""A cached page as the agent API's Markdown (ranking.core.display.markdown, issue 38)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.core.display.markdown import (
    heading_at,
    headings,
    html_markdown,
    page_markdown,
    section_span,
)

PAGE = """<!DOCTYPE html><html><head><title>T</title><style>p{}</style>
<script>var x = "<p>not text</p>";</script></head><body>
<nav><a href="/">Home</a></nav><div class="sphinxsidebar">Quick search</div>
<div role="navigation">Previous | Next</div>
<h1>Threading <a class="headerlink" href="#t">¶</a></h1>
<p>The <code>threading</code>   module
builds &lt;higher-level&gt; interfaces &amp; more.</p>
<ul><li>one</li><li><p>two <b>bold</b></p></li></ul>
<h2 title="a > b">Lock objects</h2>
<pre>lock = Lock()
    lock.acquire()</pre>
<p>A <img src="x.png" alt="diagram &amp; key"> lock. <!-- hidden --></p>
<h3></h3>
<footer>© 2024</footer></body></html>"""

EXPECTED = """# Threading

The `threading` module builds <higher-level> interfaces & more.

- one
- two bold

## Lock objects

```
lock = Lock()
    lock.acquire()
```

A [diagram & key] lock."""


def test_blocks_headings_lists_code_and_no_furniture():
    assert html_markdown(PAGE) == EXPECTED


def test_a_page_that_is_all_furniture_is_read_without_leaving_it_out():
    assert html_markdown("<nav><p>only a menu</p></nav>") == "only a menu"
    assert html_markdown("") == "" and html_markdown("<html></html>") == ""


def test_plain_text_is_kept_with_its_line_breaks():
    assert page_markdown("# Title\r\n\r\n- a\r- b\n\n", False) == "# Title\n\n- a\n- b"


def test_markers_or_entities_in_the_page_cannot_forge_structure():
    text = html_markdown("<p>\ue0000 &#xe000;0 \ue001 &#xe001;x</p><pre>c</pre>")
    assert text.endswith("```\nc\n```") and text.count("```") == 2


def test_sections_and_the_heading_of_an_offset():
    found = headings(EXPECTED)
    assert [(h.level, h.title) for h in found] == [(1, "Threading"), (2, "Lock objects")]
    start, end = section_span(EXPECTED, "lock OBJECTS")
    assert EXPECTED[start:end].startswith("## Lock objects") and end == len(EXPECTED)
    assert section_span(EXPECTED, "threading") == (0, len(EXPECTED))  # h1 holds the h2
    assert section_span(EXPECTED, "lock") == (start, end)  # a part of a title
    assert section_span(EXPECTED, "nothing like it") is None
    assert section_span(EXPECTED, "  ") is None
    assert heading_at(found, start + 20) == "Lock objects" and heading_at(found, 0) == \
        "Threading"


def test_a_heading_inside_a_code_block_is_not_a_section():
    text = "# Real\n\n```\n# comment\n```"
    assert [h.title for h in headings(text)] == ["Real"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/&;#\"'= abcpreliolh1!-\n\ue000")),
               max_size=200))
def test_any_markup_gives_text_without_raising(markup):
    text = html_markdown(markup)
    assert isinstance(text, str) and "\ue001" not in text and "\ue002" not in text
