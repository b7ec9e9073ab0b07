"""Sections as answers: the anchors and headings of a page's headed sections, so that a result
links to the section that matched, grouped under its page (issue 36, item 2).

Layer: ``crawler.core.processing.plugins`` (an indexing plugin, see the package docstring). The
answer to a concept query ("replication slot", "table of contents", "transaction isolation")
is often one section of a long manual page; documentation search engines link such a result to
its section (Algolia DocSearch's records per heading, Sphinx's own search). The plugin stores
each ``h2`` to ``h6`` heading that has an anchor, with that anchor, in the page's ``sections``
field (:mod:`indexer.core.documents.sections`); the search shows, under a page's result, links
``<page url>#<anchor>`` to the sections whose headings hold the query's words
(``ranking.core.display.sections``).

The sections do not change the ranking. Made documents of their own (sub-documents at
``page#anchor``, ranked on their own length) they lowered MRR@10 on the dev judgments (as is
0.897 to 0.884, index pages hidden 0.868 to 0.846: short sections of other pages pushed the
answer down), and filed as records of their page (a heading scored like anchor text) they
measured 0.8980 against 0.9036 as is and 0.8698 against 0.8727 hidden; what a heading says
about its page counts through the ``topic:`` keys instead (:mod:`.topics`).

The anchor of a heading, in the markup the manuals use (one pass of regular expressions over
the markup, no second parse), the first found of:

* the heading's own ``id`` (asciidoc: git's manuals);
* Sphinx's permalink inside it, ``<a class="headerlink" href="#set-types-set-frozenset">``;
* an empty anchor inside it, ``<a id="_the_shell_prompt"/>`` (DocBook: the Debian Reference);
* the ``id`` of the ``div``/``section`` that opens right before it with only tags between
  (DocBook: PostgreSQL's ``<div class="sect2" id="LOGICALDECODING-REPLICATION-SLOTS"><div
  class="titlepage"><div><div><h3>``; Sphinx 5's ``<section id=...>``).

``h1`` (the page's own title) and headings without an anchor (a sidebar's "Table of
Contents", which links elsewhere) are not sections; nor is a heading without words. A page
with fewer than :data:`MIN_SECTIONS` sections is its own answer and stores none.
"""

from __future__ import annotations

import html
import re

from crawler.core.processing.plugins import PluginOutput, PluginPage
from indexer.core.documents.sections import FIELD, MAX_HEADING_CHARS, MAX_SECTIONS, encode_sections

HTML_TYPES = ("text/html", "application/xhtml+xml")
MIN_SECTIONS = 2     # a page with fewer headed sections is its own answer

_HEADING = re.compile(rb"<h([2-6])\b([^>]{0,300})>(.{0,3000}?)</h\1\s*>", re.IGNORECASE | re.DOTALL)
_OWN_ID = re.compile(rb"""\bid\s*=\s*["']([^"'<>\s]{1,150})["']""", re.IGNORECASE)
# Sphinx's permalink (not its "toc-backref" link, which points back at the table of contents)
_PERMALINK = re.compile(rb"""<a\b[^>]{0,200}?\bclass\s*=\s*["']headerlink["'][^>]{0,200}?"""
                        rb"""\bhref\s*=\s*["']#([^"'<>\s]{1,150})["']""", re.IGNORECASE)
_INNER_ANCHOR = re.compile(rb"""<a\b[^>]{0,100}?\b(?:id|name)\s*=\s*["']([^"'<>\s]{1,150})["']""",
                           re.IGNORECASE)
# the id of the div/section opening just before the heading, only tags between
_OPENER = re.compile(rb"""<(?:div|section)\b[^>]{0,200}?\bid\s*=\s*["']([^"'<>\s]{1,150})["']"""
                     rb"""[^>]{0,200}>(?:\s*<[^>]{0,200}>)*\s*\Z""", re.IGNORECASE)
_LOOK_BACK = 600
_TAG = re.compile(r"<[^>]*>")
_NUMBERING = re.compile(r"^(?:[A-Z]?\d+(?:\.\d+)*\.?|[A-Z]\.\d+(?:\.\d+)*\.?|[IVX]+\.)\s+")
_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,150}$")


def _text(markup: bytes) -> str:
    """The words of a piece of markup: tags out, entities decoded, spaces collapsed."""
    text = _TAG.sub(" ", markup.decode("utf-8", "replace"))
    return " ".join(html.unescape(text).replace("\u00b6", " ").split())


def _anchor(markup: bytes, attributes: bytes, inner: bytes, start: int) -> str | None:
    """The anchor of the heading whose attributes, inner markup and start are given."""
    # tried in turn, the look-back (the costliest) last: only for a heading with no anchor of
    # its own (DocBook's)
    for find in (lambda: _OWN_ID.search(attributes), lambda: _PERMALINK.search(inner),
                 lambda: _INNER_ANCHOR.search(inner),
                 lambda: _OPENER.search(markup, max(0, start - _LOOK_BACK), start)):
        found = find()
        if found:
            key = html.unescape(found.group(1).decode("utf-8", "replace"))
            return key if _KEY.match(key) else None
    return None


def page_sections(markup: bytes) -> list[tuple[str, str]]:
    """The (anchor, heading) of every headed section of ``markup`` (see the module docstring),
    each anchor once, section numbers left out of the headings; empty for a page with fewer
    than :data:`MIN_SECTIONS`."""
    sections: list[tuple[str, str]] = []
    seen: set[str] = set()
    for match in _HEADING.finditer(markup):
        key = _anchor(markup, match.group(2), match.group(3), match.start())
        if key is None or key in seen:
            continue
        title = _NUMBERING.sub("", _text(match.group(3)))[:MAX_HEADING_CHARS]
        if not title:
            continue
        seen.add(key)
        sections.append((key, title))
        if len(sections) >= MAX_SECTIONS:
            break
    return sections if len(sections) >= MIN_SECTIONS else []


class SectionsPlugin:
    """The indexing plugin (``crawler.core.processing.plugins.sections.SectionsPlugin``)."""

    name = "section"

    def process(self, page: PluginPage) -> PluginOutput | None:
        """The ``sections`` field of an indexable HTML page; None for other pages and pages
        with too few sections."""
        if page.page.mime_type not in HTML_TYPES or not page.page.indexable:
            return None
        sections = page_sections(page.body)
        return PluginOutput(fields={FIELD: encode_sections(sections)}) if sections else None
