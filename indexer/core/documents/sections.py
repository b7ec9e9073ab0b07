"""The ``sections`` field of a page's stored summary: the anchors and headings of its headed
sections, so that a result can link to the section that matched (issue 36).

Layer: ``indexer.core``, below both sides: the sections plugin
(``crawler.core.processing.plugins.sections``) writes it among the page's ``fields`` (a plugin
field is a string), the search (``ranking.core.display.sections``) reads it from the summary of
a result it shows. One section a line, its anchor (no white space) then a tab then its
heading (white space collapsed), in page order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FIELD = "sections"
MAX_SECTIONS = 300
MAX_HEADING_CHARS = 200


def encode_sections(sections: Sequence[tuple[str, str]]) -> str:
    """The field's text of (anchor, heading) pairs: those with an anchor without white space
    and a heading, at most :data:`MAX_SECTIONS`, headings cut to :data:`MAX_HEADING_CHARS`."""
    lines = []
    for anchor, heading in sections:
        text = " ".join(heading.split())[:MAX_HEADING_CHARS]
        if anchor and text and len(anchor.split()) == 1 and anchor == anchor.strip():
            lines.append(f"{anchor}\t{text}")
            if len(lines) >= MAX_SECTIONS:
                break
    return "\n".join(lines)


def decode_sections(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (anchor, heading) pairs a stored summary's ``fields`` hold (none when it has no
    such field, or the field is not text)."""
    fields = summary.get("fields")
    text = fields.get(FIELD) if isinstance(fields, Mapping) else None
    if not isinstance(text, str):
        return []
    out = []
    for line in text.split("\n"):
        anchor, tab, heading = line.partition("\t")
        if tab and anchor and heading:
            out.append((anchor, heading))
    return out


__all__ = ["FIELD", "MAX_SECTIONS", "decode_sections", "encode_sections"]
