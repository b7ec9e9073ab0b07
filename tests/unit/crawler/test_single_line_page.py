"""Issue 18: the first byte range of a page is indexed whatever its shape. A 5 MB page written
as one single line of unclosed elements (minified markup that never closes its ``div`` or
``font``) passed libxml2's depth limit of 256 open elements: the parser stopped there and the
rest of the range was lost."""

from __future__ import annotations

import pytest

from crawler.core.processing.config import PAGE_RANGE_REQUEST

from .helpers import html

HEAD = "<!DOCTYPE html><html><head><title>Huge Single Line Page</title></head><body>"


def _single_line(unit: str, marker_at: int) -> str:
    """About 5 MB on one line, with ``zyxmarker`` written once, ``marker_at`` bytes in."""
    before = unit * (marker_at // len(unit))
    after = unit * ((5_100_000 - marker_at) // len(unit))
    page = HEAD + before + "zyxmarker closing words " + after + "</body></html>"
    assert "\n" not in page and len(page) > 5_000_000
    return page


@pytest.mark.parametrize("unit", [
    "<div>alpha beta ",                # unclosed blocks
    "<font color=red>gamma delta ",    # unclosed inline elements
    "<h2>epsilon <b>zeta ",            # headings and bold, never closed
    "<p>" + "eta theta " * 50,          # the ordinary shape keeps working
])
def test_five_megabyte_single_line_page_keeps_its_first_byte_range(unit):
    marker_at = PAGE_RANGE_REQUEST * 9 // 10  # within the byte range, far past depth 256
    page = html(_single_line(unit, marker_at))
    assert page.title == "Huge Single Line Page"
    assert page.truncated and not page.errors
    assert any(term.startswith("zyxmark") for term in page.terms)
    assert page.length > 50_000  # the range's text, not the first 256 elements'
